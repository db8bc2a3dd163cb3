"""Campaigns and their creatives: the settings an advertiser chooses, and the lifecycle that decides what may serve.

Lifecycle, stored in ``Campaign.status``::

    draft ──submit──► review ──approve──► approved ◄──pause / resume──► paused
                        │                    │                            │
                        └─reject (reason)─► rejected ──submit──► review   └──► ended (owner, date, budget spent)

Every move is one conditional update from the statuses it may start from, so two requests racing to move the same
campaign cannot both succeed (the loser gets 409 ``invalid_transition``). Only operators approve and reject
(``adnet.operators``); only the owning wallet does the rest.

What serving shows follows from this: ``adnet.serving`` indexes ``approved`` campaigns with their ``approved``
creatives, inside the campaign's dates, with budget left. Editing a creative of a reviewed campaign (approved or
paused) sends that creative alone back to review, so the campaign's other creatives keep serving and the edited
one serves only after an operator approves it. Settings (prices, dates, targeting, budget) are not content: they
can change while approved. Every change that affects serving calls ``serving.invalidate()``.

A derived ``state`` tells an approved campaign's phase: ``scheduled`` (before its start), ``live`` (inside its dates
and able to pay for an impression or click), ``unfunded`` (inside its dates, nothing left to pay with).

Ending: the owner ends a campaign at any time; ``settle_due`` ends campaigns whose end date has passed and those
whose whole budget is funded and spent, and returns what is left in an ended campaign's budget, and in the G$ pools
of its tasks, to the advertiser's unallocated balance. It is safe to run any number of times, concurrently: each
return is a ledger booking of the balance it read, which the ledger refuses if the balance moved meanwhile, and the
next run returns what is left (a reward claim that expires after the end returns its amount to the campaign first).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any
from urllib.parse import urlsplit

from tortoise.transactions import in_transaction

from adnet import ledger, payouts, serving
from adnet.errors import ApiError, bad_request, conflict, not_found
from adnet.ids import has_prefix, new_id
from adnet.models import (
    Campaign,
    CampaignStatus,
    Creative,
    CreativeStatus,
    LedgerPosting,
    MediaType,
    Site,
    Task,
)

log = logging.getLogger(__name__)

MAX_NAME = 120
MAX_URL = 2048
MAX_DESCRIPTION = 500
MAX_LIST = 100
MAX_DIMENSION = 10_000
ALLOCATION_KIND = "campaign_allocation"
RETURN_KIND = "budget_return"
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
CREATIVE_FIELDS = {
    "bannerUrl": "banner_url", "targetUrl": "target_url", "description": "description", "mediaType": "media_type",
    "size": "size",
}


@dataclass(frozen=True)
class CampaignView:
    """A campaign with its money (smallest units) and derived state, as the owner and operators see it."""

    campaign: Campaign
    state: str
    remaining: int
    funded: int
    returned: int
    creatives: list[Creative]
    tasks: list[Task]

    @property
    def spent(self) -> int:
        """What the campaign paid for events and rewards: funded minus what is left and what was returned."""
        return max(self.funded - self.remaining - self.returned, 0)


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


# Settings ------------------------------------------------------------------------------------------------------

def parse_settings(raw: Mapping[str, Any], *, partial: bool) -> dict[str, Any]:
    """Campaign settings from API names (``startsAt``, ``siteAllow`` …) to model values, validated one by one;
    400 naming the field. ``partial`` accepts any subset (an edit); otherwise name, startsAt, cpm, cpc and budget
    are required. Amounts are G$ decimal strings; a price may be "0" but not both; dates ISO 8601 with a zone."""
    unknown = sorted(set(raw) - set(SETTING_FIELDS))
    if unknown:
        raise bad_request("invalid_field", f"{unknown[0]}: not a campaign setting", field=unknown[0])
    if not partial:
        for name in ("name", "startsAt", "cpm", "cpc", "budget"):
            if raw.get(name) is None:
                raise bad_request("missing_field", f"{name}: this field is required", field=name)
    values: dict[str, Any] = {}
    for name, value in raw.items():
        if value is None and name not in ("endsAt", "dailyCap"):
            raise bad_request("invalid_field", f"{name}: may not be null", field=name)
        values[SETTING_FIELDS[name]] = _setting(name, value)
    return values


def _setting(name: str, value: Any) -> Any:
    if name == "name":
        if not isinstance(value, str) or not value.strip() or len(value) > MAX_NAME:
            raise bad_request("invalid_field", f"name: 1 to {MAX_NAME} characters", field=name)
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
        if any(not isinstance(label, str) or not label or len(label) > serving.MAX_PLACEMENT_LENGTH
               for label in labels):
            raise bad_request("invalid_field", f"placements: labels of 1 to {serving.MAX_PLACEMENT_LENGTH} "
                                               "characters", field=name)
        return labels
    sites = _list(value, name)
    if any(not has_prefix(site, "site") for site in sites):
        raise bad_request("invalid_field", f"{name}: a list of site ids (site_...)", field=name)
    return sites


def instant(value: Any, field: str) -> datetime:
    """An ISO 8601 instant with a time zone (or a datetime that has one); 400 ``invalid_field`` otherwise."""
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            raise bad_request("invalid_field", f"{field}: an ISO 8601 time such as 2026-05-01T00:00:00Z",
                              field=field) from None
    if not isinstance(value, datetime) or value.tzinfo is None:
        raise bad_request("invalid_field", f"{field}: an ISO 8601 time with its zone (Z or +hh:mm)", field=field)
    return value


def amount_of(value: Any, field: str, *, zero: bool) -> int:
    """A G$ decimal string in the smallest unit (``zero`` allows "0"); 400 ``invalid_amount`` naming the field."""
    if zero and value in ("0", "0.0"):
        return 0
    return payouts.amount_of(value, field)


def _list(value: Any, field: str) -> list[Any]:
    if not isinstance(value, list) or len(value) > MAX_LIST:
        raise bad_request("invalid_field", f"{field}: a list of at most {MAX_LIST} items", field=field)
    return list(dict.fromkeys(value))


def _size(value: Any, field: str) -> tuple[int, int, str]:
    """``"300x250"`` → (300, 250, "300x250")."""
    width, _, height = value.partition("x") if isinstance(value, str) else ("", "", "")
    if not (width.isdigit() and height.isdigit() and width[0] != "0" and height[0] != "0"
            and int(width) <= MAX_DIMENSION and int(height) <= MAX_DIMENSION):
        raise bad_request("invalid_field", f"{field}: a size such as 300x250", field=field)
    return int(width), int(height), f"{int(width)}x{int(height)}"


async def _check_settings(values: Mapping[str, Any], campaign: Campaign | None) -> None:
    """Rules across fields: the end after the start, a price to pay, known sites."""
    def current(field: str) -> Any:
        return values[field] if field in values else getattr(campaign, field, None)

    starts_at, ends_at = current("starts_at"), current("ends_at")
    if ends_at is not None and ends_at <= starts_at:
        raise bad_request("invalid_dates", "endsAt must be after startsAt.", field="endsAt")
    if not int(current("cpm") or 0) and not int(current("cpc") or 0):
        raise bad_request("invalid_field", "cpm: a campaign prices impressions, clicks or both", field="cpm")
    for field, name in (("site_allow", "siteAllow"), ("site_deny", "siteDeny")):
        sites = values.get(field) or []
        if sites and await Site.filter(id__in=sites).count() != len(sites):
            raise bad_request("invalid_field", f"{name}: names a site that does not exist", field=name)


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
    """The campaign ``campaign_id`` when ``wallet`` owns it: 404 ``not_found``, 403 ``not_owner``."""
    if not isinstance(campaign_id, str) or not has_prefix(campaign_id, "cmp"):
        raise not_found("campaign")
    campaign = await Campaign.get_or_none(id=campaign_id).select_related("advertiser")
    if campaign is None:
        raise not_found("campaign")
    if campaign.advertiser.wallet != wallet:
        raise ApiError(403, "not_owner", "This campaign belongs to another wallet.", field="campaignId")
    return campaign


async def edit_settings(wallet: str, campaign_id: str, raw: Mapping[str, Any], now: datetime) -> Campaign:
    """Change some settings of the wallet's campaign. Refused (409 ``campaign_locked``) while in review (what the
    operator reviews must not change under them) and once ended. The budget cannot go below what is funded."""
    campaign = await owned_campaign(wallet, campaign_id)
    values = parse_settings(raw, partial=True)
    if campaign.status in (CampaignStatus.REVIEW, CampaignStatus.ENDED):
        raise conflict("campaign_locked", f"A campaign in {campaign.status.value} cannot be edited.",
                       currentStatus=campaign.status.value)
    await _check_settings(values, campaign)
    if "budget" in values and values["budget"] < await funded(campaign.id):
        raise bad_request("invalid_field", "budget: not below what is already allocated to the campaign",
                          field="budget")
    stored = {field: Decimal(value) if field in ("cpm", "cpc", "budget", "daily_cap") and value is not None
              else value for field, value in values.items()}
    updated = await Campaign.filter(id=campaign.id, status=campaign.status).update(updated_at=now, **stored)
    if not updated:
        raise conflict("invalid_transition", "The campaign changed status meanwhile; reload and retry.")
    if "starts_at" in values or "ends_at" in values:
        await _clamp_tasks(campaign.id, values.get("starts_at", campaign.starts_at),
                           values.get("ends_at", campaign.ends_at))
    await campaign.refresh_from_db()
    serving.invalidate()
    log.info("campaign edited campaign=%s fields=%s", campaign.id, ",".join(sorted(values)))
    return campaign


async def _clamp_tasks(campaign_id: str, starts_at: datetime, ends_at: datetime | None) -> None:
    """Keep the campaign's tasks inside its (new) dates: a task never runs outside its campaign."""
    for task in await Task.filter(campaign_id=campaign_id):
        task_start = max(task.starts_at, starts_at)
        task_end = task.ends_at if ends_at is None else min(task.ends_at or ends_at, ends_at)
        if (task_start, task_end) != (task.starts_at, task.ends_at):
            await Task.filter(id=task.id).update(starts_at=task_start, ends_at=task_end)


# Creatives -----------------------------------------------------------------------------------------------------

def parse_creative(raw: Mapping[str, Any], *, partial: bool) -> dict[str, Any]:
    """Creative fields from API names to model values: http(s) URLs without credentials, a description, the
    media type (image or video) and a size ``WxH``; 400 naming the field."""
    unknown = sorted(set(raw) - set(CREATIVE_FIELDS))
    if unknown:
        raise bad_request("invalid_field", f"{unknown[0]}: not a creative field", field=unknown[0])
    if not partial:
        for name in ("bannerUrl", "targetUrl", "size"):
            if raw.get(name) is None:
                raise bad_request("missing_field", f"{name}: this field is required", field=name)
    values: dict[str, Any] = {}
    for name, value in raw.items():
        if name in ("bannerUrl", "targetUrl"):
            values[CREATIVE_FIELDS[name]] = web_url(value, name)
        elif name == "description":
            if not isinstance(value, str) or len(value) > MAX_DESCRIPTION:
                raise bad_request("invalid_field", f"description: at most {MAX_DESCRIPTION} characters", field=name)
            values["description"] = value.strip()
        elif name == "mediaType":
            if value not in {item.value for item in MediaType}:
                raise bad_request("invalid_field", "mediaType: image or video", field=name)
            values["media_type"] = MediaType(value)
        else:
            values["width"], values["height"], _ = _size(value, name)
    return values


def web_url(value: Any, field: str) -> str:
    """An absolute http or https URL with a host and no credentials (``https://good@evil`` misleads), without
    spaces or control characters; 400 ``invalid_url`` otherwise."""
    if not isinstance(value, str) or not value or len(value) > MAX_URL or any(
            char.isspace() or ord(char) < 32 or ord(char) == 127 for char in value):
        raise _invalid_url(field)
    try:
        parts = urlsplit(value)
        port_ok = parts.port is None or parts.port > 0
    except ValueError:
        raise _invalid_url(field) from None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname or "@" in parts.netloc or not port_ok:
        raise _invalid_url(field)
    return value


def _invalid_url(field: str) -> ApiError:
    return bad_request("invalid_url", f"{field}: an absolute http:// or https:// URL with a host", field=field)


async def add_creative(wallet: str, campaign_id: str, raw: Mapping[str, Any], now: datetime) -> Creative:
    """A new creative of the wallet's campaign, in review: with the campaign when it has not been reviewed yet, or
    on its own (the rest keeps serving) when the campaign is approved or paused. 409 ``campaign_locked`` while the
    campaign is in review or ended."""
    campaign = await owned_campaign(wallet, campaign_id)
    values = parse_creative(raw, partial=False)
    _check_creatives_editable(campaign)
    creative = await Creative.create(id=new_id("ad"), campaign=campaign, status=CreativeStatus.REVIEW,
                                     created_at=now, updated_at=now, **values)
    log.info("creative added creative=%s campaign=%s", creative.id, campaign.id)
    return creative


async def edit_creative(wallet: str, creative_id: Any, raw: Mapping[str, Any], now: datetime) -> Creative:
    """Change a creative of the wallet's campaign; it goes back to review (and stops serving until approved),
    while the campaign's other creatives keep serving."""
    creative = await owned_creative(wallet, creative_id)
    values = parse_creative(raw, partial=True)
    _check_creatives_editable(creative.campaign)
    await Creative.filter(id=creative.id).update(status=CreativeStatus.REVIEW, rejection_reason="", updated_at=now,
                                                 **values)
    await creative.refresh_from_db()
    serving.invalidate()
    log.info("creative edited creative=%s campaign=%s back_to_review=1", creative.id, creative.campaign.id)
    return creative


async def owned_creative(wallet: str, creative_id: Any) -> Creative:
    """The creative ``creative_id`` (with its campaign) when ``wallet`` owns its campaign: 404 / 403."""
    if not isinstance(creative_id, str) or not has_prefix(creative_id, "ad"):
        raise not_found("ad")
    creative = await Creative.get_or_none(id=creative_id).select_related("campaign__advertiser")
    if creative is None:
        raise not_found("ad")
    if creative.campaign.advertiser.wallet != wallet:
        raise ApiError(403, "not_owner", "This creative belongs to another wallet.", field="adId")
    return creative


def _check_creatives_editable(campaign: Campaign) -> None:
    if campaign.status in (CampaignStatus.REVIEW, CampaignStatus.ENDED):
        raise conflict("campaign_locked", f"The creatives of a campaign in {campaign.status.value} cannot change.",
                       currentStatus=campaign.status.value)


# Lifecycle -----------------------------------------------------------------------------------------------------

async def move(campaign: Campaign, allowed: Iterable[CampaignStatus], target: CampaignStatus, now: datetime,
               **changes: Any) -> Campaign:
    """Move ``campaign`` to ``target`` by one conditional update from the ``allowed`` statuses; 409
    ``invalid_transition`` (with the current ``currentStatus``) when it is in none of them by the time of the update."""
    allowed = tuple(allowed)
    moved = await Campaign.filter(id=campaign.id, status__in=allowed).update(status=target, updated_at=now, **changes)
    await campaign.refresh_from_db()
    if not moved:
        raise conflict("invalid_transition",
                       f"A campaign in {campaign.status.value} cannot become {target.value}.",
                       currentStatus=campaign.status.value)
    serving.invalidate()
    log.info("campaign moved campaign=%s to=%s", campaign.id, target.value)
    return campaign


async def submit(wallet: str, campaign_id: str, now: datetime) -> Campaign:
    """Send a draft or rejected campaign to review. It needs something to show (a creative or a task) and an end
    date still ahead (409 ``campaign_incomplete`` / ``invalid_dates``); its creatives are reviewed with it."""
    campaign = await owned_campaign(wallet, campaign_id)
    if campaign.status in UNREVIEWED:
        if not (await Creative.exists(campaign_id=campaign.id) or await Task.exists(campaign_id=campaign.id)):
            raise conflict("campaign_incomplete", "Add a creative or a task before submitting the campaign.")
        if campaign.ends_at is not None and campaign.ends_at <= now:
            raise bad_request("invalid_dates", "The campaign's end date has passed; move it first.", field="endsAt")
    async with in_transaction():
        campaign = await move(campaign, UNREVIEWED, CampaignStatus.REVIEW, now, rejection_reason="")
        await Creative.filter(campaign_id=campaign.id, status=CreativeStatus.REJECTED).update(
            status=CreativeStatus.REVIEW, rejection_reason="", updated_at=now)
    return campaign


async def pause(wallet: str, campaign_id: str, now: datetime) -> Campaign:
    """Stop serving an approved campaign for now; its budget stays allocated."""
    return await move(await owned_campaign(wallet, campaign_id), (CampaignStatus.APPROVED,), CampaignStatus.PAUSED,
                      now)


async def resume(wallet: str, campaign_id: str, now: datetime) -> Campaign:
    """Serve a paused campaign again (409 ``invalid_dates`` once its end date has passed: it has ended)."""
    campaign = await owned_campaign(wallet, campaign_id)
    if campaign.status == CampaignStatus.PAUSED and campaign.ends_at is not None and campaign.ends_at <= now:
        raise bad_request("invalid_dates", "The campaign's end date has passed.", field="endsAt")
    return await move(campaign, (CampaignStatus.PAUSED,), CampaignStatus.APPROVED, now)


async def end(wallet: str, campaign_id: str, now: datetime) -> Campaign:
    """End the wallet's campaign for good and return its unspent budget (and its tasks' pools) to the advertiser.
    A draft, rejected, in-review, approved or paused campaign can end; an ended one cannot end again (409)."""
    campaign = await owned_campaign(wallet, campaign_id)
    allowed = [status for status in CampaignStatus if status != CampaignStatus.ENDED]
    ends_at = now if campaign.ends_at is None or campaign.ends_at > now else campaign.ends_at
    campaign = await move(campaign, allowed, CampaignStatus.ENDED, now, ends_at=ends_at)
    await return_unspent(campaign, now)
    return campaign


async def settle_due(now: datetime, advertiser_id: str | None = None) -> list[str]:
    """End the campaigns (of one advertiser, or all) whose end date has passed or whose budget is fully funded
    and spent, and return the unspent money of every ended campaign. Returns the ids of campaigns ended now."""
    query = Campaign.filter(status__in=[*REVIEWED, CampaignStatus.ENDED])
    if advertiser_id is not None:
        query = query.filter(advertiser_id=advertiser_id)
    campaigns = await query
    remaining = await _balances([campaign.id for campaign in campaigns])
    funded_totals = await _funded_totals([campaign.id for campaign in campaigns
                                          if campaign.status == CampaignStatus.APPROVED])
    ended_now: list[str] = []
    for campaign in campaigns:
        if campaign.status == CampaignStatus.ENDED:
            continue
        by_date = campaign.ends_at is not None and campaign.ends_at <= now
        by_budget = (campaign.status == CampaignStatus.APPROVED and now >= campaign.starts_at
                     and funded_totals.get(campaign.id, 0) >= int(campaign.budget)
                     and not can_pay(campaign, remaining.get(campaign.id, 0)))
        if (by_date or by_budget) and await Campaign.filter(id=campaign.id, status=campaign.status).update(
                status=CampaignStatus.ENDED, updated_at=now):
            campaign.status = CampaignStatus.ENDED
            ended_now.append(campaign.id)
            log.info("campaign ended campaign=%s by=%s", campaign.id, "date" if by_date else "budget")
    if ended_now:
        serving.invalidate()
    for campaign in campaigns:
        if campaign.status == CampaignStatus.ENDED:
            await return_unspent(campaign, now)
    return ended_now


async def return_unspent(campaign: Campaign, now: datetime) -> int:
    """Return an ended campaign's remaining budget and its tasks' pools to the advertiser, and switch its tasks
    off. Returns the amount moved now."""
    advertiser_id = campaign.advertiser_id  # type: ignore[attr-defined]
    tasks = await Task.filter(campaign_id=campaign.id).values_list("id", flat=True)
    if tasks:
        await Task.filter(campaign_id=campaign.id, active=True).update(active=False)
    returned = await release(ledger.campaign(campaign.id), advertiser_id, now)
    for task_id in tasks:
        returned += await release(ledger.task_pool(str(task_id)), advertiser_id, now)
    return returned


async def release(account: ledger.AccountKey, advertiser_id: str, now: datetime) -> int:
    """Move what ``account`` holds back to the advertiser's unallocated balance; returns the amount. When the
    balance moves between the read and the booking (billing, a reward, a concurrent release), the ledger refuses
    the booking and nothing moves; the next call returns what is left."""
    amount = await ledger.balance(account)
    if amount <= 0:
        return 0
    try:
        async with in_transaction():
            await ledger.book(RETURN_KIND, new_id("ltx"), [(account, -amount),
                                                           (ledger.advertiser(advertiser_id), amount)],
                              now=now, memo=f"unspent {account.kind} {account.owner} returned")
    except ledger.InsufficientFunds:
        return 0
    log.info("unspent returned account=%s:%s advertiser=%s amount=%d", account.kind, account.owner, advertiser_id,
             amount)
    return amount


# Reading -------------------------------------------------------------------------------------------------------

async def funded(campaign_id: str) -> int:
    """Everything ever allocated to the campaign's budget."""
    return (await _funded_totals([campaign_id])).get(campaign_id, 0)


async def _funded_totals(campaign_ids: list[str]) -> dict[str, int]:
    return await _posted(campaign_ids, ALLOCATION_KIND)


async def _posted(campaign_ids: list[str], kind: str) -> dict[str, int]:
    """The sum of the postings of one transaction kind on each campaign's account (absolute value)."""
    if not campaign_ids:
        return {}
    rows = await LedgerPosting.filter(account__kind="campaign", account__owner__in=campaign_ids,
                                      transaction__kind=kind).values_list("account__owner", "amount")
    totals: dict[str, int] = {}
    for owner, amount in rows:
        totals[owner] = totals.get(owner, 0) + abs(int(amount))
    return totals


async def _balances(campaign_ids: list[str]) -> dict[str, int]:
    if not campaign_ids:
        return {}
    balances = await ledger.balances("campaign")
    return {campaign_id: balances.get(campaign_id, 0) for campaign_id in campaign_ids}


async def views(campaigns: list[Campaign], now: datetime, *, details: bool = False) -> list[CampaignView]:
    """Campaigns with their money and state; with ``details``, their creatives and tasks too."""
    ids = [campaign.id for campaign in campaigns]
    remaining = await _balances(ids)
    funded_totals = await _funded_totals(ids)
    returned = await _posted(ids, RETURN_KIND)
    creatives: dict[str, list[Creative]] = {}
    tasks: dict[str, list[Task]] = {}
    if details and ids:
        for creative in await Creative.filter(campaign_id__in=ids).order_by("created_at", "id"):
            creatives.setdefault(creative.campaign_id, []).append(creative)  # type: ignore[attr-defined]
        for task in await Task.filter(campaign_id__in=ids).order_by("created_at", "id"):
            tasks.setdefault(task.campaign_id, []).append(task)  # type: ignore[attr-defined]
    return [CampaignView(campaign=campaign, state=state_of(campaign, remaining.get(campaign.id, 0), now),
                         remaining=remaining.get(campaign.id, 0), funded=funded_totals.get(campaign.id, 0),
                         returned=returned.get(campaign.id, 0), creatives=creatives.get(campaign.id, []),
                         tasks=tasks.get(campaign.id, []))
            for campaign in campaigns]


async def list_campaigns(advertiser_id: str, now: datetime) -> list[CampaignView]:
    """The advertiser's campaigns, newest first, after ``settle_due`` has ended what is due."""
    await settle_due(now, advertiser_id)
    campaigns = await Campaign.filter(advertiser_id=advertiser_id).order_by("-created_at", "id")
    return await views(campaigns, now)


async def campaign_detail(wallet: str, campaign_id: str, now: datetime) -> CampaignView:
    """One of the wallet's campaigns with its creatives and tasks."""
    campaign = await owned_campaign(wallet, campaign_id)
    if await settle_due(now, campaign.advertiser.id):
        await campaign.refresh_from_db()
    return (await views([campaign], now, details=True))[0]
