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
from datetime import datetime

from adnet import ledger
from adnet.chain.client import ChainClient
from adnet.claims import claim_ref_for, issue_claim
from adnet.models import Claim, ClaimPurpose

log = logging.getLogger(__name__)

REWARD_SYMBOL = "G$"


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
            return await issue_claim(purpose=purpose, recipient=recipient, token_symbol=REWARD_SYMBOL, amount=amount,
                                     claim_ref=claim_ref, sources=[(source, amount)], now=now, chain=chain)
        except ledger.InsufficientFunds:
            continue
    log.info("reward not paid, budgets empty record=%s amount=%d sources=%s", record_id, amount,
             ",".join(f"{source.kind}:{source.owner}" for source in sources))
    return None
