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
- **Serving, without a query.** ``FrequencyCounts`` says how many impressions of each capped campaign were billed
  to a viewer in the current period; serving skips a campaign the viewer has reached. After a tracking batch
  committed, the impressions it billed of capped campaigns are added (``add``). Two implementations:

  - ``RedisFrequency`` when ``ADNET_REDIS_URL`` names a Redis: one counter per campaign, viewer and period
    (``INCR``, expiring when the period ends), added in one pipeline per batch and read for all the viewer's
    capped candidates in one ``MGET``, so a worker or host skips a campaign another billed up to the cap. While
    Redis cannot be reached (``adnet.core.redis_link``, which says so in the log and to health), serving reads no
    counts and adding loses them: billing still refuses what is over.
  - ``FrequencyMemory`` without: what this process billed, bounded. With several workers, one may offer a campaign
    another billed up to the cap; billing still refuses it.
"""

from __future__ import annotations

import contextlib
import math
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta
from typing import NamedTuple

from adnet.core.redis_link import RedisLink, RedisUnavailable
from adnet.delivery.caps import WindowKey, window_start

MAX_ENTRIES = 200_000


class Billed(NamedTuple):
    """An impression of a capped campaign billed to ``viewer`` at ``at``; ``seconds`` is the campaign's period."""

    campaign_id: str
    viewer: str
    seconds: int
    at: datetime


def frequency_window(campaign_id: str, viewer: str, moment: datetime, seconds: int) -> WindowKey:
    """The billing window of a campaign's impressions to ``viewer`` in the period of ``moment``."""
    return f"frequency:{campaign_id}:{viewer}", window_start(moment, seconds)


class FrequencyCounts(ABC):
    """How many impressions of each capped campaign were billed to each viewer in the current period, as serving
    sees it (a hint: billing decides exactly)."""

    @abstractmethod
    async def counts(self, viewer: str, periods: Mapping[str, int], now: datetime) -> dict[str, int]:
        """The billed impressions to ``viewer`` of each campaign ``periods`` names (campaign id → its period in
        seconds), in the period of ``now``; a campaign with none may be left out."""

    @abstractmethod
    async def add(self, billed: Iterable[Billed]) -> None:
        """Count impressions a committed tracking batch billed."""

    @abstractmethod
    async def close(self) -> None:
        """Release what the counts hold (at shutdown)."""


class FrequencyMemory(FrequencyCounts):
    """What this process billed of each capped campaign to each viewer, per period; bounded: when full, periods
    that started before the current UTC day are dropped, and if that frees nothing, everything (serving then relies
    on billing's exact cap)."""

    def __init__(self, max_entries: int = MAX_ENTRIES) -> None:
        self.max_entries = max_entries
        self._seen: dict[WindowKey, int] = {}

    async def counts(self, viewer: str, periods: Mapping[str, int], now: datetime) -> dict[str, int]:
        found = {campaign_id: self._seen.get(frequency_window(campaign_id, viewer, now, seconds), 0)
                 for campaign_id, seconds in periods.items()}
        return {campaign_id: count for campaign_id, count in found.items() if count}

    async def add(self, billed: Iterable[Billed]) -> None:
        for impression in billed:
            window = frequency_window(impression.campaign_id, impression.viewer, impression.at, impression.seconds)
            if window not in self._seen and len(self._seen) >= self.max_entries:
                self._forget_before(window_start(impression.at, 86_400))
            self._seen[window] = self._seen.get(window, 0) + 1

    async def close(self) -> None:
        """Nothing to release: the memory ends with the process."""

    def _forget_before(self, moment: datetime) -> None:
        self._seen = {window: count for window, count in self._seen.items() if window[1] >= moment}
        if len(self._seen) >= self.max_entries:
            self._seen.clear()


class RedisFrequency(FrequencyCounts):
    """The counts of every process on one Redis: ``adnet:frequency:<campaign>:<viewer>:<period start, epoch s>``,
    each expiring when its period ends (an expiry relative to the billed impression's time, so Redis's clock need
    not agree with the service's)."""

    PREFIX = "adnet:frequency:"

    def __init__(self, redis_url: str, link: RedisLink | None = None) -> None:
        self.link = link or RedisLink(redis_url)
        self._redis = self.link.client()

    @classmethod
    def key(cls, campaign_id: str, viewer: str, moment: datetime, seconds: int) -> str:
        """The counter of ``viewer``'s impressions of the campaign in the period of ``moment``."""
        return f"{cls.PREFIX}{campaign_id}:{viewer}:{int(window_start(moment, seconds).timestamp())}"

    async def counts(self, viewer: str, periods: Mapping[str, int], now: datetime) -> dict[str, int]:
        if not periods:
            return {}
        campaign_ids = list(periods)
        keys = [self.key(campaign_id, viewer, now, periods[campaign_id]) for campaign_id in campaign_ids]
        try:
            values = await self.link.call(lambda: self._redis.mget(keys))
        except RedisUnavailable:
            return {}
        return {campaign_id: int(value) for campaign_id, value in zip(campaign_ids, values, strict=True)
                if value is not None}

    async def add(self, billed: Iterable[Billed]) -> None:
        added: Counter[str] = Counter()
        left: dict[str, int] = {}  # seconds until the period ends, from the latest impression's time
        for impression in billed:
            key = self.key(impression.campaign_id, impression.viewer, impression.at, impression.seconds)
            added[key] += 1
            ends = window_start(impression.at, impression.seconds) + timedelta(seconds=impression.seconds)
            left[key] = min(left.get(key, impression.seconds), math.ceil((ends - impression.at).total_seconds()))
        if not added:
            return
        pipeline = self._redis.pipeline(transaction=False)
        for key, count in added.items():
            pipeline.incrby(key, count)
            pipeline.expire(key, left[key])
        with contextlib.suppress(RedisUnavailable):  # lost: serving may offer one more, billing refuses it
            await self.link.call(pipeline.execute)

    async def close(self) -> None:
        await self._redis.aclose()
