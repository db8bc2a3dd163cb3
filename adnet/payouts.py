"""A publisher's money on the move: top-ups into a site, withdrawals out of it, exchanges between its tokens.

- Top-up: the wallet sends the vault's ``deposit`` itself (``prepare_top_up`` builds the approve and deposit
  transactions for it); ``top_up`` then has ``adnet.deposits`` verify the receipt on the chain and credit the site
  once per transaction hash.
- Withdrawal: one database transaction signs a claim (``adnet.claims.issue_claim``, which books ``claim_issue``
  from the site's account) and records the Withdrawal. The debit is the ledger's compare-and-swap on a balance that
  may not go negative, so concurrent withdrawals can never take more than the site holds. The wallet redeems the
  claim on the vault; the watcher confirms it (``claims.mark_redeemed``), or releases the amount back to the site
  once the deadline has passed on the chain (``claims.expire_due``).
- Exchange: converts part of a site's balance between SOV and G$ at the vault's protocol ``rate`` (G$ smallest
  units per 1e18 SOV smallest units), in integers, rounded down (the site never receives more than the rate gives).
  One ``exchange`` ledger transaction holds both legs; the vault (``ledger.external``) is the counterparty of each,
  as it is the vault that pays either token out at that rate.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from tortoise.transactions import in_transaction

from adnet import ledger
from adnet.chain.client import ChainClient, ChainUnavailable
from adnet.claims import claim_ref_for, issue_claim
from adnet.deposits import TOP_UP_SYMBOL, account_ref_for_site, verify_and_record_deposit
from adnet.errors import ApiError, bad_request
from adnet.ids import new_id
from adnet.models import Claim, ClaimPurpose, Deposit, Exchange, Withdrawal
from adnet.money import UNIT, InvalidAmount, parse_amount, to_decimal_string
from adnet.publishers import owned_site

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TopUpPlan:
    """The two transactions a wallet sends to top up a site: approve the vault, then deposit."""

    site_id: str
    account_ref: str
    amount: int
    approve: dict[str, Any]
    deposit: dict[str, Any]


@dataclass(frozen=True)
class WithdrawalResult:
    """A withdrawal recorded and the claim that pays it."""

    withdrawal: Withdrawal
    claim: Claim


@dataclass(frozen=True)
class ExchangeResult:
    """An exchange booked: both legs and the vault's rate it used."""

    exchange: Exchange
    rate: int


def amount_of(text: Any, field: str = "amount") -> int:
    """A positive decimal token amount from a request, in the smallest unit; 400 ``invalid_amount`` otherwise."""
    try:
        return parse_amount(text)
    except InvalidAmount as exc:
        raise bad_request("invalid_amount", f"{field}: {exc}", field=field) from None


def token_symbol_of(text: Any, field: str = "token") -> str:
    """``"G$"`` or ``"SOV"``; 400 ``invalid_token`` otherwise."""
    if text not in ledger.TOKENS:
        raise bad_request("invalid_token", f"{field} is one of {', '.join(ledger.TOKENS)}.", field=field)
    return str(text)


def convert(amount: int, from_symbol: str, rate: int) -> int:
    """``amount`` of ``from_symbol`` in the other token at ``rate`` (G$ per 1e18 SOV), rounded down."""
    if from_symbol == "SOV":
        return amount * rate // UNIT
    return amount * UNIT // rate


async def prepare_top_up(*, wallet: str, site_id: str, amount: int, chain: ChainClient) -> TopUpPlan:
    """The unsigned approve and deposit transactions by which ``wallet`` tops up its site with G$."""
    site = await owned_site(wallet, site_id)
    account_ref = account_ref_for_site(site.id)
    return TopUpPlan(
        site_id=site.id, account_ref=account_ref, amount=amount,
        approve=chain.build_approve_tx(wallet, TOP_UP_SYMBOL, amount),
        deposit=chain.build_deposit_tx(wallet, TOP_UP_SYMBOL, amount, account_ref),
    )


async def top_up(*, wallet: str, site_id: str, tx_hash: str, chain: ChainClient, now: datetime) -> Deposit:
    """Credit the site with the deposit ``tx_hash`` made by ``wallet`` (see
    ``adnet.deposits.verify_and_record_deposit`` for what is checked and refused). Returns the Deposit,
    ``credited`` or ``pending`` until its confirmations."""
    site = await owned_site(wallet, site_id)
    deposit = await verify_and_record_deposit(chain, tx_hash, wallet, account_ref_for_site(site.id), now)
    log.info("top-up site=%s tx=%s status=%s", site.id, deposit.tx_hash, deposit.status.value)
    return deposit


async def withdraw(*, wallet: str, site_id: str, amount: int, token_symbol: str, minimum: int, chain: ChainClient,
                   now: datetime) -> WithdrawalResult:
    """Debit ``amount`` from the site's claimable balance and sign the claim that pays it to ``wallet``.

    Raises ApiError 400 ``below_minimum`` (under ``minimum``), 400 ``insufficient_balance`` (more than claimable,
    nothing changed), and the site errors of ``owned_site``."""
    site = await owned_site(wallet, site_id)
    if amount < minimum:
        raise bad_request("below_minimum", f"A withdrawal is at least {to_decimal_string(minimum)}.", field="amount",
                          minimum=to_decimal_string(minimum))
    withdrawal_id = new_id("wd")
    try:
        async with in_transaction():
            claim = await issue_claim(purpose=ClaimPurpose.WITHDRAWAL, recipient=wallet, token_symbol=token_symbol,
                                      amount=amount, claim_ref=claim_ref_for("withdrawal", withdrawal_id),
                                      sources=[(ledger.site(site.id, token_symbol), amount)], now=now, chain=chain)
            withdrawal = await Withdrawal.create(id=withdrawal_id, site=site, wallet=wallet,
                                                 token_symbol=token_symbol, amount=Decimal(amount), claim=claim,
                                                 created_at=now)
    except ledger.InsufficientFunds as exc:
        raise _insufficient(exc) from None
    log.info("withdrawal issued withdrawal=%s site=%s amount=%d token=%s claim_ref=%s", withdrawal.id, site.id,
             amount, token_symbol, claim.claim_ref)
    return WithdrawalResult(withdrawal, claim)


async def exchange(*, wallet: str, site_id: str, from_symbol: str, amount: int, chain: ChainClient,
                   now: datetime) -> ExchangeResult:
    """Convert ``amount`` of the site's ``from_symbol`` balance into the other token at the vault's rate.

    Raises ApiError 400 ``amount_too_small`` (converts to nothing), 400 ``insufficient_balance``, 503
    ``chain_unavailable`` (the rate cannot be read), and the site errors of ``owned_site``."""
    site = await owned_site(wallet, site_id)
    to_symbol = "G$" if from_symbol == "SOV" else "SOV"
    try:
        rate = await chain.rate()
    except ChainUnavailable:
        raise ApiError(503, "chain_unavailable", "The vault's rate cannot be read; nothing was changed, retry later.",
                       retryAfter=10) from None
    amount_out = convert(amount, from_symbol, rate)
    if amount_out <= 0:
        raise bad_request("amount_too_small", "The amount converts to nothing at the vault's rate.", field="amount")
    exchange_id = new_id("ex")
    legs = [
        (ledger.site(site.id, from_symbol), -amount), (ledger.external(from_symbol), amount),
        (ledger.external(to_symbol), -amount_out), (ledger.site(site.id, to_symbol), amount_out),
    ]
    try:
        async with in_transaction():
            record = await Exchange.create(id=exchange_id, site=site, wallet=wallet, from_token=from_symbol,
                                           to_token=to_symbol, amount_in=Decimal(amount),
                                           amount_out=Decimal(amount_out), rate=Decimal(rate), created_at=now)
            await ledger.book("exchange", exchange_id, legs, now=now,
                              memo=f"{from_symbol} to {to_symbol} at {rate} per 1e18 SOV")
    except ledger.InsufficientFunds as exc:
        raise _insufficient(exc) from None
    log.info("exchange booked exchange=%s site=%s from=%s amount_in=%d amount_out=%d rate=%d", exchange_id, site.id,
             from_symbol, amount, amount_out, rate)
    return ExchangeResult(record, rate)


def _insufficient(exc: ledger.InsufficientFunds) -> ApiError:
    return bad_request("insufficient_balance", "The amount is more than the site's claimable balance.",
                       field="amount", claimable=to_decimal_string(exc.balance))
