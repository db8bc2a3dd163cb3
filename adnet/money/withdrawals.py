"""Withdrawals: a site's or an advertiser's balance paid out to its wallet by a signed claim.

One database transaction signs a claim (``adnet.money.claims.issue_claim``, which books ``claim_issue`` from the
holder's account) and records the Withdrawal. The debit is the ledger's compare-and-swap on a balance that may not
go negative, so concurrent withdrawals can never take more than the holder has. The wallet redeems the claim on
the vault; the watcher confirms it (``claims.mark_redeemed``), or the expired claims job releases the amount back
to the holder once the deadline has passed on the chain (``claims.expire_due``).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from tortoise.transactions import in_transaction

from adnet.chain.client import ChainClient, ChainUnavailable
from adnet.core.amounts import Token, to_decimal_string
from adnet.core.errors import Invalid, NotFound
from adnet.core.ids import has_prefix, new_id
from adnet.money import ledger
from adnet.money.claims import claim_ref_for, issue_claim
from adnet.money.holders import Holder
from adnet.money.models import Claim, ClaimPurpose, Withdrawal, WithdrawalStatus

log = logging.getLogger(__name__)



@dataclass(frozen=True)
class WithdrawalResult:
    """A withdrawal recorded and the claim that pays it."""

    withdrawal: Withdrawal
    claim: Claim


@dataclass(frozen=True)
class WithdrawalView:
    """A withdrawal, the vault call that redeems it, and how far a reported redeem transaction is."""

    withdrawal: Withdrawal
    redeem_tx: dict[str, Any]
    redeem_hash: str | None
    redeem_mined: bool


async def withdraw(holder: Holder, amount: int, token: Token, *, minimum: int, chain: ChainClient,
                   now: datetime) -> WithdrawalResult:
    """Debit ``amount`` of ``token`` from the holder's balance and sign the claim that pays it to its wallet.

    Refused, with nothing changed: Invalid ``below_minimum`` (under ``minimum``), Invalid ``insufficient_balance``
    (more than the balance holds, which the refusal names)."""
    if amount < minimum:
        raise Invalid("below_minimum", f"A withdrawal is at least {to_decimal_string(minimum)} {token}.",
                      field="amount", minimum=to_decimal_string(minimum))
    withdrawal_id = new_id("wd")
    try:
        async with in_transaction():
            claim = await issue_claim(purpose=ClaimPurpose.WITHDRAWAL, recipient=holder.wallet, token_symbol=token,
                                      amount=amount, claim_ref=claim_ref_for("withdrawal", withdrawal_id),
                                      sources=[(holder.account(token), amount)], now=now, chain=chain)
            withdrawal = await Withdrawal.create(id=withdrawal_id, wallet=holder.wallet, token_symbol=token,
                                                 amount=Decimal(amount), claim=claim, created_at=now,
                                                 **holder.record)
    except ledger.InsufficientFunds as exc:
        raise insufficient(holder, exc) from None
    log.info("withdrawal issued withdrawal=%s %s=%s amount=%d token=%s claim_ref=%s", withdrawal.id, holder.kind,
             holder.id, amount, token, claim.claim_ref)
    return WithdrawalResult(withdrawal, claim)


async def view(holder: Holder, withdrawal_id: Any, chain: ChainClient,
               redeem_hash: str | None = None) -> WithdrawalView:
    """The holder's withdrawal ``withdrawal_id`` (NotFound otherwise) with the redeem transaction for its wallet,
    and whether ``redeem_hash``, the redeem the wallet reported, is mined yet. Only the watcher settles a
    withdrawal; the hash is only ever shown."""
    if not isinstance(withdrawal_id, str) or not has_prefix(withdrawal_id, "wd"):
        raise NotFound.of("withdrawal")
    withdrawal = await Withdrawal.get_or_none(id=withdrawal_id, **holder.record).select_related("claim")
    if withdrawal is None:
        raise NotFound.of("withdrawal")
    mined = False
    if redeem_hash and withdrawal.status == WithdrawalStatus.ISSUED:
        try:
            mined = await chain.get_receipt(redeem_hash) is not None
        except ChainUnavailable:
            mined = False
    return WithdrawalView(withdrawal=withdrawal, redeem_tx=chain.build_claim_tx(withdrawal.wallet, withdrawal.claim),
                          redeem_hash=redeem_hash, redeem_mined=mined)


def insufficient(holder: Holder, exc: ledger.InsufficientFunds) -> Invalid:
    """The refusal of a debit the holder's balance cannot cover, naming what it holds."""
    held = f"{to_decimal_string(exc.balance)} {exc.account.token}"
    return Invalid("insufficient_balance", f"The amount is more than {holder.balance_name}, which is {held}.",
                   field="amount",
                   **{holder.balance_key: to_decimal_string(exc.balance)})
