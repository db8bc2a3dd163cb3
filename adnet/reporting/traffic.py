"""Traffic quality, for the people it concerns: per UTC day (or hour), how many of a site's (or of a campaign's)
recorded events were billed and how many each named reason kept from billing (``adnet.delivery.tracking.REASONS``).

Figures come from ``traffic_daily``, which every tracking batch adds to in the transaction that records and bills
its events, so they agree with the ledger and outlive the raw events' retention. A site's report adds the
conversions paid for clicks on it (``adnet.conversions``) and what they earned it, in the bucket they were received.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, fields
from datetime import date, datetime
from typing import Self, TypeVar

from adnet.conversions.models import Conversion
from adnet.core.amounts import to_decimal_string
from adnet.core.clock import iso
from adnet.core.csv_text import csv_text
from adnet.delivery.models import EventType
from adnet.delivery.tracking import REASONS
from adnet.reporting import buckets
from adnet.reporting.buckets import Buckets, Granularity

CountsT = TypeVar("CountsT", bound="EventCounts")
CSV_COLUMNS = ("impressions", "billed_impressions", "clicks", "billed_clicks", "earned", "conversions",
               "conversion_earned", *(f"filtered:{reason}" for reason in REASONS))


@dataclass
class EventCounts:
    """One day's or hour's (or a period's, ``day`` None) recorded events: impressions and clicks, those billed, and
    per reason those kept from billing; added to from ``adnet.reporting.buckets.traffic`` rows. ``day`` is the UTC day
    of the bucket, ``hour`` its start (UTC) in an hourly report, None in a daily one."""

    day: date | None
    hour: datetime | None = None
    impressions: int = 0
    billable_impressions: int = 0
    clicks: int = 0
    billable_clicks: int = 0
    filtered: Counter[str] = field(default_factory=Counter)

    def count(self, kind: str, reason: str, events: int) -> None:
        """Count ``events`` of one ``traffic_daily`` row (``reason`` empty for billed ones)."""
        billed = 0 if reason else events
        if kind == EventType.IMPRESSION:
            self.impressions += events
            self.billable_impressions += billed
        else:
            self.clicks += events
            self.billable_clicks += billed
        if reason:
            self.filtered[reason] += events

    def add(self, other: Self) -> None:
        """Add another day's figures of the same kind: every count and amount, every tally."""
        for item in fields(self):
            if item.name in ("day", "hour"):
                continue
            value = getattr(other, item.name)
            if isinstance(value, Counter):
                getattr(self, item.name).update(value)
            else:
                setattr(self, item.name, getattr(self, item.name) + value)


@dataclass
class TrafficDay(EventCounts):
    """A site's events of one day (or of the period), the conversions paid for its clicks, and what it earned from
    both (smallest units; ``conversion_earned`` is the conversions' part of ``earned``)."""

    earned: int = 0
    conversions: int = 0
    conversion_earned: int = 0


@dataclass(frozen=True)
class TrafficReport:
    """A site's traffic per day or hour from ``start`` to ``end`` (inclusive, UTC days) and its totals."""

    site_id: str
    start: date
    end: date
    days: list[TrafficDay]
    totals: TrafficDay
    granularity: Granularity = Granularity.DAY


def bucketed(make: type[CountsT], series: Buckets) -> dict[datetime, CountsT]:
    """An empty ``make`` per bucket of the series, by the bucket's start, oldest first."""
    hourly = series.granularity == Granularity.HOUR
    return {start: make(start.date(), start if hourly else None) for start in series.starts()}


async def site_traffic(site_id: str, start: date, end: date,
                       granularity: Granularity = Granularity.DAY) -> TrafficReport:
    """The traffic of ``site_id`` (the caller checked the wallet owns it) per day or hour of the period."""
    series = Buckets(granularity, start, end)
    days = bucketed(TrafficDay, series)
    for row in await buckets.traffic(series, "site_id", [site_id]):
        days[row.bucket].count(row.type, row.reason, row.events)
        days[row.bucket].earned += row.publisher_amount
    for received_at, earned in await Conversion.filter(
            site_id=site_id, paid=True, received_at__gte=series.since, received_at__lt=series.until).values_list(
            "received_at", "publisher_amount"):
        figures = days[series.of(received_at)]
        figures.conversions += 1
        figures.conversion_earned += int(earned)
        figures.earned += int(earned)
    totals = TrafficDay(None)
    for figures in days.values():
        totals.add(figures)
    return TrafficReport(site_id=site_id, start=start, end=end, days=list(days.values()), totals=totals,
                         granularity=granularity)


def bucket_text(figures: EventCounts) -> str:
    """How a report's row names its bucket in CSV and JSON: the UTC day (``YYYY-MM-DD``), the start of the UTC hour
    (``YYYY-MM-DDTHH:00:00Z``) in an hourly report, or ``total``."""
    if figures.hour is not None:
        return iso(figures.hour)
    return figures.day.isoformat() if figures.day else "total"


def traffic_csv(report: TrafficReport) -> str:
    """The report as CSV: one row per day (or hour: the first column is then ``hour``) then a ``total`` row, one
    ``filtered:<reason>`` column per reason; the site's earnings in G$ as decimal strings."""
    return csv_text([
        (report.granularity.value, *CSV_COLUMNS),
        *([bucket_text(figures), figures.impressions, figures.billable_impressions,
           figures.clicks, figures.billable_clicks, to_decimal_string(figures.earned), figures.conversions,
           to_decimal_string(figures.conversion_earned), *(figures.filtered.get(reason, 0) for reason in REASONS)]
          for figures in [*report.days, report.totals]),
    ])


def ordered_reasons(counts: Counter[str]) -> dict[str, int]:
    """The reasons counted, in ``REASONS``' order (the order they are decided in), then any no longer decided."""
    known = [reason for reason in REASONS if counts.get(reason)]
    return {reason: counts[reason] for reason in [*known, *sorted(set(counts) - set(REASONS))] if counts[reason]}
