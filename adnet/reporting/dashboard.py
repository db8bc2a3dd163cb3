"""What a publisher reads about its sites: each site with today's and lifetime figures (the API's site list), and
the portal's dashboard with three periods and the fill rate, and the daily earnings of a range of days (its chart).

Counts come from ``SiteDailyStat`` (one row per site and UTC day); earnings from the sites' ad revenue postings
(``adnet.reporting.earnings``). Days are UTC days.

The 30-day and daily earnings read one posting per billed event of those days: fine for the sizes adnet serves today; a
per-day earnings column in ``SiteDailyStat`` is the next step when a site bills millions of events a month.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta

from tortoise.expressions import Q

from adnet.accounts.members import PUBLISHERS, member_accounts
from adnet.accounts.models import Site
from adnet.delivery.models import SiteDailyStat
from adnet.reporting.buckets import Buckets, Granularity
from adnet.reporting.earnings import earned, earnings_since

DASHBOARD_DAYS = 30


@dataclass(frozen=True)
class Figures:
    """Impressions, clicks and G$ earnings (smallest unit) over some period."""

    impressions: int
    clicks: int
    earned: int


@dataclass(frozen=True)
class SiteSummary:
    """A site with its figures for today (UTC) and for its whole life."""

    site: Site
    today: Figures
    lifetime: Figures


@dataclass(frozen=True)
class SiteReport:
    """One site's figures today (UTC), over the last ``DASHBOARD_DAYS`` days (today included) and ever."""

    site_id: str
    domain: str
    name: str
    active: bool
    today: Figures
    recent: Figures
    lifetime: Figures


@dataclass(frozen=True)
class DayEarnings:
    day: date
    earned: int


@dataclass(frozen=True)
class Dashboard:
    """A wallet's sites with their figures, the totals over all of them, and the serve requests filled over the last
    ``DASHBOARD_DAYS`` days."""

    sites: list[SiteReport]
    today: Figures
    recent: Figures
    lifetime: Figures
    requests: int
    filled: int

    @property
    def fill_rate(self) -> float | None:
        return self.filled / self.requests if self.requests else None


def click_through_rate(figures: Figures) -> float | None:
    """Clicks per impression, or None before the first impression."""
    return figures.clicks / figures.impressions if figures.impressions else None


async def publisher_dashboard(wallet: str, now: datetime) -> Dashboard:
    """The dashboard of ``wallet``: its sites (oldest first) with today's, recent and lifetime figures."""
    summaries = await list_sites(wallet, now)
    ids = [summary.site.id for summary in summaries]
    today = now.astimezone(UTC).date()
    first_day = today - timedelta(days=DASHBOARD_DAYS - 1)
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    requests = filled = 0
    recent: dict[str, int] = defaultdict(int)
    if ids:
        for site_id, impressions, clicks, day_requests, day_filled in await SiteDailyStat.filter(
                site_id__in=ids, day__gte=first_day, day__lte=today).values_list(
                "site_id", "impressions", "clicks", "requests", "filled"):
            counts[site_id][0] += impressions
            counts[site_id][1] += clicks
            requests += day_requests
            filled += day_filled
        for owner, amount, _ in await earnings_since(ids, _start_of(first_day)):
            recent[owner] += amount
    reports = [
        SiteReport(site_id=summary.site.id, domain=summary.site.domain, name=summary.site.name,
                   active=summary.site.active, today=summary.today, lifetime=summary.lifetime,
                   recent=Figures(impressions=counts[summary.site.id][0], clicks=counts[summary.site.id][1],
                                  earned=recent[summary.site.id]))
        for summary in summaries
    ]
    return Dashboard(
        sites=reports, today=_total(report.today for report in reports),
        recent=_total(report.recent for report in reports), lifetime=_total(report.lifetime for report in reports),
        requests=requests, filled=filled,
    )


async def daily_earnings(wallet: str, first: date, last: date,
                         granularity: Granularity = Granularity.DAY) -> list[DayEarnings]:
    """What the wallet's sites (those ``list_sites`` shows) earned on each UTC day (or hour: ``day`` is then the
    hour's start) from ``first`` to ``last``, both included: oldest first, every day or hour present."""
    series = Buckets(granularity, first, last)
    earned_in = dict.fromkeys(series.starts(), 0)
    ids = await Site.filter(await _accounts_of(wallet), deleted_at=None).values_list("id", flat=True)
    if ids:
        for _, amount, booked_at in await earnings_since([str(site_id) for site_id in ids], series.since,
                                                         series.until):
            earned_in[series.of(booked_at)] += amount
    return [DayEarnings(start if granularity == Granularity.HOUR else start.date(), amount)
            for start, amount in earned_in.items()]


async def list_sites(wallet: str, now: datetime) -> list[SiteSummary]:
    """The sites but deleted ones of the wallet's publisher account and of the accounts it is a member of, oldest
    first, each with today's (UTC) and lifetime impressions, clicks and earnings."""
    sites = await Site.filter(await _accounts_of(wallet), deleted_at=None).order_by("created_at", "id")
    if not sites:
        return []
    ids = [site.id for site in sites]
    today = now.astimezone(UTC).date()
    counts = await SiteDailyStat.filter(site_id__in=ids).values_list("site_id", "day", "impressions", "clicks")
    lifetime_counts: dict[str, tuple[int, int]] = {}
    today_counts: dict[str, tuple[int, int]] = {}
    for site_id, day, impressions, clicks in counts:
        total = lifetime_counts.get(site_id, (0, 0))
        lifetime_counts[site_id] = (total[0] + impressions, total[1] + clicks)
        if day == today:
            today_counts[site_id] = (impressions, clicks)
    lifetime_earned = await earned(ids)
    today_earned: dict[str, int] = defaultdict(int)
    for site_id, amount, _ in await earnings_since(ids, _start_of(today)):
        today_earned[site_id] += amount
    return [
        SiteSummary(
            site=site,
            today=Figures(*today_counts.get(site.id, (0, 0)), earned=today_earned[site.id]),
            lifetime=Figures(*lifetime_counts.get(site.id, (0, 0)), earned=lifetime_earned.get(site.id, 0)),
        )
        for site in sites
    ]


async def _accounts_of(wallet: str) -> Q:
    """The sites of the wallet's publisher account and of the accounts it is a member of, as a filter."""
    return Q(publisher__wallet=wallet) | Q(publisher_id__in=await member_accounts(PUBLISHERS, wallet))


def _total(figures: Iterable[Figures]) -> Figures:
    items = list(figures)
    return Figures(impressions=sum(item.impressions for item in items), clicks=sum(item.clicks for item in items),
                   earned=sum(item.earned for item in items))


def _start_of(day: date) -> datetime:
    return datetime.combine(day, time.min, tzinfo=UTC)
