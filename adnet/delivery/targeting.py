"""Targeting at serve time: whether a campaign's rules (``adnet.campaigns.targeting``) let it be shown to the viewer
of a serve request, decided from memory.

The index compiles each campaign's stored rules once per rebuild (``compile_rules``) into frozensets and a time
zone; a serve request describes its viewer (``Viewer``) lazily, so a location is looked up and a User-Agent
classified only when some candidate campaign has a rule that needs it, and each only once per request. Nothing here
reads the database or compiles a pattern per request.

- Location: from the MaxMind-format database ``ADNET_GEOIP_DATABASE`` (a GeoLite2/GeoIP2 Country or City file,
  read with ``maxminddb``): the country's ISO code and, with a City database, the first subdivision's (``US-CA``).
  Without a database, the country a trusted proxy writes in ``ADNET_COUNTRY_HEADER`` (``CF-IPCountry`` by
  default), believed only when ``ADNET_TRUSTED_PROXIES`` is set. Without either, the location is unknown, and a
  campaign with any geo rule (include or exclude) is not served: it cannot be shown to be allowed.
- Device kind (``desktop``, ``mobile``, ``tablet``) and operating system (``OS_FAMILIES``): from the request's own
  User-Agent header, parsed with ua-parser's compiled rules, cached per distinct header.
- Schedule: the weekday and hour of the injected clock's now in the campaign's time zone.
- Keywords: those the slot passed (``keywords`` on ``/api/serve``); an excluded one always wins.
- Wallet audiences: what the audience job found the viewer's proven wallet matches (``adnet.audiences.membership``,
  held in memory), and whether the page found a wallet extension.

The viewer also carries how many impressions of each capped campaign were billed to the embed's viewer id, when the
page sent one, in the campaign's current period (``adnet.delivery.frequency``), so selection skips a campaign the
viewer has seen as often as it allows.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import maxminddb
from ua_parser import parse

from adnet.audiences.membership import NO_AUDIENCE, Audience, Membership, compile_audience
from adnet.campaigns.targeting import WEEKDAYS, Targeting
from adnet.delivery.clients import Client

log = logging.getLogger(__name__)

# ua-parser's operating system families, as adnet's OS_FAMILIES names them; any other is "other".
_OS_NAMES = {"Windows": "windows", "Mac OS X": "macos", "iOS": "ios", "iPadOS": "ios", "Android": "android",
             "Chrome OS": "chromeos", "Linux": "linux", "Ubuntu": "linux", "Fedora": "linux", "Debian": "linux",
             "Red Hat": "linux", "SUSE": "linux", "Arch Linux": "linux", "Mint": "linux", "FreeBSD": "other"}
_MOBILE_OS = frozenset({"ios", "android"})
# What ``Rules.refusal`` names, in the order it asks.
TARGETING_REFUSALS = ("targeting_keywords", "targeting_schedule", "targeting_device", "targeting_os",
                      "targeting_audience", "targeting_country")


@dataclass(frozen=True)
class Location:
    """Where a viewer is: a country code and, when known, a region code (``US-CA``)."""

    country: str
    region: str | None = None

    @cached_property
    def codes(self) -> frozenset[str]:
        return frozenset(code for code in (self.country, self.region) if code)


class Locator:
    """Where a client is, from the GeoIP database when one is configured, else from a trusted proxy's header."""

    def __init__(self, database: Path | None = None) -> None:
        self.reader = maxminddb.open_database(str(database)) if database is not None else None

    def locate(self, client: Client) -> Location | None:
        if self.reader is None:
            return _from_header(client.country)
        return _from_record(self.reader, client.ip)

    def close(self) -> None:
        if self.reader is not None:
            self.reader.close()


def _from_header(country: str | None) -> Location | None:
    code = (country or "").strip().upper()
    # Proxies write XX (unknown) or T1 (Tor) where they know no country.
    return Location(code) if len(code) == 2 and code.isalpha() and code != "XX" else None


def _from_record(reader: Any, address: str) -> Location | None:
    try:
        record = reader.get(address)
    except ValueError:  # not an IP address, or an IPv6 one in an IPv4-only database
        return None
    if not isinstance(record, dict):
        return None
    country = (record.get("country") or {}).get("iso_code")
    if not isinstance(country, str):
        return None
    subdivisions = record.get("subdivisions") or []
    region = subdivisions[0].get("iso_code") if subdivisions and isinstance(subdivisions[0], dict) else None
    return Location(country, f"{country}-{region}" if isinstance(region, str) else None)


@lru_cache(maxsize=4096)
def device_of(user_agent: str) -> tuple[str, str]:
    """(device kind, operating system) of a User-Agent header: ``("tablet", "android")``, ``("desktop", "other")``."""
    parsed = parse(user_agent)
    system = _OS_NAMES.get(parsed.os.family, "other") if parsed.os is not None else "other"
    device = parsed.device
    family = device.family if device is not None else ""
    brand = (device.brand or "") if device is not None else ""
    if family.startswith("iPad") or "Tablet" in brand or "Tablet" in family or "Kindle" in family or (
            system == "android" and "Mobile" not in user_agent):
        return "tablet", system
    if system in _MOBILE_OS or "Mobi" in user_agent:
        return "mobile", system
    return "desktop", system


class Viewer:
    """Who a serve request is for, each part worked out only when a rule asks, and at most once per request (its
    location) or per distinct User-Agent (its device and system)."""

    def __init__(self, client: Client, keywords: frozenset[str], locator: Locator, *,
                 seen: Mapping[str, int] | None = None, membership: Membership | None = None,
                 injected_wallet: bool = False) -> None:
        self.client = client
        self.keywords = keywords
        self._locator = locator
        self._seen = seen or {}
        self.membership = membership
        self.injected_wallet = injected_wallet

    def capped(self, campaign_id: str, cap: int | None) -> bool:
        """Whether this viewer was billed ``cap`` impressions of the campaign in its current period, as far as the
        frequency counts read for this request know (``seen``: campaign id → impressions); never for a campaign
        without a cap."""
        return cap is not None and self._seen.get(campaign_id, 0) >= cap

    @cached_property
    def location(self) -> Location | None:
        return self._locator.locate(self.client)

    # Read from ``device_of``'s cache of each distinct header: cheaper than a cached_property, which on Python 3.11
    # takes a lock the first time it is read, on every request.
    @property
    def device(self) -> str:
        return device_of(self.client.user_agent)[0]

    @property
    def os(self) -> str:
        return device_of(self.client.user_agent)[1]


@dataclass(frozen=True)
class Rules:
    """A campaign's targeting, compiled for serving: every set empty means no limit on that dimension."""

    geo_include: frozenset[str] = frozenset()
    geo_exclude: frozenset[str] = frozenset()
    devices_include: frozenset[str] = frozenset()
    devices_exclude: frozenset[str] = frozenset()
    os_include: frozenset[str] = frozenset()
    os_exclude: frozenset[str] = frozenset()
    days: frozenset[int] = frozenset()
    hours: frozenset[int] = frozenset()
    # (weekday, hour) pairs, Monday 0, when the hours differ by day.
    week_hours: frozenset[tuple[int, int]] = frozenset()
    zone: ZoneInfo | None = None
    keywords_include: frozenset[str] = frozenset()
    keywords_exclude: frozenset[str] = frozenset()
    audience: Audience = NO_AUDIENCE

    def allows(self, viewer: Viewer, now: datetime) -> bool:
        """Whether the campaign may be shown to ``viewer`` at ``now`` (``refusal`` finds no rule against it)."""
        return self.refusal(viewer, now) is None

    def refusal(self, viewer: Viewer, now: datetime) -> str | None:
        """The first rule that keeps the campaign from ``viewer`` at ``now``, named as in ``TARGETING_REFUSALS``;
        None when every rule allows it. The cheapest checks first, each only where the campaign limits that
        dimension (so a viewer's location or device is looked up only when a rule needs it)."""
        if (self.keywords_include or self.keywords_exclude) and not _admits_any(
                self.keywords_include, self.keywords_exclude, viewer.keywords):
            return "targeting_keywords"
        if self.zone is not None and not self.on_schedule(now):
            return "targeting_schedule"
        if (self.devices_include or self.devices_exclude) and not _admits(
                self.devices_include, self.devices_exclude, viewer.device):
            return "targeting_device"
        if (self.os_include or self.os_exclude) and not _admits(self.os_include, self.os_exclude, viewer.os):
            return "targeting_os"
        if self.audience is not NO_AUDIENCE and not self.audience.admits(viewer.membership, viewer.injected_wallet,
                                                                        now):
            return "targeting_audience"
        if (self.geo_include or self.geo_exclude) and not self.locates(viewer.location):
            return "targeting_country"
        return None

    def on_schedule(self, now: datetime) -> bool:
        """Whether ``now``, in the campaign's time zone, is on one of its days and hours, and one of its hours of
        that day (any, for a rule it does not set)."""
        local = now.astimezone(self.zone)
        return ((not self.days or local.weekday() in self.days) and (not self.hours or local.hour in self.hours)
                and (not self.week_hours or (local.weekday(), local.hour) in self.week_hours))

    def admits_device(self, device: str) -> bool:
        """Whether the device rules allow a device kind (what forecasts, which know no User-Agent, ask)."""
        return _admits(self.devices_include, self.devices_exclude, device)

    def locates(self, location: Location | None) -> bool:
        """Whether the geo rules allow ``location``: an unknown one never, an excluded code always refuses."""
        return location is not None and _admits_any(self.geo_include, self.geo_exclude, location.codes)


def _admits(include: frozenset[str], exclude: frozenset[str], value: str) -> bool:
    """Whether ``value`` passes an include and an exclude list (an empty include list admits anything)."""
    return value not in exclude and (not include or value in include)


def _admits_any(include: frozenset[str], exclude: frozenset[str], values: frozenset[str]) -> bool:
    """Whether ``values`` pass: none of them excluded, and one of them included when there is an include list."""
    return not exclude & values and (not include or bool(include & values))


NO_RULES = Rules()


def compile_rules(stored: dict[str, Any] | None) -> Rules:
    """A campaign's stored targeting (its ``targeting`` column), compiled once for the serving index. Stored rules
    were validated when written; rules that no longer validate (a time zone gone from the system's database) raise
    ValueError, and the index leaves that campaign out rather than serve it untargeted."""
    if not stored:
        return NO_RULES
    targeting = Targeting.model_validate(stored)
    scheduled = bool(targeting.days or targeting.hours or targeting.week_hours)
    return Rules(
        geo_include=frozenset(targeting.geo_include), geo_exclude=frozenset(targeting.geo_exclude),
        devices_include=frozenset(targeting.devices_include), devices_exclude=frozenset(targeting.devices_exclude),
        os_include=frozenset(targeting.os_include), os_exclude=frozenset(targeting.os_exclude),
        days=frozenset(WEEKDAYS.index(day) for day in targeting.days), hours=frozenset(targeting.hours),
        week_hours=frozenset((WEEKDAYS.index(day), hour) for day, hours in targeting.week_hours.items()
                             for hour in hours),
        zone=ZoneInfo(targeting.time_zone) if scheduled else None,
        keywords_include=frozenset(targeting.keywords_include),
        keywords_exclude=frozenset(targeting.keywords_exclude),
        audience=compile_audience(targeting.audience_groups, targeting.audience_exclude))
