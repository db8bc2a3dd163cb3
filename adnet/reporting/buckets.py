"""The time buckets a report counts in: UTC days, or UTC hours over the last ``HOURLY_DAYS`` days; and the recorded
events of a site or campaign per bucket, type and refusal reason, read once for either.

A report is a series of buckets from the start of its first day to the end of its last, every bucket present. Its
events come from one place per granularity: per day from ``traffic_daily`` (which every tracking batch adds to in
the transaction that bills, so daily figures outlive the raw events' retention), per hour from the raw events
themselves (``tracking_event``) grouped by ``adnet.db.sql.bucket_start``, which is why hours reach back
``HOURLY_DAYS`` days only. Both answer the same rows, and the reports add them up in one code path, so an hour's
figures are the day's split by the hour its events were received, and the hours of a day add up to the day exactly
(both count the same recorded events with the same amounts; a test compares them). Money is summed here, in
Python, from rows grouped by amount, because SQLite has no exact decimal sum.

Buckets are UTC; showing them in a viewer's time zone is the page's business (``adnet.reporting.zones``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from enum import StrEnum
from typing import Any

from tortoise import connections

from adnet.db import sql
from adnet.delivery.models import TrafficDaily
from adnet.delivery.requests import hour_of

HOURLY_DAYS = 14


class Granularity(StrEnum):
    """How long a report's buckets are: a UTC day, or a UTC hour (the last ``HOURLY_DAYS`` days only)."""

    DAY = "day"
    HOUR = "hour"


@dataclass(frozen=True)
class Buckets:
    """The buckets from the start of ``start`` to the end of ``end`` (UTC days, both included)."""

    granularity: Granularity
    start: date
    end: date

    @property
    def since(self) -> datetime:
        """The start of the first bucket."""
        return datetime.combine(self.start, time.min, tzinfo=UTC)

    @property
    def until(self) -> datetime:
        """The end of the last bucket (the start of the day after ``end``)."""
        return datetime.combine(self.end + timedelta(days=1), time.min, tzinfo=UTC)

    @property
    def step(self) -> timedelta:
        return timedelta(hours=1) if self.granularity == Granularity.HOUR else timedelta(days=1)

    def starts(self) -> list[datetime]:
        """Every bucket's start (UTC), oldest first."""
        count = (self.until - self.since) // self.step
        return [self.since + self.step * index for index in range(count)]

    def of(self, moment: datetime) -> datetime:
        """The start of the bucket ``moment`` falls in (a naive moment is UTC)."""
        utc = moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
        if self.granularity == Granularity.HOUR:
            return hour_of(utc)
        return datetime.combine(utc.date(), time.min, tzinfo=UTC)


def hourly_reach(today: date) -> date:
    """The first UTC day an hourly report may start on: ``HOURLY_DAYS`` days up to ``today`` included."""
    return today - timedelta(days=HOURLY_DAYS - 1)


@dataclass(frozen=True)
class TrafficRow:
    """Recorded events of one bucket and type, billed (``reason`` empty) or kept from billing for ``reason``, with
    what they cost the campaign and earned the site in all (G$ smallest units)."""

    bucket: datetime
    type: str
    reason: str
    events: int
    cost: int
    publisher_amount: int


# The raw events of a scope per hour, type, reason and amount: the amounts are per event, so ``events`` times them
# is what the group cost and earned. ``{bucket}`` and ``{scope}`` are SQL this module writes, never input.
_EVENTS_BY_BUCKET = (
    "SELECT {bucket} AS bucket, type, COALESCE(refusal_reason, '') AS reason, cost, publisher_amount, "
    "COUNT(*) AS events FROM tracking_event WHERE {scope} IN (:scope) AND received_at >= :since "
    "AND received_at < :until GROUP BY {bucket}, type, COALESCE(refusal_reason, ''), cost, publisher_amount")
_SCOPES = ("site_id", "campaign_id")


async def traffic(buckets: Buckets, scope: str, ids: list[str]) -> list[TrafficRow]:
    """The recorded events of the sites or campaigns ``ids`` (``scope`` is ``site_id`` or ``campaign_id``) per
    bucket, type and reason: per day from ``traffic_daily``, per hour from the raw events."""
    if scope not in _SCOPES:
        raise ValueError(f"no traffic by {scope}")
    if not ids:
        return []
    if buckets.granularity == Granularity.DAY:
        daily = await TrafficDaily.filter(**{f"{scope}__in": ids}, day__gte=buckets.start, day__lte=buckets.end
                                          ).values_list("day", "type", "reason", "events", "cost", "publisher_amount")
        return [TrafficRow(datetime.combine(day, time.min, tzinfo=UTC), str(kind), reason, int(events), int(cost),
                           int(earned)) for day, kind, reason, events, cost, earned in daily]
    dialect = sql.dialect_of(connections.get("default"))
    statement = _EVENTS_BY_BUCKET.format(bucket=sql.bucket_start("received_at", buckets.granularity.value, dialect),
                                         scope=scope)
    rows = await sql.fetch(statement, scope=ids, since=buckets.since, until=buckets.until)
    return [_hourly(row) for row in rows]


def _hourly(row: dict[str, Any]) -> TrafficRow:
    events = int(row["events"])
    return TrafficRow(datetime.fromisoformat(row["bucket"]).replace(tzinfo=UTC), str(row["type"]), row["reason"],
                      events, int(row["cost"]) * events, int(row["publisher_amount"]) * events)
