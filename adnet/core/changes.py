"""Announcements that what can be served has changed, from the code that changes it to whoever serves.

Approving a campaign, funding it, editing a creative or a task, verifying a site: the domain code that does it
calls ``announce`` with the ids of what it changed (sites, campaigns, creatives, tasks). A serving process
(``adnet.services``) has its serving index listen in the context of every request and job it runs (``listen``), so
the index brings those entries up to date at once there; code that runs with no one listening (a CLI command, a
unit test) announces to no one unless it listens itself (``listening``: an ``adnet operators`` command collects
what it changed and tells the serving processes when it ends). The listener lives in a context variable, not in a
process-wide list, so each running app hears its own changes only. A listener must be quick and must not fail: it
only notes that work is due.

Other processes hear a change through ``Broadcast`` when ``ADNET_REDIS_URL`` names a Redis (publish/subscribe), at
once; without one, through the database's change log (``adnet.jobs.changelog``), which each serving process reads
every second; while a configured Redis does not answer (``adnet.core.redis_link``), at their next periodic refresh.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import secrets
from collections.abc import Callable, Iterator
from contextvars import ContextVar

from redis.asyncio.client import PubSub

from adnet.core.redis_link import REDIS_ERRORS, RETRY_SECONDS, RedisLink

log = logging.getLogger(__name__)

# Hears the ids of what changed, or None when anything may have changed (after announcements were missed).
Listener = Callable[[frozenset[str] | None], None]

_listener: ContextVar[Listener | None] = ContextVar("adnet_changes_listener", default=None)


def listen(listener: Listener) -> None:
    """Have ``listener`` hear the announcements of the current context and of the tasks it starts from now on."""
    _listener.set(listener)


@contextlib.contextmanager
def listening(listener: Listener) -> Iterator[None]:
    """Have ``listener`` hear the announcements made inside the block, then the listener heard before again."""
    token = _listener.set(listener)
    try:
        yield
    finally:
        _listener.reset(token)


def announce(changed: str, *more: str) -> None:
    """Tell the current context's listener, if any, that what these ids name changed."""
    listener = _listener.get()
    if listener is not None:
        listener(frozenset((changed, *more)))


class Broadcast:
    """The announcements of every process on one Redis: ``announce`` tells this process's ``listener`` and publishes
    the change; every other process's ``Broadcast`` hears it and tells its own listener.

    A message carries the publishing process's origin (a process skips its own) and the ids announced since its
    last message: what they name is read from the database, so announcements made at once collapse into one
    message, and a lost one costs only the wait for the next periodic rebuild. After Redis was unreachable, a
    process tells its listener that anything may have changed, for what it may have missed. The channel is named
    after the Redis database number, so deployments that share a Redis server on different databases do not hear
    each other.

    A process starts whether Redis answers or not: the subscriber tries again every ``RETRY_SECONDS`` until it
    gets through, telling the process's ``link`` each time (its subscription is how a process learns first that
    Redis is back), and the publisher keeps what it could not send for the next try.
    """

    def __init__(self, redis_url: str, listener: Listener, link: RedisLink | None = None) -> None:
        self.listener = listener
        self.origin = secrets.token_hex(8)
        self.link = link or RedisLink(redis_url)
        self._redis = self.link.client(blocking=True)  # the subscriber's, which waits for messages
        self._publisher = self.link.client()
        self.channel = f"adnet:changes:{self._redis.connection_pool.connection_kwargs.get('db', 0)}"
        self._due = asyncio.Event()
        self._changed: set[str] = set()
        self._tasks: list[asyncio.Task[None]] = []

    def announce(self, changed: frozenset[str] | None) -> None:
        """A change made in this process (the listener a serving process gives ``listen``)."""
        self.listener(changed)
        if changed is not None:
            self._changed |= changed
            self._due.set()

    async def start(self) -> None:
        """Subscribe (if Redis answers now), then publish and receive in the background until ``stop``."""
        pubsub = await self._subscribed()
        self._tasks = [asyncio.create_task(self._publish(), name="changes-publish"),
                       asyncio.create_task(self._receive(pubsub), name="changes-receive")]

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks = []
        await self._redis.aclose()
        await self._publisher.aclose()

    @classmethod
    async def tell(cls, redis_url: str, changed: frozenset[str]) -> None:
        """Publish ``changed`` once to every serving process on this Redis, from a process that serves nothing (an
        ``adnet`` command). Raises RedisError or OSError when Redis cannot be reached."""
        broadcast = cls(redis_url, lambda _changed: None)
        try:
            await broadcast._publisher.publish(broadcast.channel, broadcast._message(changed))
        finally:
            await broadcast._redis.aclose()
            await broadcast._publisher.aclose()

    def _message(self, changed: set[str] | frozenset[str]) -> str:
        return json.dumps({"origin": self.origin, "changed": sorted(changed)})

    async def _publish(self) -> None:
        while True:
            await self._due.wait()
            self._due.clear()
            changed, self._changed = self._changed, set()
            try:
                await self._publisher.publish(self.channel, self._message(changed))
            except REDIS_ERRORS as error:
                self.link.failed(error)
                self._changed |= changed
                self._due.set()
                await asyncio.sleep(RETRY_SECONDS)

    async def _subscribed(self) -> PubSub | None:
        """A subscription to the channel, or None when Redis does not answer."""
        pubsub = self._redis.pubsub(ignore_subscribe_messages=True)
        try:
            await pubsub.subscribe(self.channel)
        except REDIS_ERRORS as error:
            self.link.failed(error)
            await pubsub.aclose()
            return None
        self.link.answered()
        return pubsub

    async def _receive(self, pubsub: PubSub | None) -> None:
        while True:
            if pubsub is None:
                await asyncio.sleep(RETRY_SECONDS)
                pubsub = await self._subscribed()
                if pubsub is None:
                    continue
                self.listener(None)  # what was announced while no one here listened
            async with contextlib.aclosing(pubsub):
                try:
                    async for message in pubsub.listen():
                        if message["type"] == "message":
                            self._heard(message["data"])
                except REDIS_ERRORS as error:
                    self.link.failed(error)
            pubsub = None

    def _heard(self, data: bytes) -> None:
        try:
            message = json.loads(data)
            origin, changed = message["origin"], frozenset(str(item) for item in message["changed"])
        except (ValueError, KeyError, TypeError):
            log.warning("changes message not understood channel=%s", self.channel)
            self.listener(None)
            return
        if origin != self.origin:
            self.listener(changed)
