"""Traffic quality, for the people it concerns: per UTC day, how many of a site's (or of a campaign's) recorded
events were billed and how many each named reason kept from billing (``adnet.delivery.tracking.REASONS``).

Figures come from ``traffic_daily``, which every tracking batch adds to in the transaction that records and bills
its events, so they agree with the ledger and outlive the raw events' retention.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import date, timedelta

from tortoise.functions import Sum

from adnet.core.amounts import to_decimal_string
from adnet.core.csv_text import csv_text
from adnet.delivery.models import EventType, TrafficDaily
from adnet.delivery.tracking import REASONS

CSV_COLUMNS = ("day", "impressions", "billed_impressions", "clicks", "billed_clicks", "earned",
               *(f"filtered:{reason}" for reason in REASONS))


@dataclass
class TrafficDay:
    """One day's (or the period's) events of a site: recorded, billed, what the site earned (smallest units), and
    the events each reason kept from billing."""

    day: date | None
    impressions: int = 0
    billed_impressions: int = 0
    clicks: int = 0
    billed_clicks: int = 0
    earned: int = 0
    filtered: Counter[str] = field(default_factory=Counter)

    def add(self, other: TrafficDay) -> None:
        for name in ("impressions", "billed_impressions", "clicks", "billed_clicks", "earned"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.filtered.update(other.filtered)


@dataclass(frozen=True)
class TrafficReport:
    """A site's traffic per day from ``start`` to ``end`` (inclusive, UTC) and its totals."""

    site_id: str
    start: date
    end: date
    days: list[TrafficDay]
    totals: TrafficDay


async def site_traffic(site_id: str, start: date, end: date) -> TrafficReport:
    """The traffic of ``site_id`` (the caller checked the wallet owns it) per day of the period."""
    days = {start + timedelta(days=offset): TrafficDay(start + timedelta(days=offset))
            for offset in range((end - start).days + 1)}
    rows = await TrafficDaily.filter(site_id=site_id, day__gte=start, day__lte=end).values_list(
        "day", "type", "reason", "events", "publisher_amount")
    for day, kind, reason, count, earned in rows:
        figures = days[day]
        billed = 0 if reason else count
        if kind == EventType.IMPRESSION:
            figures.impressions += count
            figures.billed_impressions += billed
        else:
            figures.clicks += count
            figures.billed_clicks += billed
        figures.earned += int(earned)
        if reason:
            figures.filtered[reason] += count
    totals = TrafficDay(None)
    for figures in days.values():
        totals.add(figures)
    return TrafficReport(site_id=site_id, start=start, end=end, days=list(days.values()), totals=totals)


def traffic_csv(report: TrafficReport) -> str:
    """The report as CSV: one row per day then a ``total`` row, one ``filtered:<reason>`` column per reason; the
    site's earnings in G$ as decimal strings."""
    return csv_text([
        CSV_COLUMNS,
        *([figures.day.isoformat() if figures.day else "total", figures.impressions, figures.billed_impressions,
           figures.clicks, figures.billed_clicks, to_decimal_string(figures.earned),
           *(figures.filtered.get(reason, 0) for reason in REASONS)]
          for figures in [*report.days, report.totals]),
    ])


def ordered_reasons(counts: Counter[str]) -> dict[str, int]:
    """The reasons counted, in ``REASONS``' order (the order they are decided in), then any no longer decided."""
    known = [reason for reason in REASONS if counts.get(reason)]
    return {reason: counts[reason] for reason in [*known, *sorted(set(counts) - set(REASONS))] if counts[reason]}


async def refusal_counts(*, site_id: str | None = None, since: date | None = None) -> dict[str, int]:
    """How many recorded events each reason kept from billing (optionally for one site, since a UTC day)."""
    query = TrafficDaily.exclude(reason="")
    if site_id is not None:
        query = query.filter(site_id=site_id)
    if since is not None:
        query = query.filter(day__gte=since)
    rows = await query.annotate(count=Sum("events")).group_by("reason").values_list("reason", "count")
    return {reason: int(count) for reason, count in rows}
