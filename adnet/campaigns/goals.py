"""An advertiser's conversion goals, per campaign.

A goal belongs to its campaign's review, as creatives and tasks do: it is added, removed and its content (name,
event, whether a pixel may report it) changed only while the campaign is unreviewed (draft or rejected), so an
operator sees it before any conversion counts; its terms (click window, wallet cap, CPA), which are money and
limits rather than content, change until the campaign ends. Conversions are recorded only for goals of a campaign
an operator approved (``adnet.conversions.recording``). An on-chain goal's contract, topic0 and fields are content:
an operator reviews which event pays (``adnet.campaigns.goal_events``).
"""

from __future__ import annotations

import logging
from datetime import datetime
from decimal import Decimal
from typing import Any

from tortoise.exceptions import IntegrityError

from adnet.accounts.members import require_role, role_in
from adnet.accounts.models import MemberRole
from adnet.campaigns.campaigns import UNREVIEWED, owned_campaign
from adnet.campaigns.commands import ONCHAIN_FIELDS, GoalChanges, NewGoal
from adnet.campaigns.goal_events import spec_refusal
from adnet.campaigns.models import Campaign, CampaignStatus, ConversionGoal, GoalKind
from adnet.core.errors import Conflict, Invalid, NotFound
from adnet.core.ids import has_prefix, new_id

log = logging.getLogger(__name__)


async def add_goal(wallet: str, campaign_id: str, goal: NewGoal, now: datetime) -> ConversionGoal:
    """A new goal of the wallet's unreviewed campaign (Conflict ``campaign_locked`` once submitted,
    ``goal_exists`` when the campaign already has a goal of that event)."""
    campaign = await owned_campaign(wallet, campaign_id)
    _check_unreviewed(campaign)
    values = _stored(goal.model_dump())
    try:
        added = await ConversionGoal.create(id=new_id("goal"), campaign=campaign, created_at=now, updated_at=now,
                                            **values)
    except IntegrityError:
        raise Conflict("goal_exists", "This campaign already has a goal for that event.", field="event") from None
    log.info("goal added goal=%s campaign=%s event=%s", added.id, campaign.id, added.event)
    return added


async def edit_goal(wallet: str, goal_id: Any, changes: GoalChanges, now: datetime) -> ConversionGoal:
    """Change a goal: its content while the campaign is unreviewed, its terms until the campaign ends (Conflict
    ``campaign_locked`` otherwise)."""
    goal = await owned_goal(wallet, goal_id)
    values = changes.changed()
    if values.keys() & GoalChanges.CONTENT:
        _check_unreviewed(goal.campaign)
    elif goal.campaign.status == CampaignStatus.ENDED:
        raise Conflict("campaign_locked", "An ended campaign's goals cannot change.", currentStatus="ended")
    merged = {name: values.get(name, getattr(goal, name)) for name in ONCHAIN_FIELDS}
    refused = spec_refusal(onchain=goal.kind == GoalKind.ONCHAIN, **{
        **merged, "min_amount": None if merged["min_amount"] is None else int(merged["min_amount"])})
    if refused is not None:
        raise Invalid("invalid_goal", f"{refused[0]}: {refused[1]}", field=refused[0])
    values = _stored(values)
    try:
        await ConversionGoal.filter(id=goal.id).update(updated_at=now, **values)
    except IntegrityError:
        raise Conflict("goal_exists", "This campaign already has a goal for that event.", field="event") from None
    await goal.refresh_from_db()
    log.info("goal edited goal=%s fields=%s", goal.id, ",".join(sorted(values)))
    return goal


async def delete_goal(wallet: str, goal_id: Any) -> None:
    """Remove a goal of an unreviewed campaign (Conflict ``campaign_locked`` once submitted)."""
    goal = await owned_goal(wallet, goal_id)
    _check_unreviewed(goal.campaign)
    await goal.delete()
    log.info("goal deleted goal=%s campaign=%s", goal.id, goal.campaign.id)


async def campaign_goals(wallet: str, campaign_id: str) -> list[ConversionGoal]:
    """The goals of a campaign the wallet may read (any role), oldest first."""
    campaign = await owned_campaign(wallet, campaign_id, MemberRole.VIEWER)
    return await goals_of([campaign.id])


async def goals_of(campaign_ids: list[str]) -> list[ConversionGoal]:
    """The goals of these campaigns, oldest first (for the campaign views operators review)."""
    return await ConversionGoal.filter(campaign_id__in=campaign_ids).order_by("created_at", "id")


async def owned_goal(wallet: str, goal_id: Any, need: MemberRole = MemberRole.MANAGER) -> ConversionGoal:
    """The goal ``goal_id`` (with its campaign and advertiser) when the wallet holds at least ``need`` on its
    campaign's account: NotFound, Forbidden ``not_owner`` / ``insufficient_role`` otherwise."""
    goal = await ConversionGoal.get_or_none(id=goal_id).select_related(
        "campaign__advertiser") if has_prefix(goal_id, "goal") else None
    if goal is None:
        raise NotFound.of("goal")
    require_role(await role_in(goal.campaign.advertiser, wallet), need, "goal")
    return goal


def _stored(values: dict[str, Any]) -> dict[str, Any]:
    """A goal's values as its columns hold them: amounts as decimals."""
    return {name: Decimal(value) if name in ("cpa", "min_amount") and value is not None else value
            for name, value in values.items()}


def _check_unreviewed(campaign: Campaign) -> None:
    if campaign.status not in UNREVIEWED:
        raise Conflict("campaign_locked", f"A campaign in {campaign.status.value} keeps the goals it was reviewed "
                                          "with; only their window, cap and price change.",
                       currentStatus=campaign.status.value)
