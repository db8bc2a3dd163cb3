"""Campaigns: the settings an advertiser chooses (prices, budget, dates, targeting), and what a campaign's state is.

A campaign's lifecycle (review, pause, end) is ``adnet.campaigns.lifecycle``'s, its creatives
``adnet.campaigns.creatives``', its money ``adnet.campaigns.funding``'s and ``adnet.campaigns.views``'.

Settings are not content: they can change while the campaign is approved. A derived ``state`` tells an approved
campaign's phase: ``scheduled`` (before its start), ``live`` (inside its dates and able to pay for an impression or
click), ``unfunded`` (inside its dates, nothing left to pay with). Every change that affects serving is announced
(``adnet.core.changes``), so this process's serving index picks it up at once.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from datetime import datetime
from decimal import Decimal
from typing import Any

from adnet.accounts.members import require_role, role_in
from adnet.accounts.models import MemberRole, Site
from adnet.campaigns import taxonomy
from adnet.campaigns.budgets import funded
from adnet.campaigns.commands import CampaignChanges, NewCampaign
from adnet.campaigns.models import Campaign, CampaignStatus
from adnet.campaigns.targeting import Targeting
from adnet.core import changes
from adnet.core.errors import Conflict, Invalid, NotFound
from adnet.core.ids import has_prefix, new_id

log = logging.getLogger(__name__)

# Statuses in which the campaign's content (creatives, tasks) is not yet reviewed and may change freely.
UNREVIEWED = (CampaignStatus.DRAFT, CampaignStatus.REJECTED)
# Statuses of a reviewed campaign that has not ended.
REVIEWED = (CampaignStatus.APPROVED, CampaignStatus.PAUSED)
_AMOUNTS = frozenset({"cpm", "cpc", "budget", "daily_cap"})


def impression_price(campaign: Campaign) -> int:
    """What one billable impression costs (CPM / 1000, rounded down as tracking bills it)."""
    return int(campaign.cpm) // 1000


def can_pay(campaign: Campaign, remaining: int) -> bool:
    """Whether ``remaining`` still buys the campaign's cheapest priced action (an impression, or a click)."""
    prices = [price for price in (impression_price(campaign), int(campaign.cpc)) if price > 0]
    return remaining > 0 and remaining >= min(prices, default=0)


def state_of(campaign: Campaign, remaining: int, now: datetime) -> str:
    """The stored status, or for an approved campaign its phase: scheduled, live, unfunded or ended (by date,
    before ``settle_due`` has stored it)."""
    if campaign.status != CampaignStatus.APPROVED:
        return campaign.status.value
    if now < campaign.starts_at:
        return "scheduled"
    if campaign.ends_at is not None and now >= campaign.ends_at:
        return CampaignStatus.ENDED.value
    return "live" if can_pay(campaign, remaining) else "unfunded"


async def _check_settings(values: Mapping[str, Any], campaign: Campaign | None) -> None:
    """Rules across fields: the end after the start, a price to pay, known sites."""
    def current(field: str) -> Any:
        return values[field] if field in values else getattr(campaign, field, None)

    starts_at, ends_at = current("starts_at"), current("ends_at")
    if ends_at is not None and ends_at <= starts_at:
        raise Invalid("invalid_dates", "endsAt must be after startsAt.", field="endsAt")
    if not int(current("cpm") or 0) and not int(current("cpc") or 0):
        raise Invalid("invalid_field", "cpm: a campaign prices impressions, clicks or both", field="cpm")
    for field, name in (("site_allow", "siteAllow"), ("site_deny", "siteDeny")):
        sites = values.get(field) or []
        if sites and await Site.filter(id__in=sites).count() != len(sites):
            raise Invalid("invalid_field", f"{name}: names a site that does not exist", field=name)


async def create_campaign(advertiser_id: str, settings: NewCampaign, now: datetime) -> Campaign:
    """A new draft campaign with ``settings``."""
    values = {**settings.model_dump(by_alias=False), "targeting": settings.targeting}  # stored as its JSON
    await _check_settings(values, None)
    campaign = await Campaign.create(
        id=new_id("cmp"), advertiser_id=advertiser_id, status=CampaignStatus.DRAFT, created_at=now, updated_at=now,
        **_stored(values))
    log.info("campaign created campaign=%s advertiser=%s", campaign.id, advertiser_id)
    return campaign


async def owned_campaign(wallet: str, campaign_id: Any, need: MemberRole = MemberRole.MANAGER) -> Campaign:
    """The campaign ``campaign_id`` when ``wallet`` owns its advertiser account or is a member with at least
    ``need`` (a manager unless said: reads ask for a viewer): NotFound ``not_found``, Forbidden ``not_owner`` or
    ``insufficient_role`` (``adnet.accounts.members``)."""
    if not isinstance(campaign_id, str) or not has_prefix(campaign_id, "cmp"):
        raise NotFound.of("campaign")
    campaign = await Campaign.get_or_none(id=campaign_id).select_related("advertiser")
    if campaign is None:
        raise NotFound.of("campaign")
    require_role(await role_in(campaign.advertiser, wallet), need, "campaign")
    return campaign


async def edit_settings(wallet: str, campaign_id: str, settings: CampaignChanges, now: datetime) -> Campaign:
    """Change some settings of the wallet's campaign. Refused (Conflict ``campaign_locked``) while in review (what the
    operator reviews must not change under them) and once ended. The budget cannot go below what is funded."""
    campaign = await owned_campaign(wallet, campaign_id)
    values = settings.changed()
    if campaign.status in (CampaignStatus.REVIEW, CampaignStatus.ENDED):
        raise Conflict("campaign_locked", f"A campaign in {campaign.status.value} cannot be edited.",
                       currentStatus=campaign.status.value)
    await _check_settings(values, campaign)
    if "budget" in values and values["budget"] < await funded(campaign.id):
        raise Invalid("invalid_field", "budget: not below what is already allocated to the campaign",
                      field="budget")
    updated = await Campaign.filter(id=campaign.id, status=campaign.status).update(updated_at=now,
                                                                                   **_stored(values))
    if not updated:
        raise Conflict("invalid_transition", "The campaign changed status meanwhile; reload and retry.")
    if "starts_at" in values or "ends_at" in values:
        await _clamp_tasks(campaign, values.get("starts_at", campaign.starts_at),
                           values.get("ends_at", campaign.ends_at))
    await campaign.refresh_from_db()
    changes.announce(campaign.id)
    log.info("campaign edited campaign=%s fields=%s", campaign.id, ",".join(sorted(values)))
    return campaign


def _stored(values: Mapping[str, Any]) -> dict[str, Any]:
    """Settings as the model stores them: amounts in its decimal columns, targeting as JSON, a category with its
    IAB id."""
    stored = {field: Decimal(value) if field in _AMOUNTS and value is not None
              else value.stored() if isinstance(value, Targeting) else value
              for field, value in values.items()}
    if stored.get("category") is not None:
        stored["category_iab_id"] = taxonomy.iab_id(str(stored["category"]))
    return stored


async def _clamp_tasks(campaign: Campaign, starts_at: datetime, ends_at: datetime | None) -> None:
    """Keep the campaign's tasks inside its (new) dates: a task never runs outside its campaign."""
    for task in await campaign.tasks.all():
        task_start = max(task.starts_at, starts_at)
        task_end = task.ends_at if ends_at is None else min(task.ends_at or ends_at, ends_at)
        if (task_start, task_end) != (task.starts_at, task.ends_at):
            task.starts_at, task.ends_at = task_start, task_end
            await task.save(update_fields=["starts_at", "ends_at"])


