"""The time zone a viewer reads hourly reports in: an IANA zone the viewer picks (``Europe/Berlin``), UTC by default.

Reports count in UTC buckets (``adnet.reporting.buckets``); a zone only changes how an hour's start is written, so
figures never depend on it. The zones are the IANA database's, through the standard library's ``zoneinfo`` (the
system's tz database, or the ``tzdata`` package where the system has none): a name outside it is not a zone, so
nothing a viewer sends reaches ``ZoneInfo`` unchecked.
"""

from __future__ import annotations

from datetime import datetime
from functools import lru_cache
from zoneinfo import ZoneInfo, available_timezones

DEFAULT_ZONE = "UTC"


@lru_cache(maxsize=1)
def zone_names() -> tuple[str, ...]:
    """Every IANA zone name known here, sorted, ``UTC`` always among them."""
    return tuple(sorted(available_timezones() | {DEFAULT_ZONE}))


def zone_named(name: str | None) -> ZoneInfo | None:
    """The zone ``name`` names, or None when it names none."""
    if not name or name not in zone_names():
        return None
    return ZoneInfo(name)


def offset_text(zone: ZoneInfo, moment: datetime) -> str:
    """The zone's offset from UTC at ``moment``, as ``UTC+01:00`` (``UTC`` for none)."""
    offset = moment.astimezone(zone).utcoffset()
    if not offset:
        return "UTC"
    minutes = int(offset.total_seconds()) // 60
    sign = "+" if minutes >= 0 else "-"
    return f"UTC{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"


def local_hour(hour: datetime, zone: ZoneInfo) -> str:
    """The start of a UTC hour as the zone writes it, ``YYYY-MM-DD HH:MM`` and its offset (``UTC+05:30``), so an
    hour is never ambiguous, not even when the zone's clocks go back."""
    local = hour.astimezone(zone)
    return f"{local:%Y-%m-%d %H:%M} ({offset_text(zone, hour)})"
