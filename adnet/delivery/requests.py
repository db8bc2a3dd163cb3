"""Serve request aggregates: how many serve requests each UTC hour brought, per site, banner size, country and
device kind, for the last ``REQUEST_DAYS`` days (``request_hour``), what forecasts (``adnet.delivery.forecast``) and
the audience reach's requests per day read. Never a request itself, a viewer id or an address (docs/privacy.md).

Serving counts a request by one increment of a dict in its process's memory (``RequestCounts.count``; the viewer's
country and device are those targeting works out, each once per request); the counters' job (``fill-counts``, and
once more at shutdown) adds each process's increments to the table by additive upserts, so workers counting at the
same time never overwrite one another. A failed flush keeps its increments for the next; a process killed without
its shutdown loses what it counted since its last flush (at most ``FILL_COUNT_SECONDS`` of its requests), and
nothing is ever added twice. ``adnet.delivery.retention`` deletes hours older than ``REQUEST_DAYS``."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from adnet.db import sql
from adnet.db.sql import Program, Statement
from adnet.delivery.models import RequestHour

REQUEST_DAYS = 30
# site id, UTC hour, size ("" for any), country ("" unknown), device kind
RequestKey = tuple[str, datetime, str, str, str]


def hour_of(moment: datetime) -> datetime:
    """The UTC hour ``moment`` falls in."""
    return moment.astimezone(UTC).replace(minute=0, second=0, microsecond=0)


class RequestCounts:
    """One process's serve requests counted since its last flush."""

    def __init__(self) -> None:
        self._counts: Counter[RequestKey] = Counter()

    def count(self, key: RequestKey) -> None:
        """Count one request: a dict increment, nothing more (the serving path)."""
        self._counts[key] += 1

    async def flush(self) -> None:
        """Add what was counted to ``request_hour``, in one transaction; kept for the next flush when it fails."""
        pending, self._counts = self._counts, Counter()
        if not pending:
            return
        try:
            await sql.run(add_program(pending))
        except Exception:
            self._counts.update(pending)
            raise


_ADD = ("INSERT INTO request_hour (site_id, hour, size, country, device, requests) "
        "VALUES (:site_id, :hour, :size, :country, :device, :requests) "
        "ON CONFLICT (site_id, hour, size, country, device) DO UPDATE SET "
        "requests = request_hour.requests + excluded.requests")


def add_program(increments: Counter[RequestKey]) -> Program[None]:
    """The additive upserts of ``increments`` (``adnet.db.sql``), in a stable order so concurrent flushes of several
    workers lock rows in the same order."""
    for (site_id, hour, size, country, device), count in sorted(increments.items()):
        yield Statement(_ADD, {"site_id": site_id, "hour": hour, "size": size, "country": country, "device": device,
                               "requests": count})


@dataclass(frozen=True)
class RequestRow:
    """The requests of one site, UTC hour, size, country and device kind."""

    site_id: str
    hour: datetime
    size: str
    country: str
    device: str
    requests: int


@dataclass(frozen=True)
class RecordedRequests:
    """The recorded request aggregates of a period of ``days`` days (fewer when adnet counted for less long)."""

    rows: list[RequestRow]
    days: float


async def recorded(now: datetime, site_ids: list[str] | None = None) -> RecordedRequests:
    """The aggregates of the last ``REQUEST_DAYS`` days (of ``site_ids`` only, when given), and how many days they
    cover: from the first hour recorded to now, so a network counting for a week is not divided by thirty."""
    query = RequestHour.filter(hour__gte=hour_of(now) - timedelta(days=REQUEST_DAYS))
    if site_ids is not None:
        query = query.filter(site_id__in=site_ids)
    found = await query.values_list("site_id", "hour", "size", "country", "device", "requests")
    rows = [RequestRow(site_id, hour.astimezone(UTC), size, country, device, requests)
            for site_id, hour, size, country, device, requests in found]
    first = min((row.hour for row in rows), default=None)
    days = 0.0 if first is None else max(1.0, (now - first).total_seconds() / 86_400)
    return RecordedRequests(rows, min(days, float(REQUEST_DAYS)))
