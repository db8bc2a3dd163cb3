"""Campaigns as their owner and operators see them: money (funded, remaining, spent, returned), state, and with
details, creatives, tasks and conversion goals. Reading only: nothing here settles what is due (the jobs do)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from adnet.accounts.models import MemberRole
from adnet.campaigns.budgets import funded_totals, returned_totals
from adnet.campaigns.campaigns import owned_campaign, state_of
from adnet.campaigns.goals import goals_of
from adnet.campaigns.models import Campaign, ConversionGoal, Creative
from adnet.money import ledger


@dataclass(frozen=True)
class CampaignView:
    """A campaign with its money (smallest units) and derived state, as the owner and operators see it."""

    campaign: Campaign
    state: str
    remaining: int
    funded: int
    returned: int
    creatives: list[Creative]
    tasks: list[Any]
    goals: list[ConversionGoal]

    @property
    def spent(self) -> int:
        """What the campaign paid for events and rewards: funded minus what is left and what was returned."""
        return max(self.funded - self.remaining - self.returned, 0)


async def views(campaigns: list[Campaign], now: datetime, *, details: bool = False) -> list[CampaignView]:
    """Campaigns with their money and state; with ``details``, their creatives, tasks and goals too."""
    ids = [campaign.id for campaign in campaigns]
    balances = await ledger.balances("campaign") if ids else {}
    allocated = await funded_totals(ids)
    returned = await returned_totals(ids)
    creatives: dict[str, list[Creative]] = {}
    tasks: dict[str, list[Any]] = {}
    goals: dict[str, list[ConversionGoal]] = {}
    if details and ids:
        for goal in await goals_of(ids):
            goals.setdefault(goal.campaign_id, []).append(goal)
        for creative in await Creative.filter(campaign_id__in=ids).order_by("created_at", "id"):
            creatives.setdefault(creative.campaign_id, []).append(creative)
        for campaign in campaigns:
            tasks[campaign.id] = await campaign.tasks.all().order_by("created_at", "id")
    return [CampaignView(campaign=campaign, state=state_of(campaign, balances.get(campaign.id, 0), now),
                         remaining=balances.get(campaign.id, 0), funded=allocated.get(campaign.id, 0),
                         returned=returned.get(campaign.id, 0), creatives=creatives.get(campaign.id, []),
                         tasks=tasks.get(campaign.id, []), goals=goals.get(campaign.id, []))
            for campaign in campaigns]


async def list_campaigns(advertiser_id: str, now: datetime) -> list[CampaignView]:
    """The advertiser's campaigns, newest first."""
    campaigns = await Campaign.filter(advertiser_id=advertiser_id).order_by("-created_at", "id")
    return await views(campaigns, now)


async def campaign_detail(wallet: str, campaign_id: str, now: datetime) -> CampaignView:
    """One campaign of an advertiser account the wallet owns or is a member of (any role), with its creatives,
    tasks and goals."""
    return (await views([await owned_campaign(wallet, campaign_id, MemberRole.VIEWER)], now, details=True))[0]
