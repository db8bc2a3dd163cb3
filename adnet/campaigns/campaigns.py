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

from adnet.accounts.models import Site
from adnet.campaigns.budgets import funded
from adnet.campaigns.models import Campaign, CampaignStatus
from adnet.core import changes
from adnet.core.amounts import amount_of as positive_amount
from adnet.core.errors import Conflict, Forbidden, Invalid, NotFound
from adnet.core.ids import has_prefix, new_id

log = logging.getLogger(__name__)

MAX_NAME = 120
MAX_LIST = 100
MAX_DIMENSION = 10_000
MAX_PLACEMENT_LENGTH = 64
# Statuses in which the campaign's content (creatives, tasks) is not yet reviewed and may change freely.
UNREVIEWED = (CampaignStatus.DRAFT, CampaignStatus.REJECTED)
# Statuses of a reviewed campaign that has not ended.
REVIEWED = (CampaignStatus.APPROVED, CampaignStatus.PAUSED)
# The API's names of campaign settings and the model's.
SETTING_FIELDS = {
    "name": "name", "startsAt": "starts_at", "endsAt": "ends_at", "cpm": "cpm", "cpc": "cpc", "budget": "budget",
    "dailyCap": "daily_cap", "sizes": "sizes", "placements": "placements", "siteAllow": "site_allow",
    "siteDeny": "site_deny",
}


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


def parse_settings(raw: Mapping[str, Any], *, partial: bool) -> dict[str, Any]:
    """Campaign settings from API names (``startsAt``, ``siteAllow`` …) to model values, validated one by one;
    Invalid, naming the field. ``partial`` accepts any subset (an edit); otherwise name, startsAt, cpm, cpc and budget
    are required. Amounts are G$ decimal strings; a price may be "0" but not both; dates ISO 8601 with a zone."""
    unknown = sorted(set(raw) - set(SETTING_FIELDS))
    if unknown:
        raise Invalid("invalid_field", f"{unknown[0]}: not a campaign setting", field=unknown[0])
    if not partial:
        for name in ("name", "startsAt", "cpm", "cpc", "budget"):
            if raw.get(name) is None:
                raise Invalid("missing_field", f"{name}: this field is required", field=name)
    values: dict[str, Any] = {}
    for name, value in raw.items():
        if value is None and name not in ("endsAt", "dailyCap"):
            raise Invalid("invalid_field", f"{name}: may not be null", field=name)
        values[SETTING_FIELDS[name]] = _setting(name, value)
    return values


def _setting(name: str, value: Any) -> Any:
    if name == "name":
        if not isinstance(value, str) or not value.strip() or len(value) > MAX_NAME:
            raise Invalid("invalid_field", f"name: 1 to {MAX_NAME} characters", field=name)
        return value.strip()
    if name in ("startsAt", "endsAt"):
        return None if value is None else instant(value, name)
    if name in ("cpm", "cpc"):
        return amount_of(value, name, zero=True)
    if name in ("budget", "dailyCap"):
        return None if value is None else amount_of(value, name, zero=False)
    if name == "sizes":
        return [_size(item, name)[2] for item in _list(value, name)]
    if name == "placements":
        labels = _list(value, name)
        if any(not isinstance(label, str) or not label or len(label) > MAX_PLACEMENT_LENGTH
               for label in labels):
            raise Invalid("invalid_field", f"placements: labels of 1 to {MAX_PLACEMENT_LENGTH} "
                                               "characters", field=name)
        return labels
    sites = _list(value, name)
    if any(not has_prefix(site, "site") for site in sites):
        raise Invalid("invalid_field", f"{name}: a list of site ids (site_...)", field=name)
    return sites


def instant(value: Any, field: str) -> datetime:
    """An ISO 8601 instant with a time zone (or a datetime that has one); Invalid ``invalid_field`` otherwise."""
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            raise Invalid("invalid_field", f"{field}: an ISO 8601 time such as 2026-05-01T00:00:00Z",
                          field=field) from None
    if not isinstance(value, datetime) or value.tzinfo is None:
        raise Invalid("invalid_field", f"{field}: an ISO 8601 time with its zone (Z or +hh:mm)", field=field)
    return value


def amount_of(value: Any, field: str, *, zero: bool) -> int:
    """A G$ decimal string in the smallest unit (``zero`` allows "0"); Invalid ``invalid_amount`` naming the field."""
    if zero and value in ("0", "0.0"):
        return 0
    return positive_amount(value, field)


def _list(value: Any, field: str) -> list[Any]:
    if not isinstance(value, list) or len(value) > MAX_LIST:
        raise Invalid("invalid_field", f"{field}: a list of at most {MAX_LIST} items", field=field)
    return list(dict.fromkeys(value))


def _size(value: Any, field: str) -> tuple[int, int, str]:
    """``"300x250"`` → (300, 250, "300x250")."""
    width, _, height = value.partition("x") if isinstance(value, str) else ("", "", "")
    if not (width.isdigit() and height.isdigit() and width[0] != "0" and height[0] != "0"
            and int(width) <= MAX_DIMENSION and int(height) <= MAX_DIMENSION):
        raise Invalid("invalid_field", f"{field}: a size such as 300x250", field=field)
    return int(width), int(height), f"{int(width)}x{int(height)}"


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


async def create_campaign(advertiser_id: str, raw: Mapping[str, Any], now: datetime) -> Campaign:
    """A new draft campaign with validated settings (see ``parse_settings``)."""
    values = parse_settings(raw, partial=False)
    await _check_settings(values, None)
    amounts = {field: Decimal(values[field]) for field in ("cpm", "cpc", "budget")}
    cap = values.get("daily_cap")
    campaign = await Campaign.create(
        id=new_id("cmp"), advertiser_id=advertiser_id, status=CampaignStatus.DRAFT, created_at=now, updated_at=now,
        **{**values, **amounts, "daily_cap": None if cap is None else Decimal(cap)})
    log.info("campaign created campaign=%s advertiser=%s", campaign.id, advertiser_id)
    return campaign


async def owned_campaign(wallet: str, campaign_id: Any) -> Campaign:
    """The campaign ``campaign_id`` when ``wallet`` owns it: NotFound ``not_found``, Forbidden ``not_owner``."""
    if not isinstance(campaign_id, str) or not has_prefix(campaign_id, "cmp"):
        raise NotFound.of("campaign")
    campaign = await Campaign.get_or_none(id=campaign_id).select_related("advertiser")
    if campaign is None:
        raise NotFound.of("campaign")
    if campaign.advertiser.wallet != wallet:
        raise Forbidden("not_owner", "This campaign belongs to another wallet.", field="campaignId")
    return campaign


async def edit_settings(wallet: str, campaign_id: str, raw: Mapping[str, Any], now: datetime) -> Campaign:
    """Change some settings of the wallet's campaign. Refused (Conflict ``campaign_locked``) while in review (what the
    operator reviews must not change under them) and once ended. The budget cannot go below what is funded."""
    campaign = await owned_campaign(wallet, campaign_id)
    values = parse_settings(raw, partial=True)
    if campaign.status in (CampaignStatus.REVIEW, CampaignStatus.ENDED):
        raise Conflict("campaign_locked", f"A campaign in {campaign.status.value} cannot be edited.",
                       currentStatus=campaign.status.value)
    await _check_settings(values, campaign)
    if "budget" in values and values["budget"] < await funded(campaign.id):
        raise Invalid("invalid_field", "budget: not below what is already allocated to the campaign",
                      field="budget")
    stored = {field: Decimal(value) if field in ("cpm", "cpc", "budget", "daily_cap") and value is not None
              else value for field, value in values.items()}
    updated = await Campaign.filter(id=campaign.id, status=campaign.status).update(updated_at=now, **stored)
    if not updated:
        raise Conflict("invalid_transition", "The campaign changed status meanwhile; reload and retry.")
    if "starts_at" in values or "ends_at" in values:
        await _clamp_tasks(campaign, values.get("starts_at", campaign.starts_at),
                           values.get("ends_at", campaign.ends_at))
    await campaign.refresh_from_db()
    changes.announce()
    log.info("campaign edited campaign=%s fields=%s", campaign.id, ",".join(sorted(values)))
    return campaign


async def _clamp_tasks(campaign: Campaign, starts_at: datetime, ends_at: datetime | None) -> None:
    """Keep the campaign's tasks inside its (new) dates: a task never runs outside its campaign."""
    for task in await campaign.tasks.all():
        task_start = max(task.starts_at, starts_at)
        task_end = task.ends_at if ends_at is None else min(task.ends_at or ends_at, ends_at)
        if (task_start, task_end) != (task.starts_at, task.ends_at):
            task.starts_at, task.ends_at = task_start, task_end
            await task.save(update_fields=["starts_at", "ends_at"])


