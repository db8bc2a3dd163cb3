"""What unique reach and frequency need of billed impressions (``adnet.reporting.reach`` reads it): per UTC day,
campaign, creative, site and viewer, how many impressions were billed, in ``reach_viewer_daily``.

The viewer is the frequency key (``adnet.delivery.frequency``): the embed's first-party random id signed into the
tracking token. It is never stored as sent: the tracking batch writes each event's ``viewer_key``, a digest of the
campaign and the id, so the same viewer has unrelated keys in two campaigns and no table can join viewers across
advertisers. An impression without a viewer id (Do-Not-Track, Global Privacy Control) counts in no viewer.

**Off the tracking path.** Tracking writes nothing for reach but two columns of the event row it writes anyway
(``viewer_key``, and ``recorded_at``: the batch's ``now``). The ``reach`` job (``count_new``, every
``COUNT_SECONDS`` in the one process of all workers and hosts that holds its lease) reads the billed impressions
with a viewer recorded after its cursor (``reach_cursor``: a moment and, at that moment, an event id) and before
``SETTLE`` ago, adds them to ``reach_viewer_daily`` and moves the cursor past them, in one transaction: a pass that
fails changes nothing, a restarted or new leader goes on from the cursor, and two passes at once (while the lease
changes hands) take turns on the cursor's row, so no event is counted twice. Reach figures are therefore at most
``COUNT_SECONDS`` + ``SETTLE`` behind tracking.

``SETTLE`` is the time a batch may take from its ``now`` to its commit, plus the difference between the hosts'
clocks: an event committed later than that behind the cursor is not counted in any viewer (it is billed and in
every other report), as a lease's holders also rely on clocks that agree.

Rows are kept ``KEPT_DAYS`` days, the longest range a report covers (``adnet.reporting.commands.MAX_DAYS``), then
deleted by the retention job (``adnet.delivery.retention``).
"""

from __future__ import annotations

import hashlib
import logging
from collections import Counter
from datetime import UTC, datetime, timedelta

from adnet.db import sql
from adnet.db.sql import Program, Statement
from adnet.delivery.caps import stored_utc
from adnet.delivery.models import EventType

log = logging.getLogger(__name__)

KEPT_DAYS = 92
COUNT_SECONDS = 10.0
SETTLE = timedelta(seconds=30)
REACH_LEASE = "reach"
EVENTS_PER_PASS = 5_000
# Where a new deployment's cursor starts: before every event.
_START = datetime(1970, 1, 1, tzinfo=UTC)


def viewer_key(campaign_id: str, viewer: str) -> str:
    """The viewer's name in one campaign's reach: the first 128 bits of SHA-256 over the campaign and the id (the
    chance that two of a campaign's viewers share one is negligible at any audience size)."""
    return hashlib.sha256(f"{campaign_id}\x00{viewer}".encode()).hexdigest()[:32]


async def count_new(now: datetime, events_per_pass: int = EVENTS_PER_PASS) -> int:
    """The job: count every billed impression with a viewer recorded before ``now - SETTLE`` and not counted yet,
    in transactions of at most ``events_per_pass`` events each; how many were counted."""
    before = now - SETTLE
    counted = 0
    while True:
        added, more = await sql.transaction(lambda: _count_page(before, events_per_pass))
        counted += added
        if not more:
            break
    if counted:
        log.info("reach counted impressions=%d", counted)
    return counted


def _count_page(before: datetime, limit: int) -> Program[tuple[int, bool]]:
    """One pass in one transaction: take the cursor's row (a second pass at once waits here, then reads where this
    one left it), count the next ``limit`` events recorded before ``before``, move the cursor past them. How many
    it counted, and whether more may be waiting."""
    cursor = yield Statement(_TAKE_CURSOR, {"name": REACH_LEASE, "start": _START})
    at, event_id = cursor.rows[0]["recorded_at"], cursor.rows[0]["event_id"]
    page = yield Statement(_PAGE, {"at": at, "event_id": event_id, "before": before, "limit": limit,
                                   "type": EventType.IMPRESSION.value})
    counts: Counter[tuple[object, ...]] = Counter(
        (stored_utc(row["received_at"]).date(), row["campaign_id"], row["creative_id"], row["site_id"],
         row["viewer_key"]) for row in page.rows)
    if counts:
        yield Statement(_ADD_REACH, {"rows": [(*key, count) for key, count in sorted(counts.items())]})
    full = len(page.rows) == limit
    if full:
        yield Statement(_MOVE_CURSOR, {"name": REACH_LEASE, "at": page.rows[-1]["recorded_at"],
                                       "event_id": page.rows[-1]["id"]})
    elif stored_utc(at) < before:  # never back: a clock that stepped back would count events again
        yield Statement(_MOVE_CURSOR, {"name": REACH_LEASE, "at": before, "event_id": ""})
    return len(page.rows), full


# Insert the cursor at the start, or lock it as it is; either way answer it.
_TAKE_CURSOR = ("INSERT INTO reach_cursor (name, recorded_at, event_id) VALUES (:name, :start, '') "
                "ON CONFLICT (name) DO UPDATE SET event_id = reach_cursor.event_id RETURNING recorded_at, event_id")
_PAGE = ("SELECT id, recorded_at, received_at, campaign_id, creative_id, site_id, viewer_key FROM tracking_event "
         "WHERE (recorded_at > :at OR (recorded_at = :at AND id > :event_id)) AND recorded_at < :before "
         "AND billable AND type = :type AND viewer_key IS NOT NULL ORDER BY recorded_at, id LIMIT :limit")
_ADD_REACH = ("INSERT INTO reach_viewer_daily (day, campaign_id, creative_id, site_id, viewer_key, impressions) "
              "VALUES :rows ON CONFLICT (day, campaign_id, creative_id, site_id, viewer_key) DO UPDATE SET "
              "impressions = reach_viewer_daily.impressions + excluded.impressions")
_MOVE_CURSOR = "UPDATE reach_cursor SET recorded_at = :at, event_id = :event_id WHERE name = :name"
