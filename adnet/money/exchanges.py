"""Exchanges: part of a site's balance converted between SOV and G$ at the vault's protocol rate.

The rate is G$ smallest units per 1e18 SOV smallest units, read from the vault. Conversion is in integers, rounded
down, so the site never receives more than the rate gives. One ``exchange`` ledger transaction holds both legs; the
vault (``ledger.external``) is the counterparty of each, as it is the vault that pays either token out at that
rate.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal

from tortoise.transactions import in_transaction

from adnet.accounts.models import Site
from adnet.accounts.sites import owned_site
from adnet.chain.client import ChainClient, ChainUnavailable
from adnet.core.amounts import UNIT, Token
from adnet.core.errors import Invalid, chain_unavailable
from adnet.core.ids import new_id
from adnet.money import ledger
from adnet.money.holders import site_holder
from adnet.money.models import Exchange
from adnet.money.withdrawals import insufficient

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ExchangeResult:
    """An exchange booked: both legs and the vault's rate it used."""

    exchange: Exchange
    rate: int


@dataclass(frozen=True)
class ExchangePreview:
    """What an exchange would give now: ``amount_out`` of ``to_token`` at ``rate`` (G$ per 1e18 SOV)."""

    from_token: Token
    to_token: Token
    amount_in: int
    amount_out: int
    rate: int


def other(token: Token) -> Token:
    """The token an exchange from ``token`` gives."""
    return Token.GS if token == Token.SOV else Token.SOV


def convert(amount: int, from_token: Token, rate: int) -> int:
    """``amount`` of ``from_token`` in the other token at ``rate`` (G$ per 1e18 SOV), rounded down."""
    if from_token == Token.SOV:
        return amount * rate // UNIT
    return amount * UNIT // rate


async def current_rate(chain: ChainClient) -> int:
    """The vault's protocol rate (G$ per 1e18 SOV); Unavailable ``chain_unavailable`` when it cannot be read."""
    try:
        return await chain.rate()
    except ChainUnavailable:
        raise chain_unavailable("The vault's rate cannot be read") from None


async def preview(from_token: Token, amount: int, chain: ChainClient, site: Site | None = None) -> ExchangePreview:
    """What ``amount`` of ``from_token`` converts to at the vault's current rate, as ``exchange`` would book it;
    with ``site``, Invalid ``insufficient_balance`` when the site holds less than ``amount`` of ``from_token`` (no
    preview promises what the exchange would refuse)."""
    if site is not None:
        balance = await ledger.balance(ledger.site(site.id, from_token))
        if amount > balance:
            raise insufficient(site_holder(site), ledger.InsufficientFunds(ledger.site(site.id, from_token), balance,
                                                                           -amount))
    rate = await current_rate(chain)
    return ExchangePreview(from_token, other(from_token), amount, convert(amount, from_token, rate), rate)


async def exchange(*, wallet: str, site_id: str, from_token: Token, amount: int, chain: ChainClient,
                   now: datetime) -> ExchangeResult:
    """Convert ``amount`` of the site's ``from_token`` balance into the other token at the vault's rate.

    Refused: Invalid ``amount_too_small`` (converts to nothing), Invalid ``insufficient_balance``, Unavailable
    ``chain_unavailable`` (the rate cannot be read), and the refusals of ``owned_site``."""
    site = await owned_site(wallet, site_id)
    to_token = other(from_token)
    rate = await current_rate(chain)
    amount_out = convert(amount, from_token, rate)
    if amount_out <= 0:
        raise Invalid("amount_too_small", "The amount converts to nothing at the vault's rate.", field="amount")
    exchange_id = new_id("ex")
    legs = [
        (ledger.site(site.id, from_token), -amount), (ledger.external(from_token), amount),
        (ledger.external(to_token), -amount_out), (ledger.site(site.id, to_token), amount_out),
    ]
    try:
        async with in_transaction():
            record = await Exchange.create(id=exchange_id, site=site, wallet=wallet, from_token=from_token,
                                           to_token=to_token, amount_in=Decimal(amount),
                                           amount_out=Decimal(amount_out), rate=Decimal(rate), created_at=now)
            await ledger.book("exchange", exchange_id, legs, now=now,
                              memo=f"{from_token} to {to_token} at {rate} per 1e18 SOV")
    except ledger.InsufficientFunds as exc:
        raise insufficient(site_holder(site), exc) from None
    log.info("exchange booked exchange=%s site=%s from=%s amount_in=%d amount_out=%d rate=%d", exchange_id, site.id,
             from_token, amount, amount_out, rate)
    return ExchangeResult(record, rate)
