"""Time as a dependency: production reads the system clock, tests move a frozen one by hand."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta


class Clock:
    """The wall clock in UTC."""

    def now(self) -> datetime:
        return datetime.now(UTC)

    def today(self) -> date:
        """The current day in UTC, the day every report and counter uses."""
        return self.now().astimezone(UTC).date()


class FrozenClock(Clock):
    """A clock that stands still until ``advance`` moves it; for deterministic tests of windows and expiry."""

    def __init__(self, start: datetime | None = None) -> None:
        self._now = start or datetime(2026, 1, 1, tzinfo=UTC)

    def now(self) -> datetime:
        return self._now

    def advance(self, **delta: float) -> datetime:
        self._now += timedelta(**delta)
        return self._now


def iso(moment: datetime) -> str:
    """An instant as adnet writes times (JSON, CSV): ISO 8601 in UTC with a ``Z``; a time without a zone is UTC."""
    utc = moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
    return utc.isoformat().replace("+00:00", "Z")
