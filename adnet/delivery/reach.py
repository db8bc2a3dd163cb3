"""What unique reach and frequency need of billed impressions (``adnet.reporting.reach`` reads it): per UTC day,
campaign, creative, site and viewer, how many impressions were billed, in ``reach_viewer_daily``.

The viewer is the frequency key (``adnet.delivery.frequency``): the embed's first-party random id signed into the
tracking token. It is never stored here as sent: the row names it by ``viewer_key``, a digest of the campaign and
the id, so the same viewer has unrelated keys in two campaigns and the table cannot join viewers across
advertisers. An impression without a viewer id (Do-Not-Track, Global Privacy Control) counts in no viewer.

Rows are kept ``KEPT_DAYS`` days, the longest range a report covers (``adnet.reporting.commands.MAX_DAYS``), then
deleted by the retention job (``adnet.delivery.retention``). The tracking batch adds to them in its transaction:
one multi-row upsert per batch that billed impressions with a viewer.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable
from datetime import date

from adnet.db.sql import Program, Statement
from adnet.delivery.billing import Decision
from adnet.delivery.models import EventType

KEPT_DAYS = 92

ReachKey = tuple[date, str, str, str, str]


def viewer_key(campaign_id: str, viewer: str) -> str:
    """The viewer's name in one campaign's reach: the first 128 bits of SHA-256 over the campaign and the id (the
    chance that two of a campaign's viewers share one is negligible at any audience size)."""
    return hashlib.sha256(f"{campaign_id}\x00{viewer}".encode()).hexdigest()[:32]


def reach_counts(decisions: Iterable[Decision]) -> Counter[ReachKey]:
    """Billed impressions with a viewer, per (day, campaign, creative, site, viewer key)."""
    counts: Counter[ReachKey] = Counter()
    for decision in decisions:
        event = decision.event
        viewer = event.claims.viewer if event.claims is not None else None
        if decision.billable and viewer and event.reported.type == EventType.IMPRESSION:
            request = event.reported
            counts[(event.received_at.date(), request.campaign_id, request.ad_id, request.site_id,
                    viewer_key(request.campaign_id, viewer))] += 1
    return counts


def reach_program(counts: Counter[ReachKey]) -> Program[None]:
    """Add per-viewer counts to ``reach_viewer_daily``, in a stable order of row locks."""
    yield Statement(_ADD_REACH, {"rows": [(*key, count) for key, count in sorted(counts.items())]})


_ADD_REACH = ("INSERT INTO reach_viewer_daily (day, campaign_id, creative_id, site_id, viewer_key, impressions) "
              "VALUES :rows ON CONFLICT (day, campaign_id, creative_id, site_id, viewer_key) DO UPDATE SET "
              "impressions = reach_viewer_daily.impressions + excluded.impressions")
