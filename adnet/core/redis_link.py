"""What a process knows of the Redis of ``ADNET_REDIS_URL``, shared by everything that uses it: the rate limiter's
store, serving's frequency counts and the broadcast of changes.

Redis only ever makes adnet better shared (limits across hosts, frequency hints, changes heard at once); nothing is
lost without it. So while it does not answer, each user does without (``RedisUnavailable``): the rate limits fall
back to the database (those that guard accounts) or to the process's memory (the public per-address limit),
serving reads no frequency counts, and changes reach other processes at their next periodic refresh. The link:

- **says so once**, then at most once every ``REPORT_SECONDS`` while it lasts (with how many tries failed since),
  and once when Redis answers again, instead of a line per request;
- **rests** ``RETRY_SECONDS`` after a failure before a request tries Redis again, so a request does not pay a
  connection attempt each while Redis is down; the broadcast's subscriber keeps trying on its own and, when it
  gets through, ends the rest at once, so every user catches up as soon as Redis is back;
- **is read by health**: ``/healthz`` names ``redis_unreachable`` (``adnet.jobs.health``), a degraded reason that
  does not take the host out of rotation.

Clients made here (``client``) give up on a connection or an answer after ``TIMEOUT_SECONDS``, so a Redis that
hangs costs a request at most that, once per rest.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar
from urllib.parse import urlsplit

from redis.asyncio import Redis
from redis.exceptions import RedisError

log = logging.getLogger(__name__)

T = TypeVar("T")
# What a call to an unreachable, hung or failing Redis raises.
REDIS_ERRORS = (RedisError, OSError)
TIMEOUT_SECONDS = 1.0
RETRY_SECONDS = 1.0
REPORT_SECONDS = 60.0
FALLBACKS = ("rate limits in the database (accounts) and per process (public), serving without frequency counts, "
             "changes heard at the next refresh")


class RedisUnavailable(Exception):
    """Redis did not answer this call, or the link is resting after a failure: do without it."""


class RedisLink:
    """One process's view of its Redis: whether it answers, the log of its outages, and the clients that reach it.

    ``now`` is a monotonic clock in seconds (injected by tests)."""

    def __init__(self, url: str, *, now: Callable[[], float] = time.monotonic) -> None:
        self.url = url
        parts = urlsplit(url)
        # Where it is, for the log, without the password a URL may carry.
        self.where = parts.path if parts.scheme == "unix" else f"{parts.hostname}:{parts.port or 6379}{parts.path}"
        self._now = now
        self._down_since: float | None = None
        self._rest_until = 0.0
        self._next_report = 0.0
        self._failed_tries = 0

    @property
    def reachable(self) -> bool:
        """False from a failed call until a call succeeds."""
        return self._down_since is None

    def client(self, *, blocking: bool = False) -> Redis:
        """A client of this Redis. ``blocking`` for a connection that waits for messages (a subscriber): no time
        limit on an answer, only on connecting."""
        return Redis.from_url(self.url, socket_connect_timeout=TIMEOUT_SECONDS, socket_keepalive=True,
                              socket_timeout=None if blocking else TIMEOUT_SECONDS)

    async def call(self, operation: Callable[[], Awaitable[T]]) -> T:
        """``operation()``'s answer; RedisUnavailable, without calling it, while resting, or when it fails."""
        if not self.reachable and self._now() < self._rest_until:
            raise RedisUnavailable
        try:
            answer = await operation()
        except REDIS_ERRORS as error:
            self.failed(error)
            raise RedisUnavailable from error
        self.answered()
        return answer

    def failed(self, error: BaseException) -> None:
        """A call failed: rest, and say so if it is new or the last report is ``REPORT_SECONDS`` old."""
        now = self._now()
        self._rest_until = now + RETRY_SECONDS
        if self._down_since is None:
            self._down_since, self._next_report, self._failed_tries = now, now + REPORT_SECONDS, 0
            log.warning("redis unreachable where=%s error=%r doing_without=%r", self.where, _described(error),
                        FALLBACKS)
            return
        self._failed_tries += 1
        if now >= self._next_report:
            log.warning("redis still unreachable where=%s down_seconds=%.0f failed_tries=%d error=%r", self.where,
                        now - self._down_since, self._failed_tries, _described(error))
            self._next_report, self._failed_tries = now + REPORT_SECONDS, 0

    def answered(self) -> None:
        """A call succeeded: Redis is back if it was away."""
        if self._down_since is not None:
            log.info("redis reachable again where=%s down_seconds=%.0f", self.where, self._now() - self._down_since)
            self._down_since = None
            self._failed_tries = 0


def _described(error: BaseException) -> str:
    """An error's type and text (redis-py's exceptions stand for themselves as ``network:ConnectionError``)."""
    return f"{type(error).__name__}: {error}"
