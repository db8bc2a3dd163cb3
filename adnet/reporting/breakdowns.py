"""Breakdowns of billed traffic and conversions for a range of UTC days: an advertiser's spend, impressions, clicks,
CTR, conversions, conversion rate, cost per conversion, conversions' value and ROAS per site (by domain), placement,
country, device, day, hour, campaign or goal, over its campaigns (or one of them); a site's earnings, impressions,
clicks and the conversions paid for its clicks per placement, country, device, day or hour.

Traffic figures come from ``report_daily``: every tracking batch adds its billed events to it in the transaction
that records and bills them (``adnet.delivery.batch.report_program``), so a report agrees with the ledger and
outlives the raw events' retention. ``rebuild`` recomputes it from the raw events (``adnet reports rebuild``): the
days whose raw events are all still kept, replaced whole in one transaction, so running it twice gives the same rows.
``report_daily`` has no hours: by hour, the billed events are read from the raw events (``adnet.reporting.buckets``,
the last 14 days), which count the same events as the day.
Conversion figures come from the ``conversion`` rows, which keep their click's site, placement, country and device,
on the day they were received (as the campaign report counts them); what paid conversions cost is part of ``spend``
and what they earned the site part of ``earned``, as in the ledger. Traffic is not split by goal: a breakdown by
goal has conversion figures only, its spend being what the goal's conversions cost. The ratios are
``adnet.reporting.outcomes``'.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal
from typing import Any

from tortoise import connections

from adnet.accounts.advertisers import advertiser_of
from adnet.accounts.models import MemberRole, Site
from adnet.accounts.sites import owned_site
from adnet.campaigns.campaigns import owned_campaign
from adnet.campaigns.models import Campaign, ConversionGoal
from adnet.conversions.models import Conversion
from adnet.core.amounts import to_decimal_string
from adnet.core.clock import iso
from adnet.core.csv_text import csv_text
from adnet.db import sql
from adnet.db.sql import Program, Statement
from adnet.delivery.batch import report_program
from adnet.delivery.models import EventType, ReportDaily
from adnet.reporting import buckets, outcomes
from adnet.reporting.buckets import Buckets, Granularity
from adnet.reporting.commands import Dimension

log = logging.getLogger(__name__)

UNKNOWN = "unknown"


@dataclass
class Row:
    """One row of a breakdown (or its total, ``key`` None; ``label`` the campaign's or goal's name): billed
    impressions and clicks, attributed conversions (``valued`` of them with a reported ``value``), and G$ in the
    smallest unit: what events and conversions cost the advertiser (``spend``, ``conversion_spend`` the conversions'
    part) or earned the site (``earned``)."""

    key: str | None
    label: str | None = None
    impressions: int = 0
    clicks: int = 0
    spend: int = 0
    earned: int = 0
    conversions: int = 0
    conversion_spend: int = 0
    value: int = 0
    valued: int = 0

    @property
    def ctr(self) -> float:
        """Clicks per impression (0 without impressions)."""
        return self.clicks / self.impressions if self.impressions else 0.0

    @property
    def conversion_rate(self) -> str | None:
        """Attributed conversions per billed click (None without billed clicks)."""
        return outcomes.conversion_rate(self.conversions, self.clicks)

    @property
    def cost_per_conversion(self) -> int:
        """Spend per attributed conversion (0 without conversions)."""
        return outcomes.cost_per_conversion(self.spend, self.conversions)

    @property
    def roas(self) -> str | None:
        """Reported value per G$ spent (None without a valued conversion or spend)."""
        return outcomes.roas(self.value, self.valued, self.spend)

    def add(self, impressions: int, clicks: int, spend: int, earned: int) -> None:
        """Add billed events and what they cost and earned."""
        self.impressions += impressions
        self.clicks += clicks
        self.spend += spend
        self.earned += earned

    def convert(self, cost: int, earned: int, value: int | None) -> None:
        """Add one attributed conversion: what it cost, what it earned the site, the value reported for it."""
        self.conversions += 1
        self.conversion_spend += cost
        self.spend += cost
        self.earned += earned
        if value is not None:
            self.value += value
            self.valued += 1


@dataclass(frozen=True)
class Breakdown:
    """A report's rows, by their figures (the most spent or earned first, then the most impressions, then the most
    conversions, then by key; by day, oldest first), and their total."""

    by: Dimension
    start: date
    end: date
    rows: list[Row]
    total: Row


async def advertiser_breakdown(wallet: str, by: Dimension, start: date, end: date,
                               campaign_id: str | None = None) -> Breakdown:
    """The wallet's advertiser's billed traffic and attributed conversions from ``start`` to ``end`` by ``by``:
    over all its campaigns, or one of them (NotFound / Forbidden ``not_owner`` for another's)."""
    if campaign_id is not None:
        campaign_ids = [(await owned_campaign(wallet, campaign_id, MemberRole.VIEWER)).id]
    else:
        advertiser = await advertiser_of(wallet)
        campaign_ids = [str(item) for item in
                        await Campaign.filter(advertiser_id=advertiser.id).values_list("id", flat=True)]
    if not campaign_ids:
        return _breakdown(by, start, end, [], [])
    traffic: Sequence[tuple[Any, ...]] = []
    if by == Dimension.HOUR:
        traffic = await _hourly(start, end, "campaign_id", campaign_ids)
    elif by != Dimension.GOAL:
        traffic = await ReportDaily.filter(campaign_id__in=campaign_ids, day__gte=start, day__lte=end).values_list(
            _column(by), "impressions", "clicks", "cost", "publisher_amount")
    conversions = await _conversions(by, start, end, campaign_id__in=campaign_ids, attributed=True)
    labels: dict[str, str] = {}
    if by == Dimension.CAMPAIGN:
        labels = dict(await Campaign.filter(id__in=campaign_ids).values_list("id", "name"))
    elif by == Dimension.GOAL:
        labels = dict(await ConversionGoal.filter(campaign_id__in=campaign_ids).values_list("id", "name"))
    return _breakdown(by, start, end, await _domains(by, traffic), await _domains(by, conversions), labels)


async def campaign_choices(wallet: str) -> list[tuple[str, str]]:
    """(id, name) of the wallet's advertiser's campaigns, newest first, for a breakdown's campaign picker (none
    before it registered)."""
    return [(str(campaign_id), name) for campaign_id, name in await Campaign.filter(
        advertiser__wallet=wallet).order_by("-created_at", "id").values_list("id", "name")]


async def site_breakdown(wallet: str, site_id: object, by: Dimension, start: date, end: date) -> Breakdown:
    """A site's billed traffic and the conversions paid for its clicks from ``start`` to ``end`` by ``by``
    (placement, country, device or day), for a wallet that may read it (its owner or a member). What advertisers
    reported their orders were worth stays theirs: a site's rows carry no value."""
    site = await owned_site(wallet, site_id, MemberRole.VIEWER)
    traffic = await _hourly(start, end, "site_id", [site.id]) if by == Dimension.HOUR else await ReportDaily.filter(
        site_id=site.id, day__gte=start, day__lte=end).values_list(
        _column(by), "impressions", "clicks", "cost", "publisher_amount")
    conversions = [(*figures, None) for *figures, _ in
                   await _conversions(by, start, end, site_id=site.id, paid=True)]
    return _breakdown(by, start, end, traffic, conversions)


async def _hourly(start: date, end: date, scope: str, ids: list[str]) -> list[tuple[Any, ...]]:
    """(hour, impressions, clicks, cost, publisher amount) of the billed events of the sites or campaigns ``ids``
    per UTC hour, from the raw events (``adnet.reporting.buckets``): ``report_daily`` has no hours."""
    return [(row.bucket, row.events if row.type == EventType.IMPRESSION else 0,
             0 if row.type == EventType.IMPRESSION else row.events, row.cost, row.publisher_amount)
            for row in await buckets.traffic(Buckets(Granularity.HOUR, start, end), scope, ids) if not row.reason]


async def _conversions(by: Dimension, start: date, end: date, **where: Any) -> list[tuple[Any, ...]]:
    """(key, cost, publisher amount, value) of the conversions ``where`` selects, received from ``start`` to
    ``end``."""
    timed = {Dimension.DAY: Granularity.DAY, Dimension.HOUR: Granularity.HOUR}.get(by)
    series = Buckets(timed or Granularity.DAY, start, end)
    column = "received_at" if timed else _column(by)
    rows = await Conversion.filter(received_at__gte=series.since, received_at__lt=series.until, **where
                                   ).values_list(column, "cost", "publisher_amount", "value")
    if by == Dimension.DAY:
        return [(series.of(received_at).date(), *figures) for received_at, *figures in rows]
    if by == Dimension.HOUR:
        return [(series.of(received_at), *figures) for received_at, *figures in rows]
    return list(rows)


async def _domains(by: Dimension, rows: Sequence[tuple[Any, ...]]) -> Sequence[tuple[Any, ...]]:
    """By site, the rows keyed by the site's domain instead of its id."""
    if by != Dimension.SITE:
        return rows
    domains = dict(await Site.filter(id__in={row[0] for row in rows if row[0]}).values_list("id", "domain"))
    return [(domains.get(site_id, ""), *figures) for site_id, *figures in rows]


def _column(by: Dimension) -> str:
    return {Dimension.SITE: "site_id", Dimension.CAMPAIGN: "campaign_id", Dimension.GOAL: "goal_id"}.get(by, by.value)


def _breakdown(by: Dimension, start: date, end: date, traffic: Iterable[tuple[Any, ...]],
               conversions: Iterable[tuple[Any, ...]], labels: dict[str, str] | None = None) -> Breakdown:
    grouped: dict[str, Row] = {}
    total = Row(None)

    def row_of(key: Any) -> Row:
        name = _key_text(key)
        return grouped.setdefault(name, Row(name, (labels or {}).get(name)))

    for key, impressions, clicks, cost, publisher_amount in traffic:
        figures = (int(impressions), int(clicks), int(cost), int(publisher_amount))
        row_of(key).add(*figures)
        total.add(*figures)
    for key, cost, publisher_amount, value in conversions:
        converted = (int(cost), int(publisher_amount), None if value is None else int(value))
        row_of(key).convert(*converted)
        total.convert(*converted)
    if by in (Dimension.DAY, Dimension.HOUR):
        ordered = sorted(grouped.values(), key=lambda row: row.key or "")
    else:
        ordered = sorted(grouped.values(),
                         key=lambda row: (-row.spend, -row.earned, -row.impressions, -row.conversions, row.key or ""))
    return Breakdown(by=by, start=start, end=end, rows=ordered, total=total)


def _key_text(key: Any) -> str:
    if isinstance(key, datetime):
        return iso(key)
    if isinstance(key, date):
        return key.isoformat()
    return str(key) if key else UNKNOWN


def ctr_text(row: Row) -> str:
    """The CTR as a fraction with six decimals, e.g. ``"0.012500"``."""
    return f"{row.ctr:.6f}"


ADVERTISER_CSV = ("conversions", "conversion_rate", "cost_per_conversion", "conversion_value", "roas")


def breakdown_csv(breakdown: Breakdown, amount: str) -> str:
    """The breakdown as CSV: a header, one line per row then a ``total`` line; ``amount`` is the money column,
    ``spend`` (advertisers: then the conversions, their rate, cost, value and ROAS, a ratio over nothing empty) or
    ``earned`` (publishers: then the conversions paid for the site's clicks), as G$ decimal strings. Keys are
    domains, placement labels (publishers' text, neutralised against spreadsheet formulas), country codes, device
    kinds, days and campaign or goal ids."""
    def figures(row: Row) -> list[object]:
        if amount == "spend":
            return [row.conversions, row.conversion_rate or "", to_decimal_string(row.cost_per_conversion),
                    to_decimal_string(row.value), row.roas or ""]
        return [row.conversions]

    return csv_text([
        [breakdown.by.value, "impressions", "clicks", "ctr", amount,
         *(ADVERTISER_CSV if amount == "spend" else ("conversions",))],
        *([row.key if row.key is not None else "total", row.impressions, row.clicks, ctr_text(row),
           to_decimal_string(getattr(row, amount)), *figures(row)] for row in [*breakdown.rows, breakdown.total]),
    ])


# ---- rebuilding from the raw events ----------------------------------------------------------------------------

_BILLED = ("SELECT campaign_id, site_id, placement, country, device, type, COUNT(*) AS events, SUM(cost) AS cost, "
           "SUM(publisher_amount) AS publisher_amount FROM tracking_event "
           "WHERE billable AND received_at >= :since AND received_at < :until "
           "GROUP BY campaign_id, site_id, placement, country, device, type")


def first_kept_day(now: datetime, retention_days: int) -> date:
    """The first UTC day whose raw events are all still kept: the day after the one retention is cutting into."""
    return (now - timedelta(days=retention_days)).astimezone(UTC).date() + timedelta(days=1)


async def rebuild(now: datetime, retention_days: int) -> int:
    """Recompute ``report_daily`` from the raw events for every day from ``first_kept_day`` to today, in one
    transaction that replaces those days' rows whole (older days, whose raw events retention deleted, stay as they
    are); how many rows the days now have. On PostgreSQL the table is locked against tracking batches for the
    while (they wait, then add their events to the rebuilt rows), so no billed event is lost or counted twice."""
    dialect = sql.dialect_of(connections.get("default"))
    first = first_kept_day(now, retention_days)
    rows = await sql.transaction(lambda: _rebuild_program(first, now.astimezone(UTC).date(), dialect))
    log.info("reports rebuilt from=%s rows=%d", first, rows)
    return rows


def _rebuild_program(first: date, last: date, dialect: str) -> Program[int]:
    if dialect == "postgres":
        yield Statement("LOCK TABLE report_daily IN SHARE ROW EXCLUSIVE MODE", {})
    figures: dict[tuple[date, str, str, str, str, str], list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    day = first
    while day <= last:
        since = datetime.combine(day, time.min, tzinfo=UTC)
        billed = yield Statement(_BILLED, {"since": since, "until": since + timedelta(days=1)})
        for row in billed.rows:
            report = figures[(day, row["campaign_id"], row["site_id"], row["placement"], row["country"],
                              row["device"])]
            report[0 if row["type"] == EventType.IMPRESSION.value else 1] += int(row["events"])
            report[2] += int(Decimal(row["cost"]))
            report[3] += int(Decimal(row["publisher_amount"]))
        day += timedelta(days=1)
    yield Statement("DELETE FROM report_daily WHERE day >= :first", {"first": first})
    if figures:
        yield from report_program(figures)
    return len(figures)
