"""Viewers' responses to standalone units (POLL, FEEDBACK, SURVEY): one response per unit and respondent, its
points once, and its G$ reward under the same rules as a task's.

A respondent is the wallet when the request names one, otherwise the device (``fp:<fingerprint>``). The unique
key (unit, respondent) of ``Interaction`` is what makes "one response each" hold: the response, its points and its
claim are written in one database transaction, so of any number of identical requests at once exactly one commits
and the others are answered Conflict ``already_completed`` naming it.

A device gives at most the unit's ``max_per_fingerprint`` responses, whatever wallets it names or none: every
response, paid or not, holds a slot of its device (0 to ``max_per_fingerprint`` - 1), and (unit, fingerprint,
slot) is a unique key too. Every response counts, not only the paid ones, because each one earns points and a vote
in the results. Of any number of answers at once from one device with different wallets, exactly
``max_per_fingerprint`` are recorded and paid; the others fail on the slot key and are answered Conflict
``already_completed`` naming the device's latest response, without its claim (another wallet's).

A POLL or FEEDBACK answer is recorded at once. A SURVEY is answered one question at a time in a session
(``SurveySession``) that the first answer opens; the session belongs to its unit, site, fingerprint and wallet and
expires ``SESSION_LIFETIME`` after it opened. Each answer names its ``questionId`` and answers the current question
(an optional one may be skipped by naming it without an answer) or changes an earlier one; answering or skipping
the last question completes the session and records the response. Every change to a session is a compare-and-swap
on its ``version``, so concurrent answers never overwrite each other and a session completes once.

A unit is answered only on a site where its campaign may be paid, by the rule serving applies too
(``adnet.campaigns.eligibility.refusal``: the site active and verified, the campaign's ``siteAllow``/``siteDeny``,
the site owner's blocks and the unit kinds the site takes), read from the database with the site's facts in one
statement: an inactive site is NotFound, any other refusal Conflict ``not_allowed_on_site``, for every answer of a
survey too, so no session is opened and nothing is paid there.

Nothing is written for an answer that is refused. Free text is kept as the viewer typed it (trimmed); escaping is
the job of whatever shows it (``adnet.interactions.results`` for CSV).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any, Literal

from tortoise.exceptions import IntegrityError
from tortoise.expressions import Q
from tortoise.transactions import in_transaction

from adnet.campaigns import eligibility
from adnet.campaigns.eligibility import refuse_unless_allowed
from adnet.chain.client import ChainClient
from adnet.core.errors import Conflict, DomainError, Forbidden, Invalid, NotFound
from adnet.core.ids import has_prefix, new_id
from adnet.db import sql
from adnet.interactions.answers import Value, feedback_answer, poll_answer, survey_answer
from adnet.interactions.commands import Submission
from adnet.interactions.models import Interaction, SessionStatus, SurveySession
from adnet.money.models import Claim, ClaimPurpose
from adnet.money.rewards import reserve_and_claim
from adnet.tasks.completion import reward_sources
from adnet.tasks.config import PollConfig, SurveyConfig, SurveyQuestion, parse_config
from adnet.tasks.lookup import live_task
from adnet.tasks.models import Task, TaskKind, TaskSurface

log = logging.getLogger(__name__)

UNIT_KINDS = frozenset({TaskKind.POLL, TaskKind.FEEDBACK, TaskKind.SURVEY})
SESSION_LIFETIME = timedelta(hours=24)
# Re-reads of a session after a concurrent answer changed it first.
MAX_SESSION_RACES = 20


@dataclass(frozen=True)
class Outcome:
    """What a submission did: ``recorded`` (poll, feedback), ``in_progress`` or ``completed`` (survey). The
    interaction and its claim exist once the response is recorded or completed; a survey carries its session."""

    status: Literal["recorded", "in_progress", "completed"]
    interaction: Interaction | None
    claim: Claim | None
    session: SurveySession | None = None
    total_steps: int = 0
    next_question: SurveyQuestion | None = None


@dataclass(frozen=True)
class Respondent:
    """Who answers: a device, with the wallet it names if any. ``key`` is the unique key's respondent."""

    site_id: str
    fingerprint: str
    wallet: str | None

    @property
    def key(self) -> str:
        return self.wallet if self.wallet is not None else f"fp:{self.fingerprint}"


class _SessionChanged(Exception):
    """The session's version moved between our read and our write: read it again."""


async def submit(submission: Submission, *, now: datetime, chain: ChainClient) -> Outcome:
    """Validate and record one answer to a standalone unit.

    Refused: Invalid (``invalid_field`` / ``missing_field`` naming the field such as
    ``proof.optionId``, ``question_out_of_order``), Forbidden ``session_not_yours``, NotFound (unit, site, session),
    Conflict (``already_completed`` with ``interactionId``, ``session_completed``, ``session_expired``,
    ``session_busy``, ``task_inactive``, ``task_not_started``, ``task_ended``, ``not_allowed_on_site``: the rule of
    where its campaign may pay, ``adnet.campaigns.eligibility``, refuses the site)."""
    unit = await live_task(submission.task_id, now, kinds=UNIT_KINDS)
    if unit.surface != TaskSurface.STANDALONE:
        raise Invalid("invalid_field", "This unit is not answered on its own.", field="taskId")
    site, campaign = await _site_and_campaign(submission.site_id, unit)
    refuse_unless_allowed(site, campaign, unit.kind.value, attached=False, subject="unit")
    config = parse_config(unit.kind, unit.config)
    respondent = Respondent(site_id=submission.site_id, fingerprint=submission.fingerprint,
                            wallet=submission.wallet)
    if isinstance(config, SurveyConfig):
        return await _answer_survey(unit, config, respondent, submission, now, chain)
    if submission.session_id is not None:
        raise Invalid("invalid_field", "Only surveys have sessions.", field="sessionId")
    answer = poll_answer(config, submission.proof) if isinstance(config, PollConfig) else feedback_answer(
        config, submission.proof)
    interaction, claim = await _record(unit, respondent, answer.stored(), now, chain)
    return Outcome(status="recorded", interaction=interaction, claim=claim)


_SITE_AND_CAMPAIGN = (f"SELECT {eligibility.FACT_COLUMNS} FROM site "  # noqa: S608 - no input in the text
                      "LEFT JOIN campaign ON campaign.id = :campaign_id WHERE site.id = :site_id")


async def _site_and_campaign(site_id: str, unit: Task) -> tuple[eligibility.StoredSite | None, eligibility.Terms]:
    """The facts of the site and of the unit's campaign that the rule of where a campaign may pay reads, in one
    statement (None for a site that is not active, or not a site id)."""
    if not has_prefix(site_id, "site"):
        return None, eligibility.NO_CAMPAIGN
    rows = await sql.fetch(_SITE_AND_CAMPAIGN, site_id=site_id, campaign_id=unit.campaign_id)
    return eligibility.facts_of(rows[0]) if rows else (None, eligibility.NO_CAMPAIGN)


# Recording: the response, its points and its claim in one transaction.

async def _record(unit: Task, respondent: Respondent, answers: dict[str, Any], now: datetime, chain: ChainClient,
                  before: Callable[[], Awaitable[None]] | None = None) -> tuple[Interaction, Claim | None]:
    """Insert the response in the device's free slot, under both unique keys, and pay its reward, in one
    transaction; ``before`` runs first in that transaction (a survey session's completing swap, so an answer that
    loses it is told the session is complete). The respondent's earlier response, or a device at its limit, is
    Conflict ``already_completed``, and the transaction is dropped.

    A slot another response of the device took meanwhile fails the insert; the slots are read again and the next
    free one tried. Each such failure is a slot that a committed response holds, so after at most
    ``max_per_fingerprint`` of them the device is seen at its limit and refused."""
    for _ in range(unit.max_per_fingerprint + 1):
        slot = None
        try:
            async with in_transaction():
                if before is not None:
                    await before()
                slot = await _device_slot(unit, respondent)
                interaction = await Interaction.create(
                    id=new_id("int"), unit=unit, site_id=respondent.site_id, respondent=respondent.key,
                    wallet=respondent.wallet, fingerprint=respondent.fingerprint, fingerprint_slot=slot,
                    answers=answers, points=unit.reward_points, gs_amount=Decimal(0), created_at=now)
                claim = await _reward(unit, interaction, respondent, now, chain)
        except IntegrityError:
            if slot is not None and await Interaction.filter(Q(respondent=respondent.key) | Q(
                    fingerprint=respondent.fingerprint, fingerprint_slot=slot), unit_id=unit.id).exists():
                continue  # a concurrent response took this respondent's place or this slot: read again
            raise
        log.info("interaction recorded unit=%s interaction=%s respondent=%s device_slot=%d points=%d gs=%d", unit.id,
                 interaction.id, respondent.key, slot, interaction.points, int(interaction.gs_amount))
        return interaction, claim
    raise Conflict("response_contended", "Other responses to this unit from this device are being recorded; retry.")


@dataclass(frozen=True)
class _Earlier:
    """A response to the unit by this respondent or on this device."""

    id: str
    respondent: str
    fingerprint: str
    fingerprint_slot: int
    claim_id: str | None


async def _device_slot(unit: Task, respondent: Respondent) -> int:
    """The lowest slot of the device below the unit's ``max_per_fingerprint`` that no response holds, read in one
    statement with the respondent's own response. Raises Conflict ``already_completed`` when the respondent has
    answered (naming that response and its claim) or the device is at its limit (naming the device's latest
    response, without its claim, which is another wallet's)."""
    earlier = [_Earlier(*row) for row in await Interaction.filter(
        Q(respondent=respondent.key) | Q(fingerprint=respondent.fingerprint), unit_id=unit.id).order_by(
        "created_at", "id").values_list("id", "respondent", "fingerprint", "fingerprint_slot", "claim_id")]
    own = [item for item in earlier if item.respondent == respondent.key]
    if own:
        raise await _already_completed(own[-1].id, own[-1].claim_id)
    taken = {item.fingerprint_slot for item in earlier if item.fingerprint == respondent.fingerprint}
    free = [slot for slot in range(unit.max_per_fingerprint) if slot not in taken]
    if not free:
        device = [item for item in earlier if item.fingerprint == respondent.fingerprint]
        raise await _already_completed(device[-1].id, None, on_device=True)
    return free[0]


async def _reward(unit: Task, interaction: Interaction, respondent: Respondent, now: datetime,
                  chain: ChainClient) -> Claim | None:
    """The unit's G$ reward, as for a task: from its pool, else its campaign's budget, else nothing. Without a
    wallet there is no one to pay, so the response earns its points only."""
    if respondent.wallet is None:
        return None
    claim = await reserve_and_claim(purpose=ClaimPurpose.INTERACTION, record_id=interaction.id,
                                    recipient=respondent.wallet, amount=int(unit.reward_gs),
                                    sources=reward_sources(unit), now=now, chain=chain)
    if claim is not None:
        interaction.claim = claim
        interaction.gs_amount = claim.amount
        await interaction.save(update_fields=["claim_id", "gs_amount"])
    return claim


async def _already_completed(interaction_id: str, claim_id: str | None, *, on_device: bool = False) -> DomainError:
    """Conflict naming an earlier response and its claim (None: the response earned none, or it is another
    wallet's, answered on the same device)."""
    message = ("This unit was already answered on this device as often as it allows." if on_device
               else "You have already answered this; your earlier response stands.")
    return Conflict("already_completed", message, interactionId=interaction_id,
                    transaction=await Claim.get(id=claim_id) if claim_id is not None else None)


# Surveys: sessions answered one question at a time.

async def _answer_survey(unit: Task, config: SurveyConfig, respondent: Respondent, submission: Submission,
                         now: datetime, chain: ChainClient) -> Outcome:
    index, answer = survey_answer(config, submission.proof)
    value = answer.value
    if submission.session_id is None:
        return await _open_session(unit, config, respondent, index, value, now, chain)
    for _ in range(MAX_SESSION_RACES):
        session = await _own_session(submission.session_id, unit, respondent, now)
        try:
            return await _advance(unit, config, respondent, session, index, value, now, chain)
        except _SessionChanged:
            continue
    raise Conflict("session_busy", "Other answers to this session are being saved; retry.")


async def _open_session(unit: Task, config: SurveyConfig, respondent: Respondent, index: int, answer: Value,
                        now: datetime, chain: ChainClient) -> Outcome:
    """The first answer opens the session; in a one-question survey it also completes it."""
    _check_order(config, index, step=0)
    await _device_slot(unit, respondent)  # refuses a respondent who has answered, or a device at its limit, early
    answers = _with_answer({}, config.questions[0].id, answer)
    session = SurveySession(id=new_id("srv"), unit=unit, site_id=respondent.site_id, wallet=respondent.wallet,
                            fingerprint=respondent.fingerprint, answers=answers, step=1, version=0,
                            status=SessionStatus.IN_PROGRESS, created_at=now, expires_at=now + SESSION_LIFETIME)
    if len(config.questions) > 1:
        await session.save()
        log.info("survey session opened unit=%s session=%s respondent=%s", unit.id, session.id, respondent.key)
        return _in_progress(unit, config, session)
    session.status, session.completed_at = SessionStatus.COMPLETED, now

    async def save_completed() -> None:
        await session.save(force_create=True)  # again in a new transaction when a device slot was taken meanwhile

    interaction, claim = await _record(unit, respondent, answers, now, chain, before=save_completed)
    return Outcome(status="completed", interaction=interaction, claim=claim, session=session, total_steps=1)


async def _own_session(session_id: str, unit: Task, respondent: Respondent, now: datetime) -> SurveySession:
    """The session ``session_id`` of this unit, if it belongs to this respondent and takes answers."""
    session = await SurveySession.get_or_none(id=session_id, unit_id=unit.id) if has_prefix(
        session_id, "srv") else None
    if session is None:
        raise NotFound.of("session")
    if (session.fingerprint, session.wallet, session.site_id) != (
            respondent.fingerprint, respondent.wallet, respondent.site_id):
        log.warning("survey session refused, other respondent session=%s unit=%s", session.id, unit.id)
        raise Forbidden("session_not_yours", "This survey session belongs to another respondent.",
                        field="sessionId")
    if session.status == SessionStatus.COMPLETED:
        earlier = await Interaction.get_or_none(unit_id=unit.id, respondent=respondent.key).only("id")
        raise Conflict("session_completed", "This survey session is complete.",
                       interactionId=earlier.id if earlier else None)
    if session.status == SessionStatus.ABANDONED or session.expires_at <= now:
        raise Conflict("session_expired", "This survey session has expired; start the survey again.")
    return session


async def _advance(unit: Task, config: SurveyConfig, respondent: Respondent, session: SurveySession, index: int,
                   answer: Value, now: datetime, chain: ChainClient) -> Outcome:
    """Apply one answer to the session as read, by compare-and-swap on its version (``_SessionChanged`` when it
    moved); the answer that passes the last question completes the session and records the response."""
    _check_order(config, index, session.step)
    answers = _with_answer(session.answers, config.questions[index].id, answer)
    step = max(session.step, index + 1)
    swap = SurveySession.filter(id=session.id, version=session.version, status=SessionStatus.IN_PROGRESS)
    if step < len(config.questions):
        if not await swap.update(answers=answers, step=step, version=session.version + 1):
            raise _SessionChanged
        session.answers, session.step, session.version = answers, step, session.version + 1
        return _in_progress(unit, config, session)

    async def complete_session() -> None:
        if not await swap.update(answers=answers, step=step, version=session.version + 1,
                                 status=SessionStatus.COMPLETED, completed_at=now):
            raise _SessionChanged

    interaction, claim = await _record(unit, respondent, answers, now, chain, before=complete_session)
    session.answers, session.step, session.version = answers, step, session.version + 1
    session.status, session.completed_at = SessionStatus.COMPLETED, now
    log.info("survey session completed unit=%s session=%s interaction=%s", unit.id, session.id, interaction.id)
    return Outcome(status="completed", interaction=interaction, claim=claim, session=session,
                   total_steps=len(config.questions))


def _check_order(config: SurveyConfig, index: int, step: int) -> None:
    """An answer is to the current question or changes an earlier one; later questions wait their turn."""
    if index > step:
        current = config.questions[step].id
        raise Invalid("question_out_of_order", f"proof.questionId: answer question {current} first.",
                      field="proof.questionId", expectedQuestionId=current)


def _with_answer(answers: dict[str, Any], question_id: str, answer: Value) -> dict[str, Any]:
    """The answers with this question's set (or removed, when skipped)."""
    updated = {key: value for key, value in answers.items() if key != question_id}
    if answer is not None:
        updated[question_id] = answer
    return updated


def _in_progress(unit: Task, config: SurveyConfig, session: SurveySession) -> Outcome:
    return Outcome(status="in_progress", interaction=None, claim=None, session=session,
                   total_steps=len(config.questions), next_question=config.questions[session.step])
