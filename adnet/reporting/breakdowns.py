"""Breakdowns of billed traffic for a range of UTC days: an advertiser's spend, impressions, clicks and CTR per site
(by domain), placement, country or device, over its campaigns (or one of them); a site's earnings, impressions and
clicks per placement, country or device.

Figures come from ``report_daily``: every tracking batch adds its billed events to it in the transaction that
records and bills them (``adnet.delivery.batch.report_program``), so a report agrees with the ledger and outlives
the raw events' retention. ``rebuild`` recomputes it from the raw events (``adnet reports rebuild``): the days whose
raw events are all still kept, replaced whole in one transaction, so running it twice gives the same rows.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal
from typing import Any

from tortoise import connections

from adnet.accounts.advertisers import advertiser_of
from adnet.accounts.models import MemberRole, Site
from adnet.accounts.sites import owned_site
from adnet.campaigns.campaigns import owned_campaign
from adnet.campaigns.models import Campaign
from adnet.core.amounts import to_decimal_string
from adnet.core.csv_text import csv_text
from adnet.db import sql
from adnet.db.sql import Program, Statement
from adnet.delivery.batch import report_program
from adnet.delivery.models import EventType, ReportDaily
from adnet.reporting.commands import Dimension

log = logging.getLogger(__name__)

UNKNOWN = "unknown"


@dataclass
class Row:
    """One row of a breakdown (or its total, ``key`` None): billed impressions and clicks, and G$ in the smallest
    unit: what they cost the advertiser (``spend``) or earned the site (``earned``)."""

    key: str | None
    impressions: int = 0
    clicks: int = 0
    spend: int = 0
    earned: int = 0

    @property
    def ctr(self) -> float:
        """Clicks per impression (0 without impressions)."""
        return self.clicks / self.impressions if self.impressions else 0.0

    def add(self, impressions: int, clicks: int, spend: int, earned: int) -> None:
        self.impressions += impressions
        self.clicks += clicks
        self.spend += spend
        self.earned += earned


@dataclass(frozen=True)
class Breakdown:
    """A report's rows, by their figures (the most spent or earned first, then the most impressions, then by key),
    and their total."""

    by: Dimension
    start: date
    end: date
    rows: list[Row]
    total: Row


async def advertiser_breakdown(wallet: str, by: Dimension, start: date, end: date,
                               campaign_id: str | None = None) -> Breakdown:
    """The wallet's advertiser's billed traffic from ``start`` to ``end`` by ``by``: over all its campaigns, or one
    of them (NotFound / Forbidden ``not_owner`` for another's)."""
    if campaign_id is not None:
        campaign_ids = [(await owned_campaign(wallet, campaign_id)).id]
    else:
        advertiser = await advertiser_of(wallet)
        campaign_ids = [str(item) for item in
                        await Campaign.filter(advertiser_id=advertiser.id).values_list("id", flat=True)]
    rows = await ReportDaily.filter(campaign_id__in=campaign_ids, day__gte=start, day__lte=end).values_list(
        _column(by), "impressions", "clicks", "cost", "publisher_amount") if campaign_ids else []
    if by == Dimension.SITE:
        domains = dict(await Site.filter(id__in={row[0] for row in rows}).values_list("id", "domain"))
        rows = [(domains[site_id], *figures) for site_id, *figures in rows]
    return _breakdown(by, start, end, rows)


async def campaign_choices(wallet: str) -> list[tuple[str, str]]:
    """(id, name) of the wallet's advertiser's campaigns, newest first, for a breakdown's campaign picker (none
    before it registered)."""
    return [(str(campaign_id), name) for campaign_id, name in await Campaign.filter(
        advertiser__wallet=wallet).order_by("-created_at", "id").values_list("id", "name")]


async def site_breakdown(wallet: str, site_id: object, by: Dimension, start: date, end: date) -> Breakdown:
    """A site's billed traffic from ``start`` to ``end`` by ``by`` (placement, country or device), for a wallet that
    may read it (its owner or a member)."""
    site = await owned_site(wallet, site_id, MemberRole.VIEWER)
    rows = await ReportDaily.filter(site_id=site.id, day__gte=start, day__lte=end).values_list(
        _column(by), "impressions", "clicks", "cost", "publisher_amount")
    return _breakdown(by, start, end, rows)


def _column(by: Dimension) -> str:
    return "site_id" if by == Dimension.SITE else by.value


def _breakdown(by: Dimension, start: date, end: date, rows: Iterable[tuple[Any, ...]]) -> Breakdown:
    grouped: dict[str, Row] = {}
    total = Row(None)
    for key, impressions, clicks, cost, publisher_amount in rows:
        figures = (int(impressions), int(clicks), int(cost), int(publisher_amount))
        grouped.setdefault(str(key) or UNKNOWN, Row(str(key) or UNKNOWN)).add(*figures)
        total.add(*figures)
    ordered = sorted(grouped.values(), key=lambda row: (-row.spend, -row.impressions, row.key or ""))
    return Breakdown(by=by, start=start, end=end, rows=ordered, total=total)


def ctr_text(row: Row) -> str:
    """The CTR as a fraction with six decimals, e.g. ``"0.012500"``."""
    return f"{row.ctr:.6f}"


def breakdown_csv(breakdown: Breakdown, amount: str) -> str:
    """The breakdown as CSV: a header, one line per row then a ``total`` line; ``amount`` is the money column,
    ``spend`` (advertisers) or ``earned`` (publishers), as G$ decimal strings. Keys are domains, placement labels
    (publishers' text, neutralised against spreadsheet formulas), country codes and device kinds."""
    return csv_text([
        [breakdown.by.value, "impressions", "clicks", "ctr", amount],
        *([row.key if row.key is not None else "total", row.impressions, row.clicks, ctr_text(row),
           to_decimal_string(getattr(row, amount))] for row in [*breakdown.rows, breakdown.total]),
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
