"""A campaign's targeting rules, as the advertiser writes them: where (countries and regions), on what (device
kind and operating system), when (weekdays and hours in the campaign's time zone, or hours that differ from day to
day) and next to what (page keywords). Each dimension has an include list (empty: no limit) and, except time, an
exclude list; an exclude always wins over an include.

``Targeting`` is the command model the API and the portal both parse; the campaign stores it as JSON, and the
serving index compiles it once per rebuild (``adnet.delivery.targeting``), so a serve decision reads no database
and parses nothing.

Codes: a country is its ISO 3166-1 alpha-2 code (``DE``), a region its ISO 3166-2 code (``US-CA``), both checked
against pycountry's tables; a device kind is ``desktop``, ``mobile`` or ``tablet``; an operating system one of
``OS_FAMILIES``; a weekday ``mon`` … ``sun``; an hour 0 to 23; a time zone an IANA name (``Europe/Berlin``); a
keyword 1 to 40 letters, digits, ``-`` or ``_``, compared case-insensitively. Wallet audiences (who holds or used
what on adnet's chain) are rules of their own, in ``adnet.campaigns.audiences``.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Annotated, Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

import pycountry
from pydantic import AfterValidator, BeforeValidator, ConfigDict, Field, WithJsonSchema

from adnet.campaigns.audiences import ExcludeList, GroupList
from adnet.core.inputs import Command, rule

DEVICES = ("desktop", "mobile", "tablet")
OS_FAMILIES = ("windows", "macos", "ios", "android", "linux", "chromeos")
WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
MAX_GEO = 300
MAX_KEYWORDS = 100
MAX_KEYWORD_LENGTH = 40
KEYWORD = re.compile(rf"^[\w-]{{1,{MAX_KEYWORD_LENGTH}}}$")


def _distinct(items: list[Any]) -> list[Any]:
    return list(dict.fromkeys(items))


def _geo(value: Any) -> str:
    code = value.strip().upper() if isinstance(value, str) else ""
    known = (pycountry.countries.get(alpha_2=code) if len(code) == 2
             else pycountry.subdivisions.get(code=code) if "-" in code else None)
    if known is None:
        raise rule("invalid_geo", "a country code such as DE or a region code such as US-CA (ISO 3166)")
    return code


def normalize_keyword(value: Any) -> str:
    """A keyword as it is compared: trimmed and case-folded; ``invalid_keyword`` when it is not one."""
    keyword = value.strip().casefold() if isinstance(value, str) else ""
    if not KEYWORD.match(keyword):
        raise rule("invalid_keyword", f"1 to {MAX_KEYWORD_LENGTH} letters, digits, - or _")
    return keyword


def _time_zone(value: Any) -> str:
    try:
        ZoneInfo(value)
    except (ZoneInfoNotFoundError, ValueError, TypeError):
        raise rule("invalid_time_zone", "an IANA time zone such as UTC or Europe/Berlin") from None
    return str(value)


@cache
def time_zones() -> list[str]:
    """Every time zone a campaign may name, sorted (for the portal's picker)."""
    return sorted(available_timezones() | {"UTC"})


def countries() -> list[tuple[str, str]]:
    """Every ISO 3166-1 country as (code, name), sorted by name (for the portal's picker)."""
    return sorted(((country.alpha_2, country.name) for country in pycountry.countries), key=lambda pair: pair[1])


GeoCode = Annotated[str, BeforeValidator(_geo), WithJsonSchema(
    {"type": "string", "pattern": "^[A-Z]{2}(-[A-Z0-9]{1,3})?$", "examples": ["DE", "US-CA"]})]
Keyword = Annotated[str, BeforeValidator(normalize_keyword), WithJsonSchema(
    {"type": "string", "pattern": r"^[\w-]{1,40}$", "examples": ["defi"]})]
GeoList = Annotated[list[GeoCode], Field(max_length=MAX_GEO), AfterValidator(_distinct)]
DeviceList = Annotated[list[Literal["desktop", "mobile", "tablet"]], Field(max_length=len(DEVICES)),
                       AfterValidator(_distinct)]
OsList = Annotated[list[Literal["windows", "macos", "ios", "android", "linux", "chromeos"]],
                   Field(max_length=len(OS_FAMILIES)), AfterValidator(_distinct)]
KeywordList = Annotated[list[Keyword], Field(max_length=MAX_KEYWORDS), AfterValidator(_distinct)]
Weekday = Literal["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
Hour = Annotated[int, Field(ge=0, le=23)]
DayHours = Annotated[list[Hour], Field(min_length=1, max_length=24), AfterValidator(_distinct)]


class Targeting(Command):
    """Who, where and when a campaign is shown. Every list empty (the default): everyone, everywhere, always. An
    unknown key is refused (a misspelt rule would otherwise be no rule); responses write it in camelCase too."""

    model_config = ConfigDict(**Command.model_config, extra="forbid", serialize_by_alias=True)

    geo_include: GeoList = Field([], description="countries (DE) and regions (US-CA) it runs in; empty = anywhere")
    geo_exclude: GeoList = Field([], description="countries and regions it never runs in")
    devices_include: DeviceList = Field([], description="desktop, mobile, tablet; empty = every device")
    devices_exclude: DeviceList = []
    os_include: OsList = Field([], description=f"{', '.join(OS_FAMILIES)}; empty = every system")
    os_exclude: OsList = []
    days: Annotated[list[Weekday], Field(max_length=7), AfterValidator(_distinct)] = Field(
        [], description="weekdays it runs on; empty = every day")
    hours: Annotated[list[Hour], Field(max_length=24), AfterValidator(_distinct)] = \
        Field([], description="hours of the day (0-23) it runs in; empty = every hour")
    week_hours: dict[Weekday, DayHours] = Field(
        {}, description="hours (0-23) it runs in on each weekday named, for hours that differ by day "
        '({"mon": [9, 10], "sat": [20]}); a day not named never runs; empty = no such limit. Applies together '
        "with days and hours")
    time_zone: Annotated[str, BeforeValidator(_time_zone)] = Field(
        "UTC", description="the IANA time zone days, hours and weekHours are read in")
    keywords_include: KeywordList = Field([], description="runs only where the page names one; empty = any page")
    keywords_exclude: KeywordList = Field([], description="never runs where the page names one")
    audience_groups: GroupList = Field([], description="wallet audiences: runs for a viewer for whom every rule of "
                                       "one group holds; empty = every viewer (adnet.campaigns.audiences)")
    audience_exclude: ExcludeList = Field([], description="wallet audiences it never runs for")

    def stored(self) -> dict[str, Any]:
        """What the campaign's ``targeting`` column holds."""
        return self.model_dump(mode="json", by_alias=False)
