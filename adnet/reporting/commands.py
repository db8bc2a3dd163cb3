"""What a report is asked for: a range of UTC days, counted per day or per hour, and for a breakdown what its rows
are."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from enum import StrEnum

from pydantic import Field, field_validator

from adnet.core.errors import Invalid
from adnet.core.inputs import Command, Day, rule
from adnet.reporting.buckets import HOURLY_DAYS, Granularity, hourly_reach
from adnet.reporting.statements import Month

DEFAULT_DAYS = 30
MAX_DAYS = 92


class Period(Command):
    """UTC days from ``from`` to ``to``, both included; without ``to``, up to today, and without ``from``, the
    ``DEFAULT_DAYS`` days up to ``to``."""

    first: Day | None = Field(None, alias="from", description="the first day, YYYY-MM-DD")
    last: Day | None = Field(None, alias="to", description="the last day, YYYY-MM-DD; today by default")

    def days(self, today: date) -> tuple[date, date]:
        """The first and last day; Invalid ``invalid_date_range`` when the last is before the first or after today,
        or the range is longer than ``MAX_DAYS``."""
        last = self.last or today
        first = self.first or last - timedelta(days=DEFAULT_DAYS - 1)
        if last < first:
            raise Invalid("invalid_date_range", "to: the last day is before the first.", field="to")
        if last > today:
            raise Invalid("invalid_date_range", "to: the last day cannot be after today (UTC).", field="to")
        if (last - first).days + 1 > MAX_DAYS:
            raise Invalid("invalid_date_range", f"from: at most {MAX_DAYS} days at a time.", field="from")
        return first, last


class ReportPeriod(Period):
    """A report's days, counted per UTC day (``granularity=day``, the default) or per UTC hour (``hour``): hours only
    within the last ``HOURLY_DAYS`` days (today included), and without ``from`` the day ``to`` alone."""

    granularity: Granularity = Field(Granularity.DAY, description=f"day (the default) or hour: UTC hours, for days "
                                                                  f"within the last {HOURLY_DAYS} only")

    def days(self, today: date) -> tuple[date, date]:
        """The first and last day, as ``Period.days``; Invalid ``hourly_too_old`` when hours are asked for a day
        before the last ``HOURLY_DAYS``."""
        first, last = super().days(today)
        return hourly_days(self.first, first, last, today) if self.granularity == Granularity.HOUR else (first, last)


def hourly_days(asked: date | None, first: date, last: date, today: date) -> tuple[date, date]:
    """The days of a report counted per hour: from the day ``asked`` (else ``last`` alone) to ``last``; Invalid
    ``hourly_too_old`` when that starts before the last ``HOURLY_DAYS`` days."""
    first = asked or last
    reach = hourly_reach(today)
    if first < reach:
        raise Invalid("hourly_too_old", f"from: hourly figures reach back {HOURLY_DAYS} days, to {reach} (UTC); "
                                        f"ask for days, or start on {reach} or later.", field="from")
    return first, last


class Dimension(StrEnum):
    """What a breakdown's rows are: sites (by domain), placements, countries, devices, UTC days, UTC hours (of the
    last ``HOURLY_DAYS`` days), and for advertisers only campaigns and conversion goals."""

    SITE = "site"
    PLACEMENT = "placement"
    COUNTRY = "country"
    DEVICE = "device"
    DAY = "day"
    HOUR = "hour"
    CAMPAIGN = "campaign"
    GOAL = "goal"


# What a site's breakdown may be by.
PUBLISHER_DIMENSIONS = (Dimension.PLACEMENT, Dimension.COUNTRY, Dimension.DEVICE, Dimension.DAY, Dimension.HOUR)


class BreakdownPeriod(Period):
    """A breakdown's days: by hour (``by=hour``), only within the last ``HOURLY_DAYS`` days, and without ``from``
    the day ``to`` alone."""

    by: Dimension

    def days(self, today: date) -> tuple[date, date]:
        """The first and last day, as ``Period.days``; Invalid ``hourly_too_old`` by hour before the last
        ``HOURLY_DAYS`` days."""
        first, last = super().days(today)
        return hourly_days(self.first, first, last, today) if self.by == Dimension.HOUR else (first, last)


class AdvertiserBreakdownQuery(BreakdownPeriod):
    """An advertiser's breakdown: its rows (``by``), over all its campaigns or one (``campaignId``)."""

    by: Dimension = Field(Dimension.SITE, description="site (by domain), placement, country, device, day, hour "
                                                      "(UTC, the last 14 days), campaign or goal")
    campaign_id: str | None = Field(None, max_length=48, description="only this campaign of the advertiser's")


class SiteBreakdownQuery(BreakdownPeriod):
    """A site's breakdown: its rows (``by``)."""

    by: Dimension = Field(Dimension.PLACEMENT, description="placement, country, device, day or hour (UTC, the last "
                                                           "14 days)")

    @field_validator("by")
    @classmethod
    def _publishers_dimension(cls, value: Dimension) -> Dimension:
        if value not in PUBLISHER_DIMENSIONS:
            raise rule("invalid_field", "placement, country, device, day or hour")
        return value


class StatementQuery(Command):
    """Which month a statement covers: ``month`` (YYYY-MM, UTC), the current one by default."""

    month: str | None = Field(None, max_length=16, description="a UTC calendar month, YYYY-MM; the current one by "
                                                               "default", examples=["2026-11"])

    def asked(self, now: datetime) -> Month:
        """The month asked for (Invalid ``invalid_month`` when it is not written YYYY-MM)."""
        return Month.of(now) if not self.month else Month.parse(self.month)
