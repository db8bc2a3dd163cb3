"""A site's balance and figures count ad revenue as earned, and not the money that only moves (top-ups,
exchanges, withdrawals)."""

from __future__ import annotations

from tortoise.transactions import in_transaction

from adnet.money import ledger
from adnet.reporting.balances import site_balance
from adnet.reporting.dashboard import list_sites
from adnet.reporting.earnings import NOT_EARNINGS
from tests.factories import G, fund, make_site, wallet_address


async def test_earned_counts_revenue_and_not_the_money_that_only_moves(app, clock):
    site = await make_site()
    owner = (await site.publisher).wallet
    await fund(ledger.site(site.id), 6 * G)  # revenue (any kind but the movements below)
    async with in_transaction():
        await ledger.book("deposit", "0x" + "aa" * 32, [(ledger.external("G$"), -5 * G), (ledger.site(site.id), 5 * G)],
                          now=clock.now())
    async with in_transaction():
        await ledger.book("exchange", "ex_test", [(ledger.site(site.id), -G), (ledger.external("G$"), G)],
                          now=clock.now())
    assert "deposit" in NOT_EARNINGS and "exchange" in NOT_EARNINGS
    money = await site_balance(owner, site.id)
    assert (money.earned, money.claimable) == (6 * G, 10 * G)
    [summary] = await list_sites(owner, clock.now())
    assert (summary.lifetime.earned, summary.today.earned) == (6 * G, 6 * G)
    assert await list_sites(wallet_address(), clock.now()) == []
