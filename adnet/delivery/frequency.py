"""Frequency caps: at most ``frequencyCap`` billed impressions of a campaign per viewer in each period of
``frequencyHours`` (1 to 24).

The viewer is the embed's first-party random id (kept in the page's localStorage; not a cookie, not a fingerprint;
never sent under Do-Not-Track or Global Privacy Control), which ``/api/serve`` takes as ``viewer`` and signs into
the tracking token. An impression served without one is not frequency-capped.

Two places apply the cap:

- **Billing, exactly.** The cap is a billing window (``adnet.delivery.caps``) keyed by campaign and viewer, locked
  and counted in the tracking batch's transaction like the client caps, so it holds across workers and hosts; an
  impression beyond it is recorded as ``frequency_capped`` and never billed. Periods are fixed windows aligned to
  the epoch (a 24-hour period starts at 00:00 UTC), as for every billing window.
- **Serving, from memory.** ``FrequencyMemory`` keeps, per process, how many impressions of each capped campaign
  this process billed to each viewer in the current period; serving skips a campaign the viewer has reached, without
  a query. With several workers, one may offer a campaign another billed up to the cap: billing still refuses it.
"""

from __future__ import annotations

from datetime import datetime

from adnet.delivery.caps import WindowKey, window_start

MAX_ENTRIES = 200_000


def frequency_window(campaign_id: str, viewer: str, moment: datetime, seconds: int) -> WindowKey:
    """The billing window of a campaign's impressions to ``viewer`` in the period of ``moment``."""
    return f"frequency:{campaign_id}:{viewer}", window_start(moment, seconds)


class FrequencyMemory:
    """What this process billed of each capped campaign to each viewer, per period; bounded: when full, periods
    that started before the current UTC day are dropped, and if that frees nothing, everything (serving then relies
    on billing's exact cap)."""

    def __init__(self, max_entries: int = MAX_ENTRIES) -> None:
        self.max_entries = max_entries
        self._seen: dict[WindowKey, int] = {}

    def reached(self, campaign_id: str, viewer: str, cap: int, seconds: int, now: datetime) -> bool:
        """Whether this process billed ``viewer`` ``cap`` impressions of the campaign in the period of ``now``."""
        return self._seen.get(frequency_window(campaign_id, viewer, now, seconds), 0) >= cap

    def add(self, window: WindowKey, now: datetime) -> None:
        """One more billed impression in ``window``."""
        if window not in self._seen and len(self._seen) >= self.max_entries:
            self._forget_before(window_start(now, 86_400))
        self._seen[window] = self._seen.get(window, 0) + 1

    def _forget_before(self, moment: datetime) -> None:
        self._seen = {window: count for window, count in self._seen.items() if window[1] >= moment}
        if len(self._seen) >= self.max_entries:
            self._seen.clear()
