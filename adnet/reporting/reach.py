"""Unique reach and frequency of a campaign over a range of UTC days, from ``reach_viewer_daily``
(``adnet.delivery.reach``: per day, creative, site and viewer digest, the billed impressions).

Counts are exact: each viewer is one row per day, creative and site, so distinct viewers over any range and any
breakdown are a ``COUNT(DISTINCT)`` of the digests, and each viewer's impressions over the range a sum. Only billed
impressions with a viewer id count (the embed sends none under Do-Not-Track or Global Privacy Control); the report
says how many billed impressions carried one.

- reach: distinct viewers over the range, and per day, creative and site (a viewer seen on two days counts once in
  the range and once on each day); per UTC hour instead of per day over the last ``HOURLY_DAYS`` days
  (``granularity=hour``), counted from the raw events' viewer digests (``tracking_event.viewer_key``, the rows the
  job reads), so an hour's reach is current while the days' follow the job;
- average frequency: impressions with a viewer / reach;
- frequency distribution: how many viewers saw the campaign 1, 2, 3, 4-5, 6-10 or more than 10 times in the range.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date

from tortoise import connections

from adnet.accounts.models import MemberRole
from adnet.campaigns.campaigns import owned_campaign
from adnet.core.csv_text import csv_text
from adnet.db import sql
from adnet.delivery.commands import EventType
from adnet.reporting.buckets import Buckets, Granularity

# Upper bounds of the distribution's buckets (None: no bound) and their names.
BUCKETS: tuple[tuple[str, int | None], ...] = (("1", 1), ("2", 2), ("3", 3), ("4-5", 5), ("6-10", 10), (">10", None))


@dataclass(frozen=True)
class Frequency:
    """Reach, impressions, average frequency and distribution of one set of per-viewer impression counts."""

    reach: int
    impressions: int
    distribution: dict[str, int]

    @property
    def average(self) -> float:
        """Impressions per viewer (0 without viewers)."""
        return self.impressions / self.reach if self.reach else 0.0


def bucket_of(impressions: int) -> str:
    """The distribution bucket of a viewer with ``impressions`` (at least 1) impressions."""
    for name, bound in BUCKETS:
        if bound is None or impressions <= bound:
            return name
    raise AssertionError("the last bucket has no bound")


def frequency_of(per_viewer: Iterable[int]) -> Frequency:
    """The figures of per-viewer impression counts (one count per distinct viewer, each at least 1)."""
    counts = [count for count in per_viewer if count > 0]
    buckets = Counter(bucket_of(count) for count in counts)
    return Frequency(len(counts), sum(counts), {name: buckets.get(name, 0) for name, _ in BUCKETS})


@dataclass(frozen=True)
class ReachRow:
    """Reach and impressions with a viewer of one day, creative or site."""

    key: str
    reach: int
    impressions: int

    @property
    def average(self) -> float:
        return self.impressions / self.reach if self.reach else 0.0


@dataclass
class ReachReport:
    """``days`` holds one row per UTC day, or per UTC hour (key ``YYYY-MM-DDTHH:00:00Z``) when ``granularity`` is
    ``hour``."""

    campaign_id: str
    start: date
    end: date
    totals: Frequency
    granularity: Granularity = Granularity.DAY
    days: list[ReachRow] = field(default_factory=list)
    creatives: list[ReachRow] = field(default_factory=list)
    sites: list[ReachRow] = field(default_factory=list)


async def reach_report(wallet: str, campaign_id: str, start: date, end: date,
                       granularity: Granularity = Granularity.DAY) -> ReachReport:
    """Reach and frequency of a campaign of an advertiser account the wallet owns or is a member of, any role
    (NotFound / Forbidden ``not_owner`` otherwise), from ``start`` to ``end`` (UTC days, both included), its rows
    per day or per hour (``granularity``; the caller keeps hours to the last ``HOURLY_DAYS`` days)."""
    campaign = await owned_campaign(wallet, campaign_id, MemberRole.VIEWER)
    scope = {"campaign": campaign.id, "start": start, "end": end}
    viewers = await sql.fetch(_PER_VIEWER, **scope)
    report = ReachReport(campaign.id, start, end, frequency_of(int(row["impressions"]) for row in viewers),
                         granularity=granularity)
    for column, rows in (("day", report.days), ("creative_id", report.creatives), ("site_id", report.sites)):
        if column == "day" and granularity == Granularity.HOUR:
            rows.extend(await _hours(campaign.id, Buckets(granularity, start, end)))
            continue
        found = await sql.fetch(_by(column), **scope)
        rows.extend(ReachRow(str(row["key"]), int(row["reach"]), int(row["impressions"])) for row in found)
    return report


async def _hours(campaign_id: str, buckets: Buckets) -> list[ReachRow]:
    """Distinct viewers and their billed impressions per UTC hour, from the raw events (the digests the job
    counts)."""
    dialect = sql.dialect_of(connections.get("default"))
    bucket = sql.bucket_start("received_at", buckets.granularity.value, dialect)
    rows = await sql.fetch(_HOURS.format(bucket=bucket), campaign=campaign_id, impression=EventType.IMPRESSION.value,
                           since=buckets.since, until=buckets.until)
    return [ReachRow(f"{row['key']}Z", int(row["reach"]), int(row["impressions"])) for row in rows]


def reach_csv(report: ReachReport) -> str:
    """The report as CSV: one row per day, creative and site (``scope``, ``key``) and a total row, then the
    distribution."""
    rows: list[list[object]] = [["scope", "key", "reach", "impressions", "average_frequency"]]
    for scope, found in ((report.granularity.value, report.days), ("creative", report.creatives),
                         ("site", report.sites)):
        rows.extend([scope, row.key, row.reach, row.impressions, f"{row.average:.2f}"] for row in found)
    totals = report.totals
    rows.append(["total", f"{report.start}..{report.end}", totals.reach, totals.impressions, f"{totals.average:.2f}"])
    rows.extend(["frequency", name, viewers, "", ""] for name, viewers in totals.distribution.items())
    return csv_text(rows)


_RANGE = "FROM reach_viewer_daily WHERE campaign_id = :campaign AND day >= :start AND day <= :end"
_PER_VIEWER = f"SELECT viewer_key, SUM(impressions) AS impressions {_RANGE} GROUP BY viewer_key"


# ``{bucket}`` is SQL this module writes (adnet.db.sql.bucket_start), never input.
_HOURS = ("SELECT {bucket} AS key, COUNT(DISTINCT viewer_key) AS reach, COUNT(*) AS impressions FROM tracking_event "
          "WHERE campaign_id = :campaign AND billable AND type = :impression AND viewer_key IS NOT NULL "
          "AND received_at >= :since AND received_at < :until GROUP BY {bucket} ORDER BY {bucket}")


def _by(column: str) -> str:
    """Reach and impressions per value of ``column`` (one of the table's own, never input)."""
    return (f"SELECT {column} AS key, COUNT(DISTINCT viewer_key) AS reach, "
            f"SUM(impressions) AS impressions {_RANGE} GROUP BY {column} ORDER BY {column}")
