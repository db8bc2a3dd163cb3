"""Billing caps, exact across workers and hosts: what one client network may be billed for per site and per
campaign in a window, and what a campaign may spend in a UTC day.

Each cap is a row of ``billing_window`` (a key, the start of its window, what was used in it). On PostgreSQL a
tracking batch first locks every row its candidate events need, with one upsert that inserts a missing row and
rewrites a present one unchanged (``ON CONFLICT … DO UPDATE``), reading back what is used: the rows stay locked
until the batch commits, so a concurrent batch in another process waits and then reads the new figure. On SQLite
the batch holds the database's single writer from its first statement (``BEGIN IMMEDIATE``), so it only reads.
The batch decides its events in arrival order against those figures and adds what it billed before it commits. No
cap is ever decided in process memory.

Windows are fixed, aligned to the epoch (a 300-second window starts at :00, :05, :10 …), like the rate limits of
Ethical Ads' ad server; a client can thus be billed up to twice a cap across a window's boundary, never more.

- per client network (``adnet.delivery.clients.network``: IPv4 /24, IPv6 /48) and site, impressions and clicks
  apart: ``ADNET_CAP_SITE_IMPRESSIONS`` (default 5 per 300 s, Ethical Ads' 5 billed views per 5 minutes per IP,
  counted here per network, which is stricter), ``ADNET_CAP_SITE_CLICKS`` (default 2 per 300 s);
- per client network and campaign: ``ADNET_CAP_CAMPAIGN_IMPRESSIONS`` (default 3 per 300 s),
  ``ADNET_CAP_CAMPAIGN_CLICKS`` (default 1 per 300 s);
- per campaign and UTC day, in G$ smallest units: spend, kept for every campaign and capped by its ``dailyCap``.

The retention job (``adnet.delivery.retention``) deletes windows that ended.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta
from decimal import Decimal

from adnet.config import RateLimit, Settings
from adnet.db import sql
from adnet.db.sql import Program, Statement
from adnet.delivery.models import EventType

WindowKey = tuple[str, datetime]


@dataclass(frozen=True)
class Caps:
    """The per-client caps of billable events: per site and per campaign, for impressions and for clicks."""

    site_impressions: RateLimit
    site_clicks: RateLimit
    campaign_impressions: RateLimit
    campaign_clicks: RateLimit

    @classmethod
    def of(cls, settings: Settings) -> Caps:
        return cls(settings.cap_site_impressions, settings.cap_site_clicks, settings.cap_campaign_impressions,
                   settings.cap_campaign_clicks)

    def client_windows(self, *, site_id: str, campaign_id: str, network: str, kind: EventType, at: datetime
                       ) -> list[tuple[WindowKey, int]]:
        """The windows one billed event of a client counts in, each with its cap."""
        per_site, per_campaign = ((self.site_impressions, self.campaign_impressions) if kind == EventType.IMPRESSION
                                  else (self.site_clicks, self.campaign_clicks))
        return [((f"site:{site_id}:{network}:{kind.value}", window_start(at, per_site.seconds)), per_site.count),
                ((f"campaign:{campaign_id}:{network}:{kind.value}", window_start(at, per_campaign.seconds)),
                 per_campaign.count)]


def window_start(moment: datetime, seconds: int) -> datetime:
    """The start of the fixed, epoch-aligned window of ``seconds`` that ``moment`` falls in."""
    epoch = int(moment.timestamp())
    return datetime.fromtimestamp(epoch - epoch % seconds, tz=UTC)


def spend_window(campaign_id: str, moment: datetime) -> WindowKey:
    """The window of a campaign's spend on the UTC day of ``moment``."""
    return f"spend:{campaign_id}", day_start(moment)


def day_start(moment: datetime) -> datetime:
    return datetime.combine(moment.astimezone(UTC).date(), time.min, tzinfo=UTC)


def lock_windows(keys: set[WindowKey], *, single_writer: bool) -> Program[dict[WindowKey, int]]:
    """Lock the windows ``keys`` until the transaction ends, and read what each used (0 for one not yet written).
    Under a single writer (SQLite, whose batch began ``IMMEDIATE``) the transaction already excludes every other
    writer, so a read suffices; elsewhere one upsert creates the missing rows and locks them all."""
    if not keys:
        return {}
    if single_writer:
        found = yield Statement(_READ, {"keys": sorted({key for key, _ in keys})})
        used = {(row["key"], stored_utc(row["window_start"])): int(Decimal(row["used"])) for row in found.rows}
        return {window: used.get(window, 0) for window in keys}
    locked = yield Statement(_LOCK, {"rows": [(key, start, Decimal(0)) for key, start in sorted(keys)]})
    return {(row["key"], stored_utc(row["window_start"])): int(Decimal(row["used"])) for row in locked.rows}


def add_to_windows(used: dict[WindowKey, int]) -> Program[None]:
    """Add what a batch billed to its (locked) windows."""
    rows = [(key, start, Decimal(amount)) for (key, start), amount in sorted(used.items()) if amount]
    if rows:
        yield Statement(_ADD, {"rows": rows})


async def spent_today(now: datetime, campaign_ids: Iterable[str] | None = None) -> dict[str, int]:
    """What each campaign (or each of ``campaign_ids``) spent on the UTC day of ``now``: for the serving index."""
    if campaign_ids is None:
        rows = await sql.fetch("SELECT key, used FROM billing_window WHERE key LIKE 'spend:%' "
                               "AND window_start = :day", day=day_start(now))
    else:
        rows = await sql.fetch("SELECT key, used FROM billing_window WHERE key IN (:keys) AND window_start = :day",
                               keys=sorted(spend_window(campaign_id, now)[0] for campaign_id in campaign_ids),
                               day=day_start(now))
    return {str(row["key"]).removeprefix("spend:"): int(Decimal(row["used"])) for row in rows}


def expired_before(now: datetime) -> datetime:
    """Windows that started before this have ended (the longest window is a day)."""
    return day_start(now) - timedelta(days=1)


def stored_utc(value: datetime | str) -> datetime:
    """A moment a raw statement read back (SQLite answers text, PostgreSQL a datetime), in UTC."""
    moment = datetime.fromisoformat(value) if isinstance(value, str) else value
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


_READ = "SELECT key, window_start, used FROM billing_window WHERE key IN (:keys)"
_LOCK = ("INSERT INTO billing_window (key, window_start, used) VALUES :rows "
         "ON CONFLICT (key, window_start) DO UPDATE SET used = billing_window.used "
         "RETURNING key, window_start, used")
_ADD = ("INSERT INTO billing_window (key, window_start, used) VALUES :rows "
        "ON CONFLICT (key, window_start) DO UPDATE SET used = billing_window.used + excluded.used")
