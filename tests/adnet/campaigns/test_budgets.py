"""One definition of a campaign's money (``adnet.campaigns.budgets``): funded = spent + remaining + returned for a
campaign funded any way (an allocation, the demo's funding), an expired reward undoes spending and never counts as
funding, and an advertiser's money in campaign budgets is the sum of its campaigns' remaining."""

from __future__ import annotations

from adnet.campaigns import lifecycle
from adnet.campaigns.models import Campaign
from adnet.campaigns.views import CampaignView, views
from adnet.core.amounts import Token
from adnet.money import ledger
from adnet.reporting.balances import advertiser_balance
from tests.factories import EPOCH, G, make_advertiser, make_campaign


async def _view(campaign_id: str) -> CampaignView:
    return (await views([await Campaign.get(id=campaign_id)], EPOCH))[0]


async def test_funded_spent_remaining_and_returned_never_contradict_each_other(app):
    advertiser = await make_advertiser()
    campaign = await make_campaign(advertiser, budget=10 * G, funded=0)
    other = await make_campaign(advertiser, budget=5 * G, funded=0)
    await ledger.book("demo_funding", campaign.id, [(ledger.external(Token.GS), -3 * G),
                                                    (ledger.campaign(campaign.id), 3 * G)], now=EPOCH)
    await ledger.book("campaign_allocation", "a1", [(ledger.external(Token.GS), -2 * G),
                                                    (ledger.campaign(other.id), 2 * G)], now=EPOCH)
    # An impression paid 1 G$, a reward of 1 G$ was claimed, then it expired and came back.
    outside, budget = ledger.external(Token.GS), ledger.campaign(campaign.id)
    await ledger.book("ad_billing", "b1", [(budget, -G), (outside, G)], now=EPOCH)
    await ledger.book("claim_issue", "c1", [(budget, -G), (outside, G)], now=EPOCH)
    await ledger.book("claim_expire", "c1", [(budget, G), (outside, -G)], now=EPOCH)

    shown = await _view(campaign.id)
    assert (shown.funded, shown.spent, shown.remaining, shown.returned) == (3 * G, G, 2 * G, 0)
    balance = await advertiser_balance(advertiser)
    assert balance.in_campaigns == shown.remaining + (await _view(other.id)).remaining == 4 * G

    await lifecycle.end(advertiser.wallet, campaign.id, EPOCH)
    ended = await _view(campaign.id)
    assert (ended.funded, ended.spent, ended.remaining, ended.returned) == (3 * G, G, 0, 2 * G)
    assert ended.funded == ended.spent + ended.remaining + ended.returned
