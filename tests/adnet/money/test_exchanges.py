"""Exchanges without HTTP: conversion at the vault's rate is exact and rounds down, and an exchange is one
balanced transaction with the vault as counterparty."""

from __future__ import annotations

import pytest

from adnet.core.amounts import UNIT, Token
from adnet.core.errors import DomainError
from adnet.money import exchanges, ledger
from adnet.money.models import Exchange, LedgerPosting
from tests.factories import G, fund, make_site


@pytest.fixture
def chain(app):
    return app.extensions["adnet"].chain


@pytest.mark.parametrize(("amount", "from_symbol", "rate", "expected"), [
    (G, "SOV", 2 * G, 2 * G),
    (G, "G$", 2 * G, G // 2),
    (3, "G$", 2 * G, 1),  # 1.5 rounds down
    (1, "G$", 2 * G, 0),
    (7, "SOV", G // 3, 2),  # 7 * 0.333... = 2.33 rounds down
    (10**40, "SOV", 123_456_789_012_345_678_901, 10**40 * 123_456_789_012_345_678_901 // UNIT),
])
def test_conversion_is_exact_and_rounds_down(amount, from_symbol, rate, expected):
    assert exchanges.convert(amount, Token(from_symbol), rate) == expected


async def test_an_exchange_is_one_balanced_transaction_with_the_vault_as_counterparty(app, chain, clock):
    site = await make_site()
    wallet = (await site.publisher).wallet
    await fund(ledger.site(site.id), 5 * G)
    result = await exchanges.exchange(wallet=wallet, site_id=site.id, from_token=Token.GS, amount=5 * G,
                                      chain=chain, now=clock.now())
    assert (result.rate, int(result.exchange.amount_out)) == (2 * G, 5 * G // 2)
    postings = await LedgerPosting.filter(transaction__kind="exchange").values_list(
        "account__kind", "account__token", "amount")
    assert sorted((kind, token, int(amount)) for kind, token, amount in postings) == sorted([
        ("site", "G$", -5 * G), ("external", "G$", 5 * G), ("external", "SOV", -5 * G // 2),
        ("site", "SOV", 5 * G // 2),
    ])
    with pytest.raises(DomainError) as refused:
        await exchanges.exchange(wallet=wallet, site_id=site.id, from_token=Token.GS, amount=1, chain=chain,
                                 now=clock.now())
    assert refused.value.code == "amount_too_small"
    assert await Exchange.all().count() == 1
