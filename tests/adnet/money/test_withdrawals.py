"""Withdrawals without HTTP: they never overdraw a holder's balance, also concurrently, in either token, one
idempotency key of a holder makes one withdrawal however often it is sent at once, and a holder finds its own
withdrawals only."""

from __future__ import annotations

import asyncio

import pytest

from adnet.accounts.models import Site
from adnet.core.amounts import Token
from adnet.core.errors import DomainError, NotFound
from adnet.money import activity, ledger, withdrawals
from adnet.money.holders import advertiser_holder, site_holder
from adnet.money.models import Claim, ClaimPurpose, Withdrawal
from tests.factories import G, fund, make_advertiser, make_site


@pytest.fixture
def chain(app):
    return app.extensions["adnet"].chain


async def test_concurrent_withdrawals_take_exactly_what_is_claimable(app, chain, clock):
    site = await make_site()
    holder = site_holder(await Site.get(id=site.id).select_related("publisher"))
    await fund(ledger.site(site.id), 10 * G)
    outcomes = await asyncio.gather(*(
        withdrawals.withdraw(holder, 3 * G, Token.GS, minimum=G, chain=chain, now=clock.now()) for _ in range(12)
    ), return_exceptions=True)
    paid = [outcome for outcome in outcomes if isinstance(outcome, withdrawals.WithdrawalResult)]
    refused = [outcome for outcome in outcomes if isinstance(outcome, DomainError)]
    assert len(paid) == 3 and len(refused) == 9
    assert {error.code for error in refused} == {"insufficient_balance"}
    assert await ledger.balance(ledger.site(site.id)) == G
    assert await Withdrawal.all().count() == 3
    claims = await Claim.all()
    assert {claim.purpose for claim in claims} == {ClaimPurpose.WITHDRAWAL}
    assert len({claim.nonce for claim in claims}) == 3  # every claim stays redeemable


async def test_a_withdrawal_in_sov_comes_from_the_sov_balance(app, chain, clock):
    site = await make_site()
    holder = site_holder(await Site.get(id=site.id).select_related("publisher"))
    await fund(ledger.site(site.id, "SOV"), 2 * G)
    result = await withdrawals.withdraw(holder, 2 * G, Token.SOV, minimum=G, chain=chain, now=clock.now())
    assert result.claim.token == chain.sov_address
    assert await ledger.balance(ledger.site(site.id, "SOV")) == 0


async def test_a_withdrawal_is_found_only_under_its_own_holder(app, chain, clock):
    advertiser = await make_advertiser()
    other = await make_advertiser()
    site = await Site.get(id=(await make_site()).id).select_related("publisher")
    holder = advertiser_holder(advertiser)
    await fund(ledger.advertiser(advertiser.id), 5 * G)
    result = await withdrawals.withdraw(holder, 2 * G, Token.GS, minimum=G, chain=chain, now=clock.now())
    view = await withdrawals.view(holder, result.withdrawal.id, chain)
    assert view.withdrawal.id == result.withdrawal.id
    assert view.redeem_tx == chain.build_claim_tx(advertiser.wallet, result.claim)
    for stranger in (advertiser_holder(other), site_holder(site)):
        with pytest.raises(NotFound):
            await withdrawals.view(stranger, result.withdrawal.id, chain)
    recent = await activity.recent(holder)
    assert [item.id for item in recent.withdrawals] == [result.withdrawal.id] and recent.deposits == []
    assert (await activity.recent(advertiser_holder(other))).withdrawals == []


async def test_concurrent_withdrawals_with_one_key_debit_once_and_answer_one_claim(app, chain, clock):
    site = await make_site()
    holder = site_holder(await Site.get(id=site.id).select_related("publisher"))
    await fund(ledger.site(site.id), 10 * G)
    outcomes = await asyncio.gather(*(
        withdrawals.withdraw(holder, 4 * G, Token.GS, minimum=G, chain=chain, now=clock.now(), idempotency_key="k-1")
        for _ in range(8)))
    assert sorted(outcome.replayed for outcome in outcomes) == [False] + [True] * 7
    assert {outcome.withdrawal.id for outcome in outcomes} == {outcomes[0].withdrawal.id}
    assert {outcome.claim.signature for outcome in outcomes} == {outcomes[0].claim.signature}
    assert await ledger.balance(ledger.site(site.id)) == 6 * G
    with pytest.raises(DomainError) as reused:
        await withdrawals.withdraw(holder, 5 * G, Token.GS, minimum=G, chain=chain, now=clock.now(),
                                   idempotency_key="k-1")
    assert (reused.value.code, reused.value.details["withdrawalId"]) == ("idempotency_key_reused",
                                                                        outcomes[0].withdrawal.id)


async def test_a_key_is_the_holders_own(app, chain, clock):
    advertiser = await make_advertiser()
    site = await make_site()
    holders = [advertiser_holder(advertiser), site_holder(await Site.get(id=site.id).select_related("publisher"))]
    await fund(ledger.advertiser(advertiser.id), 3 * G)
    await fund(ledger.site(site.id), 3 * G)
    made = [await withdrawals.withdraw(holder, 2 * G, Token.GS, minimum=G, chain=chain, now=clock.now(),
                                       idempotency_key="same") for holder in holders]
    assert [result.replayed for result in made] == [False, False]
    assert made[0].withdrawal.id != made[1].withdrawal.id
    listed = await withdrawals.listed(holders[0])
    assert [withdrawal.id for withdrawal in listed] == [made[0].withdrawal.id]
    assert listed[0].claim.claim_ref == made[0].claim.claim_ref
