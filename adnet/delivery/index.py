"""The serving index: one consistent snapshot, in memory, of everything a serve decision needs, so that ``GET
/api/serve`` touches no database: active sites (domain, verification, floors and house ads), approved campaigns
with their approved creatives, remaining budgets, today's spend and attached tasks, and standalone units (with
their campaign's site rules).

``build_index`` reads it whole in a handful of queries whatever the traffic; ``refresh_index`` brings only the
entries of named sites, campaigns and tasks up to date (what ``adnet.core.changes`` announcements name), in the same
queries narrowed to them, and swaps them in without an await between the first and the last, so a serve decision
never sees half of a change. ``adnet.delivery.serving.Server`` holds the current index: it refreshes what is
announced, reads every campaign's remaining budget and today's spend every ``BUDGET_SECONDS`` (tracking in other
processes lowers them), and rebuilds the whole index only every ``REBUILD_SECONDS``, for what another process
changed without a Redis to tell this one.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cached_property
from typing import Any

from tortoise.expressions import Q
from tortoise.queryset import QuerySet

from adnet.accounts.models import Site
from adnet.campaigns.eligibility import controls_of
from adnet.campaigns.models import Campaign, CampaignStatus, Category, Creative, CreativeStatus, Rotation
from adnet.core.ids import has_prefix
from adnet.db import sql
from adnet.delivery.caps import spent_today
from adnet.delivery.models import HouseAd
from adnet.delivery.sites import HouseAdEntry, SiteEntry
from adnet.delivery.targeting import NO_RULES, Rules, compile_rules
from adnet.money import ledger
from adnet.tasks.config import TaskView, task_view
from adnet.tasks.models import Task, TaskKind, TaskSurface

log = logging.getLogger(__name__)

BUDGET_SECONDS = 3.0
REBUILD_SECONDS = 30.0
UNIT_KINDS = frozenset({TaskKind.POLL, TaskKind.FEEDBACK, TaskKind.SURVEY})
# What a site's entry is read from (``site_entry``).
SITE_FIELDS = ("id", "domain", "verified", "floor_cpm", "placement_floors", "controls")


@dataclass(frozen=True)
class CreativeEntry:
    id: str
    campaign_id: str
    banner_url: str
    target_url: str
    description: str
    media_type: str
    size: str
    weight: int = 1


@dataclass(frozen=True)
class TaskEntry:
    """An attached task or standalone unit, with its view (its config parsed) made once per rebuild and, for a unit,
    its campaign's facts that the rule of where it may show reads (``adnet.campaigns.eligibility.CampaignTerms``)."""

    id: str
    campaign_id: str | None
    kind: TaskKind
    starts_at: datetime
    ends_at: datetime | None
    max_per_wallet: int
    view: TaskView
    order: tuple[datetime, str]
    site_allow: frozenset[str] = frozenset()
    site_deny: frozenset[str] = frozenset()
    advertiser_id: str | None = None
    category: str | None = None

    def live(self, now: datetime) -> bool:
        return self.starts_at <= now and (self.ends_at is None or now < self.ends_at)


@dataclass
class CampaignEntry:
    id: str
    cpm: int
    cpc: int
    budget: int
    remaining: int
    daily_cap: int | None
    spent_today: int
    starts_at: datetime
    ends_at: datetime | None
    sizes: frozenset[str]
    placements: frozenset[str]
    site_allow: frozenset[str]
    site_deny: frozenset[str]
    creatives: tuple[CreativeEntry, ...]
    tasks: tuple[TaskEntry, ...]
    targeting: Rules = NO_RULES
    frequency_cap: int | None = None
    frequency_seconds: int = 86_400
    rotation: Rotation = Rotation.EVEN
    advertiser_id: str = ""
    category: str = Category.OTHER.value
    click_param: str = "adnet_click"

    @property
    def impression_cost(self) -> int:
        return self.cpm // 1000

    @cached_property
    def flight_seconds(self) -> float | None:
        """How long the campaign runs, in seconds; None when it has no end."""
        return None if self.ends_at is None else (self.ends_at - self.starts_at).total_seconds()

    @cached_property
    def cheapest_event(self) -> int:
        """What the cheapest event it pays for costs: an impression, or a click when it prices only clicks (0 when
        it prices neither)."""
        return min((cost for cost in (self.impression_cost, self.cpc) if cost > 0), default=0)

    def has_budget(self) -> bool:
        """Whether the campaign can still pay for an impression (or a click when it prices only clicks), within its
        budget and what its daily cap leaves of today."""
        return self.budget_refusal() is None

    def budget_refusal(self) -> str | None:
        """Why the campaign cannot pay for its cheapest event now: ``budget_exhausted`` (what its budget has left
        is too little) or ``daily_cap_reached`` (what its daily cap leaves of today is); None when it can."""
        cheapest = self.cheapest_event
        if self.remaining <= 0 or self.remaining < cheapest:
            return "budget_exhausted"
        if self.daily_cap is not None and (self.daily_cap - self.spent_today <= 0
                                           or self.daily_cap - self.spent_today < cheapest):
            return "daily_cap_reached"
        return None

    def live(self, now: datetime) -> bool:
        return self.flight_refusal(now) is None

    def flight_refusal(self, now: datetime) -> str | None:
        """``not_started`` before its start, ``ended`` from its end; None inside its flight."""
        if self.starts_at > now:
            return "not_started"
        return "ended" if self.ends_at is not None and now >= self.ends_at else None

    @property
    def campaign_id(self) -> str:
        """Its id, as the rule of where it may run reads it (``adnet.campaigns.eligibility.CampaignTerms``)."""
        return self.id

    def fits(self, placement: str) -> bool:
        """Whether it runs in ``placement`` (all of them when it names none)."""
        return not self.placements or placement in self.placements

    def creatives_for(self, size: str | None) -> list[CreativeEntry]:
        if size is None:
            return list(self.creatives)
        if self.sizes and size not in self.sizes:
            return []
        return [creative for creative in self.creatives if creative.size == size]


@dataclass
class Index:
    """One consistent snapshot of what can be served."""

    sites: dict[str, SiteEntry] = field(default_factory=dict)
    campaigns: dict[str, CampaignEntry] = field(default_factory=dict)
    creatives: dict[str, CreativeEntry] = field(default_factory=dict)
    units: tuple[TaskEntry, ...] = ()
    built_at: float = 0.0
    # Billed [impressions, clicks] per creative of the campaigns that rotate by click-through rate.
    creative_stats: dict[str, list[int]] = field(default_factory=dict)
    # What the rules that change only with the index's entries leave for a slot (``adnet.delivery.selection.offers``),
    # worked out once per slot and forgotten whenever entries are replaced.
    offers: dict[Any, Any] = field(default_factory=dict)

    def replace(self, scope: Scope, fresh: Index) -> None:
        """Put ``fresh``'s entries of ``scope`` in place of this index's (dropping those ``fresh`` lacks: no longer
        servable), all without an await."""
        self.offers.clear()
        for site_id in scope.sites:
            site = fresh.sites.get(site_id)
            if site is None:
                self.sites.pop(site_id, None)
            else:
                self.sites[site_id] = site
        for campaign_id in scope.campaigns:
            old = self.campaigns.pop(campaign_id, None)
            for creative in old.creatives if old else ():
                self.creatives.pop(creative.id, None)
                self.creative_stats.pop(creative.id, None)
            new = fresh.campaigns.get(campaign_id)
            if new is not None:
                self.campaigns[campaign_id] = new
                self.creatives.update((creative.id, creative) for creative in new.creatives)
                self.creative_stats.update((creative.id, fresh.creative_stats[creative.id])
                                           for creative in new.creatives if creative.id in fresh.creative_stats)
        kept = [unit for unit in self.units if unit.id not in scope.units and unit.campaign_id not in scope.campaigns]
        self.units = tuple(sorted(kept + list(fresh.units), key=lambda unit: unit.order))

    def update_budgets(self, remaining: dict[str, int], spent: dict[str, int]) -> None:
        """Every campaign's remaining budget and today's spend as the database has them now."""
        for campaign in self.campaigns.values():
            campaign.remaining = remaining.get(campaign.id, 0)
            campaign.spent_today = spent.get(campaign.id, 0)


@dataclass(frozen=True)
class Scope:
    """What a refresh reads: these sites, these campaigns (with their creatives, tasks and units), and these
    standalone units of no campaign."""

    sites: frozenset[str] = frozenset()
    campaigns: frozenset[str] = frozenset()
    units: frozenset[str] = frozenset()


async def build_index(now: datetime) -> Index:
    """Read everything servable: a handful of queries, whatever the traffic."""
    return await _read(now, None)


async def refresh_index(index: Index, changed: Iterable[str], now: datetime) -> None:
    """Bring the entries ``changed`` names (site, campaign, creative and task ids) up to date in ``index``."""
    scope = await _scope(changed)
    index.replace(scope, await _read(now, scope))


async def read_budgets(now: datetime) -> tuple[dict[str, int], dict[str, int]]:
    """Every campaign's remaining budget and today's spend (``Index.update_budgets``): two queries."""
    return await ledger.balances("campaign"), await spent_today(now)


async def _scope(changed: Iterable[str]) -> Scope:
    ids = set(changed)
    sites = {item for item in ids if has_prefix(item, "site")}
    campaigns = {item for item in ids if has_prefix(item, "cmp")}
    creatives = [item for item in ids if has_prefix(item, "ad")]
    if creatives:
        campaigns.update(str(campaign_id) for campaign_id
                         in await Creative.filter(id__in=creatives).values_list("campaign_id", flat=True))
    units: set[str] = set()
    tasks = [item for item in ids if has_prefix(item, "task")]
    for task_id, campaign_id in await Task.filter(id__in=tasks).values_list("id", "campaign_id") if tasks else ():
        (campaigns if campaign_id else units).add(str(campaign_id or task_id))
    return Scope(frozenset(sites), frozenset(campaigns), frozenset(units))


async def _read(now: datetime, scope: Scope | None) -> Index:
    """The index of ``scope``'s entries (everything when None)."""
    sites_query = Site.filter(active=True)
    campaigns_query = Campaign.filter(Q(ends_at__isnull=True) | Q(ends_at__gt=now), status=CampaignStatus.APPROVED)
    tasks_query = Task.filter(Q(ends_at__isnull=True) | Q(ends_at__gt=now), active=True)
    if scope is not None:
        sites_query = sites_query.filter(id__in=list(scope.sites))
        campaigns_query = campaigns_query.filter(id__in=list(scope.campaigns))
        tasks_query = tasks_query.filter(Q(campaign_id__in=list(scope.campaigns)) | Q(id__in=list(scope.units)))
    sites = await _read_sites(sites_query, scope) if _wanted(scope, "sites") else {}
    campaigns = await campaigns_query if _wanted(scope, "campaigns") else []
    campaign_ids = [campaign.id for campaign in campaigns]
    creatives = await _read_creatives(campaign_ids)
    remaining, spent = await _read_campaign_budgets(now, scope, campaign_ids)
    tasks = await tasks_query if _wanted(scope, "campaigns", "units") else []
    units, attached = _task_entries(tasks, {campaign.id: campaign for campaign in campaigns})
    best_ctr = [campaign.id for campaign in campaigns if campaign.rotation == Rotation.BEST_CTR]
    index = Index(sites=sites, units=tuple(units), built_at=time.monotonic(),
                  creative_stats=await creative_stats(best_ctr) if best_ctr else {})
    for campaign in campaigns:
        try:
            entry = campaign_entry(campaign, creatives=tuple(creatives.get(campaign.id, ())),
                                   tasks=tuple(attached.get(campaign.id, ())),
                                   remaining=remaining.get(campaign.id, 0), spent_today=spent.get(campaign.id, 0))
        except ValueError:
            log.warning("campaign targeting invalid, not served campaign_id=%s", campaign.id)
            continue
        index.campaigns[campaign.id] = entry
        index.creatives.update((creative.id, creative) for creative in entry.creatives)
    return index


async def _read_creatives(campaign_ids: list[str]) -> dict[str, list[CreativeEntry]]:
    """The approved creatives of the campaigns, by campaign: one query."""
    creatives: dict[str, list[CreativeEntry]] = {}
    for creative in await Creative.filter(campaign_id__in=campaign_ids, status=CreativeStatus.APPROVED) \
            if campaign_ids else ():
        creatives.setdefault(creative.campaign_id, []).append(_creative_entry(creative))
    return creatives


async def _read_campaign_budgets(now: datetime, scope: Scope | None,
                                 campaign_ids: list[str]) -> tuple[dict[str, int], dict[str, int]]:
    """The remaining budget and today's spend of every campaign (``scope`` None), or of those read."""
    if scope is None:
        return await read_budgets(now)
    remaining = {key.owner: amount for key, amount in
                 (await ledger.balances_of(ledger.campaign(campaign_id) for campaign_id in campaign_ids)).items()}
    return remaining, await spent_today(now, campaign_ids) if campaign_ids else {}


def _task_entries(tasks: Iterable[Task],
                  approved: Mapping[str, Campaign]) -> tuple[list[TaskEntry], dict[str, list[TaskEntry]]]:
    """The standalone units and, by campaign, the attached tasks that may be served, in the order they were made:
    a task of a campaign that is not ``approved`` is left out, and so is one whose settings are invalid."""
    units: list[TaskEntry] = []
    attached: dict[str, list[TaskEntry]] = {}
    for task in sorted(tasks, key=lambda task: (task.created_at, task.id)):
        campaign_id = task.campaign_id
        owner = approved.get(campaign_id) if campaign_id is not None else None
        try:
            entry = task_entry(task, owner)
        except ValueError:
            log.warning("task config invalid, not served task_id=%s", task.id)
            continue
        if task.surface == TaskSurface.STANDALONE and task.kind in UNIT_KINDS:
            if campaign_id is None or owner is not None:
                units.append(entry)
        elif task.surface == TaskSurface.ATTACHED and campaign_id is not None and owner is not None:
            attached.setdefault(campaign_id, []).append(entry)
    return units, attached


def task_entry(task: Task, owner: Campaign | None) -> TaskEntry:
    """A task's entry, with the site rules and owner of its campaign (``owner``; None for a unit of no campaign,
    or of a campaign not served). ValueError when its settings are invalid."""
    return TaskEntry(id=task.id, campaign_id=task.campaign_id, kind=task.kind,
                     starts_at=task.starts_at.astimezone(UTC), ends_at=_utc(task.ends_at),
                     max_per_wallet=task.max_per_wallet, view=task_view(task), order=(task.created_at, task.id),
                     site_allow=frozenset(owner.site_allow or ()) if owner else frozenset(),
                     site_deny=frozenset(owner.site_deny or ()) if owner else frozenset(),
                     advertiser_id=owner.advertiser_id if owner else None,
                     category=owner.category.value if owner else None)


def campaign_entry(campaign: Campaign, *, creatives: tuple[CreativeEntry, ...], tasks: tuple[TaskEntry, ...],
                   remaining: int, spent_today: int) -> CampaignEntry:
    """A campaign's entry with its creatives, attached tasks and money. ValueError when its targeting is
    invalid."""
    return CampaignEntry(
        id=campaign.id, cpm=int(campaign.cpm), cpc=int(campaign.cpc), budget=int(campaign.budget),
        remaining=remaining, daily_cap=int(campaign.daily_cap) if campaign.daily_cap is not None else None,
        spent_today=spent_today, starts_at=campaign.starts_at.astimezone(UTC), ends_at=_utc(campaign.ends_at),
        sizes=frozenset(campaign.sizes or ()), placements=frozenset(campaign.placements or ()),
        site_allow=frozenset(campaign.site_allow or ()), site_deny=frozenset(campaign.site_deny or ()),
        creatives=creatives, tasks=tasks, targeting=compile_rules(campaign.targeting),
        frequency_cap=campaign.frequency_cap, frequency_seconds=campaign.frequency_hours * 3600,
        rotation=campaign.rotation, advertiser_id=campaign.advertiser_id,
        category=campaign.category.value, click_param=campaign.click_param,
    )


async def _read_sites(query: QuerySet[Site], scope: Scope | None) -> dict[str, SiteEntry]:
    """The sites ``query`` selects, with their floors, controls and house ads: two queries."""
    rows = await query.values_list(*SITE_FIELDS)
    house_ads: dict[str, list[HouseAdEntry]] = {}
    ads_query = HouseAd.all() if scope is None else HouseAd.filter(site_id__in=[str(row[0]) for row in rows])
    for ad in await ads_query.order_by("created_at", "id") if rows else ():
        house_ads.setdefault(ad.site_id, []).append(HouseAdEntry(
            id=ad.id, banner_url=ad.banner_url, target_url=ad.target_url, description=ad.description,
            size=f"{ad.width}x{ad.height}"))
    return {str(row[0]): site_entry(row, house_ads=tuple(house_ads.get(str(row[0]), ()))) for row in rows}


def site_entry(row: Sequence[Any], house_ads: tuple[HouseAdEntry, ...] = ()) -> SiteEntry:
    """A site's entry from its ``SITE_FIELDS`` (in that order)."""
    site_id, domain, verified, floor, placement_floors, controls = row
    return SiteEntry(str(site_id), domain, verified, floor=int(floor),
                     placement_floors={label: int(amount) for label, amount in (placement_floors or {}).items()},
                     house_ads=house_ads, controls=controls_of(controls))


def _utc(moment: datetime | None) -> datetime | None:
    """``moment`` in the clock's own UTC (``datetime.UTC``), as every time of the index is kept. The ORM reads times
    in a ZoneInfo of UTC, and an aware datetime compares with, or is subtracted from, one of another tzinfo only
    after asking both for their offsets, many times the cost of the same tzinfo's, on every campaign of every
    serve."""
    return None if moment is None else moment.astimezone(UTC)


def _wanted(scope: Scope | None, *parts: str) -> bool:
    return scope is None or any(getattr(scope, part) for part in parts)


def _creative_entry(creative: Creative) -> CreativeEntry:
    return CreativeEntry(id=creative.id, campaign_id=creative.campaign_id,
                         banner_url=creative.banner_url, target_url=creative.target_url,
                         description=creative.description, media_type=creative.media_type.value,
                         size=f"{creative.width}x{creative.height}", weight=creative.weight)


async def creative_stats(campaign_ids: list[str]) -> dict[str, list[int]]:
    """Billed impressions and clicks per creative of ``campaign_ids`` (over the raw events still kept): one grouped
    query, only for the campaigns that rotate by click-through rate."""
    rows = await sql.fetch("SELECT creative_id, type, COUNT(*) AS events FROM tracking_event "
                           "WHERE campaign_id IN (:ids) AND billable GROUP BY creative_id, type", ids=campaign_ids)
    stats: dict[str, list[int]] = {}
    for row in rows:
        stats.setdefault(str(row["creative_id"]), [0, 0])[0 if row["type"] == "IMPRESSION" else 1] = int(row["events"])
    return stats
