"""Withdrawals: a site's or an advertiser's balance paid out to its wallet by a signed claim.

One database transaction signs a claim (``adnet.money.claims.issue_claim``, which books ``claim_issue`` from the
holder's account) and records the Withdrawal. The debit is the ledger's compare-and-swap on a balance that may not
go negative, so concurrent withdrawals can never take more than the holder has. The wallet redeems the claim on
the vault; the watcher confirms it (``claims.mark_redeemed``), or the expired claims job releases the amount back
to the holder once the deadline has passed on the chain (``claims.expire_due``).

A client that may lose the answer sends an idempotency key (``Idempotency-Key`` over HTTP). The transaction
inserts the key (``WithdrawalKey``, unique per holder) before it moves any money: a retry, also one sent while the
first is still running, fails on that unique key, its transaction is dropped, and it answers with the withdrawal
and claim the key names, so one key never debits twice. The same key with another amount or token is refused. A
request that was refused (insufficient balance) leaves no key behind: a retry is judged afresh.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from tortoise.exceptions import IntegrityError
from tortoise.transactions import in_transaction

from adnet.chain.client import ChainClient, ChainUnavailable
from adnet.core.amounts import Token, to_decimal_string
from adnet.core.errors import Conflict, Invalid, NotFound
from adnet.core.ids import has_prefix, new_id
from adnet.db import cursors
from adnet.money import ledger
from adnet.money.claims import claim_ref_for, issue_claim
from adnet.money.holders import Holder
from adnet.money.models import Claim, ClaimPurpose, Withdrawal, WithdrawalKey, WithdrawalStatus

log = logging.getLogger(__name__)

# How many withdrawals one listing answers at most.
MAX_LISTED = 100


@dataclass(frozen=True)
class WithdrawalResult:
    """A withdrawal recorded and the claim that pays it; ``replayed`` when an earlier request with the same
    idempotency key made them."""

    withdrawal: Withdrawal
    claim: Claim
    replayed: bool = False


@dataclass(frozen=True)
class WithdrawalView:
    """A withdrawal, the vault call that redeems it, and how far a reported redeem transaction is."""

    withdrawal: Withdrawal
    redeem_tx: dict[str, Any]
    redeem_hash: str | None
    redeem_mined: bool


async def withdraw(holder: Holder, amount: int, token: Token, *, minimum: int, chain: ChainClient,
                   now: datetime, idempotency_key: str | None = None) -> WithdrawalResult:
    """Debit ``amount`` of ``token`` from the holder's balance and sign the claim that pays it to its wallet.

    With ``idempotency_key``, a key the holder used before answers with that withdrawal and its claim
    (``replayed``), when it asked for the same amount and token. Refused, with nothing changed: Invalid
    ``below_minimum`` (under ``minimum``), Invalid ``insufficient_balance`` (more than the balance holds, which the
    refusal names), Conflict ``idempotency_key_reused`` (the key named another amount or token)."""
    if amount < minimum:
        raise Invalid("below_minimum", f"A withdrawal is at least {to_decimal_string(minimum)} {token}.",
                      field="amount", minimum=to_decimal_string(minimum))
    withdrawal_id = new_id("wd")
    try:
        async with in_transaction():
            key = None
            if idempotency_key is not None:
                key = await WithdrawalKey.create(holder=holder.id, key=idempotency_key, created_at=now)
            claim = await issue_claim(purpose=ClaimPurpose.WITHDRAWAL, recipient=holder.wallet, token_symbol=token,
                                      amount=amount, claim_ref=claim_ref_for("withdrawal", withdrawal_id),
                                      sources=[(holder.account(token), amount)], now=now, chain=chain)
            withdrawal = await Withdrawal.create(id=withdrawal_id, wallet=holder.wallet, token_symbol=token,
                                                 amount=Decimal(amount), claim=claim, created_at=now,
                                                 **holder.record)
            if key is not None:
                key.withdrawal = withdrawal
                await key.save(update_fields=["withdrawal_id"])
    except ledger.InsufficientFunds as exc:
        raise insufficient(holder, exc) from None
    except IntegrityError:
        if idempotency_key is None:
            raise
        return await _replay(holder, idempotency_key, amount, token)
    log.info("withdrawal issued withdrawal=%s %s=%s amount=%d token=%s claim_ref=%s", withdrawal.id, holder.kind,
             holder.id, amount, token, claim.claim_ref)
    return WithdrawalResult(withdrawal, claim)


async def _replay(holder: Holder, idempotency_key: str, amount: int, token: Token) -> WithdrawalResult:
    """The withdrawal an earlier request made with ``idempotency_key``, when it asked for the same amount and
    token (Conflict ``idempotency_key_reused`` otherwise)."""
    earlier = await WithdrawalKey.get_or_none(holder=holder.id, key=idempotency_key).select_related(
        "withdrawal__claim")
    if earlier is None or earlier.withdrawal is None:
        raise RuntimeError("a withdrawal's key conflicted, yet no committed withdrawal holds it")
    withdrawal = earlier.withdrawal
    if (int(withdrawal.amount), withdrawal.token_symbol) != (amount, token):
        raise Conflict("idempotency_key_reused", "This Idempotency-Key was used for a withdrawal of another amount "
                       "or token; use a new key for a new withdrawal.", withdrawalId=withdrawal.id)
    log.info("withdrawal replayed withdrawal=%s %s=%s", withdrawal.id, holder.kind, holder.id)
    return WithdrawalResult(withdrawal, withdrawal.claim, replayed=True)


async def listed(holder: Holder, *, limit: int = MAX_LISTED, before: str | None = None) -> list[Withdrawal]:
    """The holder's withdrawals with their claims, newest first: at most ``limit``, and only those older than the
    withdrawal the cursor ``before`` names (``adnet.db.cursors``: Invalid ``invalid_cursor`` unless it is one of
    the holder's)."""
    query = await cursors.older_than(Withdrawal.filter(**holder.record), before)
    return await query.order_by("-created_at", "-id").limit(min(limit, MAX_LISTED)).select_related("claim")


async def view(holder: Holder, withdrawal_id: Any, chain: ChainClient,
               redeem_hash: str | None = None) -> WithdrawalView:
    """The holder's withdrawal ``withdrawal_id`` (NotFound otherwise) with the redeem transaction for its wallet,
    and whether ``redeem_hash``, the redeem the wallet reported, is mined yet. Only the watcher settles a
    withdrawal; the hash is only ever shown."""
    withdrawal = await find(holder, withdrawal_id)
    mined = False
    if redeem_hash and withdrawal.status == WithdrawalStatus.ISSUED:
        try:
            mined = await chain.get_receipt(redeem_hash) is not None
        except ChainUnavailable:
            mined = False
    return WithdrawalView(withdrawal=withdrawal, redeem_tx=chain.build_claim_tx(withdrawal.wallet, withdrawal.claim),
                          redeem_hash=redeem_hash, redeem_mined=mined)


async def find(holder: Holder, withdrawal_id: Any) -> Withdrawal:
    """The holder's withdrawal ``withdrawal_id`` with its claim (NotFound otherwise, also for another holder's)."""
    if not isinstance(withdrawal_id, str) or not has_prefix(withdrawal_id, "wd"):
        raise NotFound.of("withdrawal")
    withdrawal = await Withdrawal.get_or_none(id=withdrawal_id, **holder.record).select_related("claim")
    if withdrawal is None:
        raise NotFound.of("withdrawal")
    return withdrawal


def insufficient(holder: Holder, exc: ledger.InsufficientFunds) -> Invalid:
    """The refusal of a debit the holder's balance cannot cover, naming what it holds."""
    held = f"{to_decimal_string(exc.balance)} {exc.account.token}"
    return Invalid("insufficient_balance", f"The amount is more than {holder.balance_name}, which is {held}.",
                   field="amount",
                   **{holder.balance_key: to_decimal_string(exc.balance)})
