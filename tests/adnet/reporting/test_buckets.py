"""The buckets a report counts in (``adnet.reporting.buckets``) and how hours are asked for
(``adnet.reporting.commands.ReportPeriod``): every bucket of the range present, a moment in the UTC bucket it falls
in whatever its zone, and hours only within the last 14 days."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone
from itertools import pairwise

import pytest

from adnet.core.errors import Invalid
from adnet.db.sql import bucket_start
from adnet.reporting.buckets import Buckets, Granularity, hourly_reach
from adnet.reporting.commands import ReportPeriod

TODAY = date(2026, 3, 29)  # a day some zones change their clocks: UTC hours stay 24


def test_every_hour_and_day_of_the_range_is_a_bucket():
    hours = Buckets(Granularity.HOUR, date(2026, 3, 28), TODAY).starts()
    assert len(hours) == 48 and hours[0] == datetime(2026, 3, 28, tzinfo=UTC)
    assert all(later - earlier == timedelta(hours=1) for earlier, later in pairwise(hours))
    days = Buckets(Granularity.DAY, date(2026, 3, 1), TODAY).starts()
    assert len(days) == 29 and days[-1] == datetime(2026, 3, 29, tzinfo=UTC)


def test_a_moment_falls_in_its_utc_bucket_whatever_its_zone():
    buckets = Buckets(Granularity.HOUR, TODAY, TODAY)
    berlin_morning = datetime(2026, 3, 29, 3, 59, 59, tzinfo=timezone(timedelta(hours=2)))
    assert buckets.of(berlin_morning) == datetime(2026, 3, 29, 1, tzinfo=UTC)
    assert buckets.of(datetime(2026, 3, 29, 23, 30)) == datetime(2026, 3, 29, 23, tzinfo=UTC)  # naive is UTC
    daily = Buckets(Granularity.DAY, TODAY, TODAY)
    assert daily.of(berlin_morning) == datetime(2026, 3, 29, tzinfo=UTC)
    assert daily.of(datetime(2026, 3, 29, 1, tzinfo=timezone(timedelta(hours=2)))) == datetime(2026, 3, 28,
                                                                                                   tzinfo=UTC)


def test_hours_reach_back_fourteen_days_and_default_to_one_day():
    reach = hourly_reach(TODAY)
    assert reach == date(2026, 3, 16)
    asked = ReportPeriod.model_validate({"granularity": "hour", "from": reach.isoformat()})
    assert asked.days(TODAY) == (reach, TODAY)
    assert ReportPeriod.model_validate({"granularity": "hour"}).days(TODAY) == (TODAY, TODAY)
    assert ReportPeriod.model_validate({}).days(TODAY) == (TODAY - timedelta(days=29), TODAY)  # days by default
    for too_old in ({"from": (reach - timedelta(days=1)).isoformat()}, {"to": "2026-03-15"}):
        with pytest.raises(Invalid) as refused:
            ReportPeriod.model_validate({"granularity": "hour", **too_old}).days(TODAY)
        assert (refused.value.code, refused.value.field) == ("hourly_too_old", "from")
    assert ReportPeriod.model_validate({"from": "2026-01-01"}).days(TODAY)[0] == date(2026, 1, 1)


def test_the_bucket_sql_writes_the_same_text_on_both_databases():
    assert bucket_start("received_at", "hour", "sqlite") == "strftime('%Y-%m-%dT%H:00:00', received_at)"
    assert "HH24:00:00" in bucket_start("received_at", "hour", "postgres")
    assert "AT TIME ZONE 'UTC'" in bucket_start("received_at", "day", "postgres")
