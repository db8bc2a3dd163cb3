"""What tracking keeps, and for how long (docs/privacy.md):

- raw tracking events (with the viewer id the embed sent, the client's network, the page and the User-Agent) for
  ``ADNET_EVENT_RETENTION_DAYS`` (default 90), then deleted; what reports need of them is already counted per day
  in ``traffic_daily`` and ``site_daily_stat``, which stay;
- deduplication keys (a viewer id, or a token digest, with the last time it was accepted) for the hour they
  deduplicate;
- billing windows (``adnet.delivery.caps``) until the window ended;
- wallets proven for impressions (``view_binding``, ``adnet.conversions.views``) for ``VIEW_BINDINGS_KEPT``: a view
  attributes for at most a day (a goal's longest view window), and a day more lets a lagging reader of on-chain
  goals still find it; keeping which wallet saw which ad any longer would serve nothing;
- per-viewer daily impression counts for reach and frequency (``adnet.delivery.reach``, under a per-campaign digest
  of the viewer id) for ``adnet.delivery.reach.KEPT_DAYS``, the longest range a report covers;
- serve request aggregates (``request_hour``, ``adnet.delivery.requests``) for ``REQUEST_DAYS``, what forecasts read;
- sampled serve decisions (``adnet.delivery.explainer``) for ``SAMPLES_KEPT``, the longest period the decision
  explainer answers for.

``prune`` deletes in bounded batches, oldest first, so a first run over a large table never holds the database for
long; the job runs it until nothing is left to delete. Deleting is idempotent, so any number of processes may run it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from adnet.db import sql
from adnet.delivery.batch import DEDUP_WINDOW
from adnet.delivery.caps import expired_before
from adnet.delivery.explainer import SAMPLES_KEPT
from adnet.delivery.reach import KEPT_DAYS
from adnet.delivery.requests import REQUEST_DAYS, hour_of

log = logging.getLogger(__name__)

BATCH_ROWS = 5000
VIEW_BINDINGS_KEPT = timedelta(days=2)


@dataclass(frozen=True)
class Pruned:
    events: int
    dedup_keys: int
    windows: int
    views: int = 0
    reach: int = 0
    request_hours: int = 0
    samples: int = 0


async def prune(now: datetime, retention_days: int, batch_rows: int = BATCH_ROWS) -> Pruned:
    """Delete what is kept no longer as of ``now``; how many rows of each kind went."""
    events = await _delete_all("tracking_event", "received_at", now - timedelta(days=retention_days), batch_rows)
    keys = await _delete_all("dedup_key", "last_accepted_at", now - DEDUP_WINDOW, batch_rows)
    windows = await _delete_all("billing_window", "window_start", expired_before(now), batch_rows)
    views = await _delete_all("view_binding", "seen_at", now - VIEW_BINDINGS_KEPT, batch_rows,
                              key="impression_event_id")
    reach = await _delete_all("reach_viewer_daily", "day", (now - timedelta(days=KEPT_DAYS)).date(), batch_rows)
    hours = await _delete_all("request_hour", "hour", hour_of(now) - timedelta(days=REQUEST_DAYS), batch_rows)
    samples = await _delete_all("decision_sample", "decided_at", now - SAMPLES_KEPT, batch_rows)
    if events or keys or windows or views or reach or hours or samples:
        log.info("retention pruned events=%d dedup_keys=%d billing_windows=%d view_bindings=%d reach_rows=%d "
                 "request_hours=%d decision_samples=%d", events, keys, windows, views, reach, hours, samples)
    return Pruned(events, keys, windows, views, reach, hours, samples)


async def _delete_all(table: str, column: str, before: datetime | date, batch_rows: int, key: str = "id") -> int:
    deleted = 0
    while True:
        count = await sql.execute(
            f"DELETE FROM {table} WHERE {key} IN (SELECT {key} FROM {table} WHERE {column} < :before "  # noqa: S608
            f"ORDER BY {column} LIMIT :rows)", before=before, rows=batch_rows)
        deleted += count
        if count < batch_rows:
            return deleted
