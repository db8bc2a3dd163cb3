"""Payout rules without HTTP: conversion at the vault's rate rounded down, withdrawals that never overdraw (also
concurrently, across tokens), and exchanges booked as one balanced transaction."""

from __future__ import annotations

import asyncio

import pytest

from adnet import ledger, payouts
from adnet.errors import ApiError
from adnet.models import Claim, ClaimPurpose, Exchange, LedgerPosting, Withdrawal
from adnet.money import UNIT
from tests.factories import G, fund, make_site


@pytest.fixture
def chain(app):
    return app.extensions["adnet"].extras["chain"]


@pytest.mark.parametrize(("amount", "from_symbol", "rate", "expected"), [
    (G, "SOV", 2 * G, 2 * G),
    (G, "G$", 2 * G, G // 2),
    (3, "G$", 2 * G, 1),  # 1.5 rounds down
    (1, "G$", 2 * G, 0),
    (7, "SOV", G // 3, 2),  # 7 * 0.333... = 2.33 rounds down
    (10**40, "SOV", 123_456_789_012_345_678_901, 10**40 * 123_456_789_012_345_678_901 // UNIT),
])
def test_conversion_is_exact_and_rounds_down(amount, from_symbol, rate, expected):
    assert payouts.convert(amount, from_symbol, rate) == expected


@pytest.mark.parametrize("text", ["0", "-1", "1e18", "0.0000000000000000001", " 1", "1.", 1, None])
def test_amounts_are_positive_decimal_strings(text):
    with pytest.raises(ApiError) as refused:
        payouts.amount_of(text)
    assert (refused.value.code, refused.value.extra["field"]) == ("invalid_amount", "amount")


async def test_concurrent_withdrawals_take_exactly_what_is_claimable(app, chain, clock):
    site = await make_site()
    wallet = (await site.publisher).wallet
    await fund(ledger.site(site.id), 10 * G)
    outcomes = await asyncio.gather(*(
        payouts.withdraw(wallet=wallet, site_id=site.id, amount=3 * G, token_symbol="G$", minimum=G, chain=chain,
                         now=clock.now())
        for _ in range(12)
    ), return_exceptions=True)
    paid = [outcome for outcome in outcomes if isinstance(outcome, payouts.WithdrawalResult)]
    refused = [outcome for outcome in outcomes if isinstance(outcome, ApiError)]
    assert len(paid) == 3 and len(refused) == 9
    assert {error.code for error in refused} == {"insufficient_balance"}
    assert await ledger.balance(ledger.site(site.id)) == G
    assert await Withdrawal.all().count() == 3
    claims = await Claim.all()
    assert {claim.purpose for claim in claims} == {ClaimPurpose.WITHDRAWAL}
    assert len({claim.nonce for claim in claims}) == 3  # every claim stays redeemable


async def test_a_withdrawal_in_sov_comes_from_the_sov_balance(app, chain, clock):
    site = await make_site()
    wallet = (await site.publisher).wallet
    await fund(ledger.site(site.id, "SOV"), 2 * G)
    result = await payouts.withdraw(wallet=wallet, site_id=site.id, amount=2 * G, token_symbol="SOV", minimum=G,
                                    chain=chain, now=clock.now())
    assert result.claim.token == chain.sov_address
    assert await ledger.balance(ledger.site(site.id, "SOV")) == 0


async def test_an_exchange_is_one_balanced_transaction_with_the_vault_as_counterparty(app, chain, clock):
    site = await make_site()
    wallet = (await site.publisher).wallet
    await fund(ledger.site(site.id), 5 * G)
    result = await payouts.exchange(wallet=wallet, site_id=site.id, from_symbol="G$", amount=5 * G, chain=chain,
                                    now=clock.now())
    assert (result.rate, int(result.exchange.amount_out)) == (2 * G, 5 * G // 2)
    postings = await LedgerPosting.filter(transaction__kind="exchange").values_list(
        "account__kind", "account__token", "amount")
    assert sorted((kind, token, int(amount)) for kind, token, amount in postings) == sorted([
        ("site", "G$", -5 * G), ("external", "G$", 5 * G), ("external", "SOV", -5 * G // 2),
        ("site", "SOV", 5 * G // 2),
    ])
    with pytest.raises(ApiError) as refused:
        await payouts.exchange(wallet=wallet, site_id=site.id, from_symbol="G$", amount=1, chain=chain,
                               now=clock.now())
    assert refused.value.code == "amount_too_small"
    assert await Exchange.all().count() == 1
