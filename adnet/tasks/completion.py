"""Completing a CTA task: verify the proof, hold the limits, reserve the reward and sign its claim, all or nothing.

The order is what makes it safe:

1. the task must be live, its campaign may pay on the site the completion names (``adnet.campaigns.eligibility``,
   the rule serving applies: the site active and verified, the campaign's ``siteAllow``/``siteDeny``, the site
   owner's blocks and whether it takes attached tasks of this kind), and the proof must carry exactly its verifier's
   keys;
2. a wallet or fingerprint already at its limit gets Conflict ``already_completed`` with its earlier completion and
   claim, before its proof is looked at again;
3. the verifier checks the proof (reading the chain for ONCHAIN_EVENT; Unavailable with nothing written when the
   chain is down);
4. one database transaction uses up what the proof consumed (a nonce, a visit), reserves the G$ reward with its
   signed claim (``adnet.money.rewards.reserve_and_claim``: the task's pool, else its campaign's budget, else points
   only) and inserts the completion into the next free wallet slot and fingerprint slot. In the app that
   transaction is shared with the completions of the same few milliseconds (``CompletionWriter``).

The slots are unique keys (``Completion``): the n-th completion of a wallet takes slot n and no slot exists at the
limit, so any number of identical requests at once make exactly one completion; the losers' inserts fail and they
are answered like any repeat. ``Completion.tx_hash`` is unique too, so a transaction counts once across all tasks.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from tortoise.exceptions import IntegrityError
from tortoise.expressions import Q
from tortoise.transactions import in_transaction

from adnet.campaigns import eligibility
from adnet.campaigns.eligibility import refuse_unless_allowed
from adnet.chain.client import ChainClient
from adnet.core.errors import Conflict, DomainError, Invalid, NotFound
from adnet.core.ids import has_prefix, new_id
from adnet.db import sql
from adnet.db.group_commit import GroupCommitter
from adnet.db.outage import is_outage
from adnet.money import ledger
from adnet.money.models import Claim, ClaimPurpose
from adnet.money.rewards import Reward, reserve_and_claim, reserve_and_claim_many
from adnet.tasks.commands import CompleteTask, CompletionsQuery
from adnet.tasks.config import PROOF_KEYS
from adnet.tasks.lookup import TASK_COLUMNS, TASK_TABLES, live_from_row
from adnet.tasks.models import Completion, Task, TaskSurface
from adnet.tasks.verifiers import VERIFIERS, Attempt, Verified
from adnet.tasks.verifiers.onchain_event import tx_already_used

log = logging.getLogger(__name__)

# Tries at a free slot when concurrent completions of one wallet race for slots below a limit above one.
MAX_SLOT_RACES = 5
# Completions written in one transaction at most (each of them takes a few statements in it).
WRITER_BATCH = 64
STATUS_LIMIT = 200
# The columns the completion's first read adds to the task's (``_task_and_previous``).
_READ_WITH_TASK = ("previous_id", "previous_wallet", "previous_fingerprint", "previous_claim_id")


@dataclass(frozen=True)
class CompletionResult:
    """A recorded completion and the claim paying its G$ (None: points only)."""

    completion: Completion
    claim: Claim | None


@dataclass(frozen=True)
class _Previous:
    """A completion of the task by this wallet or this fingerprint."""

    id: str
    wallet: str
    fingerprint: str
    claim_id: str | None


async def complete_task(request: CompleteTask, *, now: datetime, chain: ChainClient,
                        writer: CompletionWriter | None = None) -> CompletionResult:
    """Record a verified completion of a task by a wallet on a device and pay its reward.

    With a running ``writer`` (the app's) the completion's transaction is shared with the completions arriving at
    the same time; without one it has its own.

    Refused: Invalid (``invalid_proof`` naming the missing or extra proof
    keys or the failed check, ``wrong_answer``, ``invalid_tx_hash``), Unauthorized ``invalid_signature``, NotFound
    (task, site, transaction), Conflict (``already_completed`` with ``completionId`` and ``transaction``,
    ``task_inactive``, ``task_not_started``, ``task_ended``, ``not_allowed_on_site``, ``too_many_attempts``,
    ``tx_already_used``, ``not_confirmed``), Unavailable ``chain_unavailable``."""
    wallet, fingerprint, proof, site_id = request.wallet, request.fingerprint, request.proof, request.site_id
    task, config, previous = await _task_and_previous(request.task_id, wallet, fingerprint, site_id, now)
    _check_proof_keys(task, proof)
    await _refuse_repeat(task, wallet, fingerprint, previous)
    attempt = Attempt(task=task, config=config, wallet=wallet, fingerprint=fingerprint,
                      proof=proof, now=now, chain=chain)
    try:
        verified = await VERIFIERS[task.kind].verify(attempt)
    except DomainError as refusal:
        # A concurrent completion may have used the proof up (a visit, a nonce) and committed: that is a repeat.
        await _refuse_repeat(task, wallet, fingerprint, await _previous(task, wallet, fingerprint))
        log.info("task proof refused task=%s wallet=%s code=%s reason=%s", task.id, wallet, refusal.code,
                 refusal.details.get("reason", ""))
        raise
    for _ in range(MAX_SLOT_RACES):
        try:
            result = await _record(_Pending(task, wallet, fingerprint, site_id, verified, tuple(previous), now, chain),
                                   writer)
        except DomainError:
            await _refuse_repeat(task, wallet, fingerprint, await _previous(task, wallet, fingerprint))
            raise
        except IntegrityError:
            # A concurrent completion took a slot (or the transaction) first: answer as a repeat, or retry the
            # next free slot when the limit allows more.
            previous = await _previous(task, wallet, fingerprint)
            await _refuse_repeat(task, wallet, fingerprint, previous)
            if verified.tx_hash is not None and await Completion.exists(tx_hash=verified.tx_hash):
                raise tx_already_used() from None
            continue
        log.info("task completed task=%s completion=%s wallet=%s gs=%d claim=%s", task.id, result.completion.id,
                 wallet, int(result.completion.gs_amount), result.claim.claim_ref if result.claim else "-")
        return result
    raise Conflict("completion_contended", "Other completions of this task by this wallet are in progress; retry.")


def reward_sources(task: Task) -> list[ledger.AccountKey]:
    """Where a task's G$ reward may come from, in order: its own pool, then its campaign's budget."""
    sources = [ledger.task_pool(task.id)]
    if task.campaign_id is not None:
        sources.append(ledger.campaign(task.campaign_id))
    return sources


@dataclass(frozen=True)
class ViewerCompletion:
    """A completion as the viewer's client sees it: which task, when, what it earned, and its claim's state."""

    task_id: str
    campaign_id: str | None
    kind: str
    completion_id: str
    completed_at: datetime
    points: int
    gs: int
    claim_status: str | None
    claim_ref: str | None


async def viewer_completions(query: CompletionsQuery) -> list[ViewerCompletion]:
    """What the SDK shows as done: the completions of a wallet or a device (either matches, as the limits apply to
    both), newest first, optionally of one campaign's tasks. Nothing of a task's configuration is included."""
    match = Q()
    if query.wallet:
        match |= Q(wallet=query.wallet)
    if query.fingerprint:
        match |= Q(fingerprint=query.fingerprint)
    found = Completion.filter(match)
    if query.campaign_id:
        found = found.filter(task__campaign_id=query.campaign_id)
    rows = await found.order_by("-created_at").limit(STATUS_LIMIT).values(
        "id", "task_id", "task__campaign_id", "task__kind", "created_at", "points", "gs_amount", "claim__status",
        "claim__claim_ref")
    return [ViewerCompletion(
        task_id=row["task_id"], campaign_id=row["task__campaign_id"], kind=str(row["task__kind"]),
        completion_id=row["id"], completed_at=row["created_at"], points=row["points"], gs=int(row["gs_amount"]),
        claim_status=str(row["claim__status"]) if row["claim__status"] is not None else None,
        claim_ref=row["claim__claim_ref"],
    ) for row in rows]


@dataclass(frozen=True)
class _Pending:
    """A verified completion waiting to be written."""

    task: Task
    wallet: str
    fingerprint: str
    site_id: str | None
    verified: Verified
    previous: tuple[_Previous, ...]
    now: datetime
    chain: ChainClient


class CompletionWriter:
    """Group commit for completions (``adnet.db.group_commit``): the completions of a few milliseconds are written
    in one database transaction and share its commit (a disk sync on SQLite, during which the single connection does
    nothing else). When one of them is refused (a slot taken, a proof used up) or the shared transaction fails
    (a PostgreSQL deadlock between workers' batches), the batch is written again one completion per transaction,
    exactly as without the writer, so a refusal leaves the others whole. Every request is answered only after the
    transaction holding it committed."""

    def __init__(self) -> None:
        self.committer: GroupCommitter[_Pending, CompletionResult | Exception] = GroupCommitter(
            self._commit, name="completions", max_size=WRITER_BATCH)

    def start(self) -> None:
        self.committer.start()

    async def stop(self) -> None:
        """Write what is queued and stop (before the database closes)."""
        await self.committer.stop()

    async def record(self, pending: _Pending) -> CompletionResult:
        outcome = await self.committer.submit(pending)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    @staticmethod
    async def _commit(batch: list[_Pending]) -> list[CompletionResult | Exception]:
        try:
            async with in_transaction():
                return list(await _write_batch(batch))
        except Exception as failed:  # handed to its request (alone) or retried one by one (in a batch)
            if len(batch) == 1 or is_outage(failed):  # each alone would meet the same outage
                return [failed] * len(batch)
            if not isinstance(failed, DomainError | IntegrityError):
                log.warning("completion batch failed, writing one by one size=%d error=%r", len(batch), failed)
        return [await _alone(pending) for pending in batch]


async def _alone(pending: _Pending) -> CompletionResult | Exception:
    try:
        async with in_transaction():
            return await _write(pending)
    except Exception as failed:  # this completion's own outcome, raised in its request
        return failed


async def _record(pending: _Pending, writer: CompletionWriter | None) -> CompletionResult:
    if writer is not None and writer.committer.running:
        return await writer.record(pending)
    async with in_transaction():
        return await _write(pending)


async def _write(pending: _Pending) -> CompletionResult:
    """Inside a transaction: what the proof uses up, the reward and its claim, then the completion in its slots
    (with its claim, so the row is written once). A slot taken meanwhile fails the insert (IntegrityError) and the
    caller's transaction drops all of it."""
    task, verified = pending.task, pending.verified
    completion_id = new_id("tc")
    if verified.consume is not None:
        await verified.consume()
    claim = await reserve_and_claim(purpose=ClaimPurpose.COMPLETION, record_id=completion_id, recipient=pending.wallet,
                                    amount=int(task.reward_gs), sources=reward_sources(task), now=pending.now,
                                    chain=pending.chain)
    completion = await sql.insert_row(Completion, _completion_row(pending, completion_id,
                                                                                           claim))
    return CompletionResult(completion, claim)


async def _write_batch(batch: list[_Pending]) -> list[CompletionResult]:
    """Inside the batch's transaction: ``_write`` for every completion of the batch, with the statements they
    share made once (``adnet.money.rewards.reserve_and_claim_many``: one nonce increment, one insert of claims, one
    booking of them all; one insert of the completions). Anything refused fails the whole batch, which is then
    written one completion per transaction."""
    for pending in batch:
        if pending.verified.consume is not None:
            await pending.verified.consume()
    completion_ids = [new_id("tc") for _ in batch]
    claims = await reserve_and_claim_many(ClaimPurpose.COMPLETION, [
        Reward(completion_id, pending.wallet, int(pending.task.reward_gs), reward_sources(pending.task), pending.now)
        for completion_id, pending in zip(completion_ids, batch, strict=True)], chain=batch[0].chain)
    completions = await sql.insert_rows(Completion, [
        _completion_row(pending, completion_id, claim)
        for pending, completion_id, claim in zip(batch, completion_ids, claims, strict=True)])
    return [CompletionResult(completion, claim) for completion, claim in zip(completions, claims, strict=True)]


def _completion_row(pending: _Pending, completion_id: str, claim: Claim | None) -> dict[str, Any]:
    """The completion's row: the next free wallet and fingerprint slots, its claim if it is paid."""
    return {
        "id": completion_id, "task_id": pending.task.id, "wallet": pending.wallet, "fingerprint": pending.fingerprint,
        "wallet_slot": sum(item.wallet == pending.wallet for item in pending.previous),
        "fingerprint_slot": sum(item.fingerprint == pending.fingerprint for item in pending.previous),
        "site_id": pending.site_id, "tx_hash": pending.verified.tx_hash, "points": pending.task.reward_points,
        "gs_amount": claim.amount if claim is not None else Decimal(0),
        "claim_id": claim.id if claim is not None else None, "created_at": pending.now,
    }


_TASK_AND_PREVIOUS = (
    f"SELECT {TASK_COLUMNS}, {eligibility.FACT_COLUMNS}, "  # noqa: S608
    "completion.id AS previous_id, completion.wallet AS previous_wallet, "
    "completion.fingerprint AS previous_fingerprint, completion.claim_id AS previous_claim_id "
    f"FROM {TASK_TABLES} LEFT JOIN site ON site.id = :site_id LEFT JOIN completion ON completion.task_id = task.id "
    "AND (completion.wallet = :wallet OR completion.fingerprint = :fingerprint) "
    "WHERE task.id = :task_id ORDER BY completion.created_at")


async def _task_and_previous(task_id: str, wallet: str, fingerprint: str, site_id: str | None,
                             now: datetime) -> tuple[Task, Any, list[_Previous]]:
    """The live task with its config (``adnet.tasks.lookup``), the facts of the site it names and of its campaign
    that the rule of where a campaign may pay reads, and the completions of the task by this wallet or this
    fingerprint, oldest first, in one statement: the reads before the proof is even looked at. Raises NotFound
    ``site`` first (no active site of that id), then whatever ``live_from_row`` raises, then Conflict
    ``not_allowed_on_site`` when the rule refuses the site."""
    rows: list[dict[str, Any]] = []
    if has_prefix(task_id, "task"):
        rows = await sql.fetch(_TASK_AND_PREVIOUS, site_id=site_id, wallet=wallet, fingerprint=fingerprint,
                               task_id=task_id)
    site, campaign = eligibility.facts_of(rows[0]) if rows else (None, eligibility.NO_CAMPAIGN)
    if site_id is not None and not (has_prefix(site_id, "site") and (
            site is not None if rows else await _site_active(site_id))):
        raise NotFound.of("site")
    previous = [_Previous(row["previous_id"], row["previous_wallet"], row["previous_fingerprint"],
                          row["previous_claim_id"]) for row in rows if row["previous_id"] is not None]
    row = None
    if rows:
        row = rows[0]
        for column in _READ_WITH_TASK:
            del row[column]
    task, config = live_from_row(task_id, row, now)
    if site_id is not None:
        refuse_unless_allowed(site, campaign, task.kind.value, attached=task.surface == TaskSurface.ATTACHED,
                              subject="task")
    return task, config, previous


async def _previous(task: Task, wallet: str, fingerprint: str) -> list[_Previous]:
    rows = await sql.fetch("SELECT id, wallet, fingerprint, claim_id FROM completion WHERE task_id = :task_id "
                           "AND (wallet = :wallet OR fingerprint = :fingerprint) ORDER BY created_at",
                           task_id=task.id, wallet=wallet, fingerprint=fingerprint)
    return [_Previous(row["id"], row["wallet"], row["fingerprint"], row["claim_id"]) for row in rows]


async def _site_active(site_id: str) -> bool:
    return bool(await sql.fetch("SELECT 1 FROM site WHERE id = :site_id AND active", site_id=site_id))


async def _refuse_repeat(task: Task, wallet: str, fingerprint: str, previous: Sequence[_Previous]) -> None:
    """Conflict ``already_completed`` when the wallet or the fingerprint is at its limit. The body names the wallet's
    latest completion with its claim; when only the device is at its limit (another wallet completed on it), it
    names that completion without its claim, which belongs to the other wallet."""
    own = [item for item in previous if item.wallet == wallet]
    device = [item for item in previous if item.fingerprint == fingerprint]
    if len(own) >= task.max_per_wallet:
        earlier, claim_id = own[-1], own[-1].claim_id
    elif len(device) >= task.max_per_fingerprint:
        earlier, claim_id = device[-1], None
    else:
        return
    claim = await Claim.get_or_none(id=claim_id) if claim_id is not None else None
    raise Conflict("already_completed", "This task was already completed here; its earlier completion stands.",
                   completionId=earlier.id, transaction=claim)


def _check_proof_keys(task: Task, proof: dict[str, Any]) -> None:
    expected = PROOF_KEYS[task.kind]
    missing, extra = sorted(expected - proof.keys()), sorted(proof.keys() - expected)
    if missing or extra:
        problems = ([f"missing {', '.join(missing)}"] if missing else []) + (
            [f"unexpected {', '.join(extra)}"] if extra else [])
        raise Invalid("invalid_proof", f"A {task.kind.value} proof has {', '.join(sorted(expected))}: "
                                           f"{'; '.join(problems)}.",
                      field=f"proof.{(missing or extra)[0]}", reason="proof_keys", missing=missing, extra=extra)
