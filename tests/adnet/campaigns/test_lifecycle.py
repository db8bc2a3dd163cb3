"""Campaign rules without HTTP: concurrent lifecycle steps move a campaign once, settling ends what is due and
returns unspent money exactly once, also when run concurrently."""

from __future__ import annotations

import asyncio
from datetime import timedelta

from adnet.campaigns import campaigns, lifecycle
from adnet.campaigns.models import Campaign, CampaignStatus
from adnet.core.errors import DomainError
from adnet.money import ledger
from adnet.money.models import LedgerTransaction
from adnet.tasks.models import TaskKind
from tests.factories import EPOCH, G, make_campaign, make_task


async def test_concurrent_pauses_move_the_campaign_once(app):
    campaign = await make_campaign()
    wallet = (await campaign.advertiser).wallet
    results = await asyncio.gather(*(lifecycle.pause(wallet, campaign.id, EPOCH) for _ in range(10)),
                                   return_exceptions=True)
    refused = [result for result in results if isinstance(result, DomainError)]
    assert len(refused) == 9 and {error.code for error in refused} == {"invalid_transition"}
    assert (await Campaign.get(id=campaign.id)).status == CampaignStatus.PAUSED


async def test_settling_ends_due_campaigns_and_returns_once_also_concurrently(app):
    due = await make_campaign(ends_at=EPOCH + timedelta(hours=1), budget=30 * G)
    task = await make_task(kind=TaskKind.QUIZ, campaign=due, config={"question": "?", "answers": ["a"]}, pool=5 * G)
    running = await make_campaign(budget=30 * G)
    later = EPOCH + timedelta(hours=2)
    ended = await asyncio.gather(*(lifecycle.settle_due(later) for _ in range(8)))
    assert sorted(campaign_id for result in ended for campaign_id in result) == [due.id]
    assert (await Campaign.get(id=due.id)).status == CampaignStatus.ENDED
    assert (await Campaign.get(id=running.id)).status == CampaignStatus.APPROVED
    advertiser_id = due.advertiser_id
    assert await ledger.balance(ledger.advertiser(advertiser_id)) == 35 * G
    assert await ledger.balance(ledger.campaign(due.id)) == 0
    assert await ledger.balance(ledger.task_pool(task.id)) == 0
    assert await LedgerTransaction.filter(kind="budget_return").count() == 2
    assert not (await task.__class__.get(id=task.id)).active


def test_states_of_an_approved_campaign():
    campaign = Campaign(status=CampaignStatus.APPROVED, starts_at=EPOCH, ends_at=EPOCH + timedelta(days=1),
                        cpm=2 * G, cpc=0)
    assert campaigns.state_of(campaign, G, EPOCH - timedelta(seconds=1)) == "scheduled"
    assert campaigns.state_of(campaign, G, EPOCH) == "live"
    assert campaigns.state_of(campaign, 2 * G // 1000 - 1, EPOCH) == "unfunded"
    assert campaigns.state_of(campaign, G, EPOCH + timedelta(days=1)) == "ended"
