"""``adnet.portal_views`` for both sides of the portal: a deposit's progress whoever it credits, and a withdrawal
found only under its own site or advertiser."""

from __future__ import annotations

import pytest

from adnet import advertisers, ledger, portal_views
from adnet.chain.transact import send_transaction
from adnet.errors import ApiError
from adnet.models import Deposit
from tests.chain.helpers import user
from tests.factories import G, fund, make_advertiser, make_site


async def test_a_deposit_is_sent_then_credited_once_for_an_advertiser(app, chain, clock):
    account = user(2)
    advertiser = await make_advertiser(account.address.lower())
    plan = advertisers.prepare_deposit(advertiser, 3 * G, chain)

    async def credit_hash(tx_hash: str) -> portal_views.TopUpProgress:
        return await portal_views.deposit_progress(
            lambda: advertisers.deposit(advertiser, tx_hash, chain, clock.now()), tx_hash, chain)

    unknown = "0x" + "AB" * 32
    assert await credit_hash(unknown) == portal_views.TopUpProgress("sent", unknown.lower())
    await send_transaction(chain.w3, account, plan.approve)
    receipt = await send_transaction(chain.w3, account, plan.deposit)
    tx_hash = receipt["transactionHash"].to_0x_hex()
    for _ in range(2):  # the second call finds it credited before and says so, crediting nothing
        progress = await credit_hash(tx_hash)
        assert (progress.state, progress.amount) == ("credited", 3 * G)
    assert await ledger.balance(ledger.advertiser(advertiser.id)) == 3 * G
    assert await Deposit.filter(tx_hash=tx_hash).count() == 1
    with pytest.raises(ApiError) as refused:
        await credit_hash("not a hash")
    assert refused.value.code == "invalid_tx_hash"


async def test_a_withdrawal_is_found_only_under_its_own_owner(app, chain, clock):
    advertiser = await make_advertiser()
    other = await make_advertiser()
    site = await make_site()
    await fund(ledger.advertiser(advertiser.id), 5 * G)
    result = await advertisers.withdraw(advertiser, 2 * G, minimum=G, chain=chain, now=clock.now())
    view = await portal_views.withdrawal_view(advertiser_id=advertiser.id, withdrawal_id=result.withdrawal.id,
                                              chain=chain)
    assert view.withdrawal.id == result.withdrawal.id
    assert view.redeem_tx == chain.build_claim_tx(advertiser.wallet, result.claim)
    for owner in ({"advertiser_id": other.id}, {"site_id": site.id}, {}):
        with pytest.raises(ApiError) as missing:
            await portal_views.withdrawal_view(withdrawal_id=result.withdrawal.id, chain=chain, **owner)
        assert missing.value.status == 404, owner
    activity = await portal_views.advertiser_activity(advertiser.id)
    assert [item.id for item in activity.withdrawals] == [result.withdrawal.id] and activity.deposits == []
    assert (await portal_views.advertiser_activity(other.id)).withdrawals == []
