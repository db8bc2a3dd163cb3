"""G$ rewards for viewers: reserve the amount from a funded budget and sign the claim that pays it, or pay nothing.

A reward is paid by exactly one of its ``sources``, tried in order (for a CTA task: its own pool, then its
campaign's budget), and only when that source holds the whole amount. The debit is the claim's own ``claim_issue``
booking, made by a compare-and-swap on the source's balance, so concurrent rewards never overdraw a budget and a
claim is always backed by money set aside for it. When no source can pay, the caller records its action with
points only. Task completions and interactions both pay through here.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from adnet.chain.client import ChainClient
from adnet.core.amounts import Token
from adnet.money import ledger
from adnet.money.claims import ClaimTerms, claim_ref_for, issue_claim, issue_claims
from adnet.money.models import Claim, ClaimPurpose

log = logging.getLogger(__name__)


async def reserve_and_claim(
    *,
    purpose: ClaimPurpose,
    record_id: str,
    recipient: str,
    amount: int,
    sources: Sequence[ledger.AccountKey],
    now: datetime,
    chain: ChainClient,
) -> Claim | None:
    """Reserve ``amount`` G$ (smallest units) from the first of ``sources`` that holds all of it and return the
    signed claim paying ``recipient``; None when ``amount`` is zero or no source can pay.

    Call inside the caller's ``in_transaction()``, right after the record (``record_id``: a completion or an
    interaction) is written, so the record, the debit and the claim commit together or not at all. The claimRef is
    derived from ``purpose`` and ``record_id``, so a record is never paid twice. A source that cannot pay leaves
    nothing behind (``issue_claim`` runs in its own savepoint)."""
    if amount <= 0:
        return None
    claim_ref = claim_ref_for(purpose.value, record_id)
    for source in sources:
        try:
            return await issue_claim(purpose=purpose, recipient=recipient, token_symbol=Token.GS, amount=amount,
                                     claim_ref=claim_ref, sources=[(source, amount)], now=now, chain=chain)
        except ledger.InsufficientFunds:
            continue
    log.info("reward not paid, budgets empty record=%s amount=%d sources=%s", record_id, amount,
             ",".join(f"{source.kind}:{source.owner}" for source in sources))
    return None


@dataclass(frozen=True)
class Reward:
    """One reward of ``reserve_and_claim_many``: the arguments of ``reserve_and_claim`` that differ per record."""

    record_id: str
    recipient: str
    amount: int
    sources: Sequence[ledger.AccountKey]
    now: datetime


async def reserve_and_claim_many(purpose: ClaimPurpose, rewards: Sequence[Reward], *,
                                 chain: ChainClient) -> list[Claim | None]:
    """``reserve_and_claim`` for several records at once, in order, in the caller's transaction: each reward is
    paid by the first of its sources that holds all of it after the rewards before it (the choice one by one
    would make), from balances read once, and the claims are issued together (``adnet.money.claims.issue_claims``).
    Recipients are lower-case addresses. Without savepoints: should a source no longer hold what was read
    (another process paid from it meanwhile), or a claim fail, this raises and the caller's transaction must be
    dropped."""
    owed = [reward for reward in rewards if reward.amount > 0]
    left = await ledger.balances_of(source for reward in owed for source in reward.sources)
    paid: dict[int, ClaimTerms] = {}
    for index, reward in enumerate(rewards):
        if reward.amount <= 0:
            continue
        source = next((source for source in reward.sources if left[source] >= reward.amount), None)
        if source is None:
            log.info("reward not paid, budgets empty record=%s amount=%d sources=%s", reward.record_id, reward.amount,
                     ",".join(f"{source.kind}:{source.owner}" for source in reward.sources))
            continue
        left[source] -= reward.amount
        paid[index] = ClaimTerms(purpose, reward.recipient, Token.GS, reward.amount,
                                 claim_ref_for(purpose.value, reward.record_id), [(source, reward.amount)], reward.now)
    claims = dict(zip(paid, await issue_claims(list(paid.values()), chain=chain), strict=True))
    return [claims.get(index) for index in range(len(rewards))]
