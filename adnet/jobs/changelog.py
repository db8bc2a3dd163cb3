"""The change log: how serving processes without Redis hear each other's changes, and how an ``adnet`` command
tells the running servers what it changed.

Each serving process of a deployment without ``ADNET_REDIS_URL`` has a ``ChangeLog``, the listener its requests
and jobs announce to (``adnet.core.changes``). It tells the process's own serving index at once, and its job
(``changes``, every ``POLL_SECONDS`` and as soon as something is announced) writes what was announced since its
last run as one ``announced_change`` row, then reads the rows the other processes wrote since and tells the index
their ids: a change made through one worker is served by the others within about ``POLL_SECONDS`` and an index
refresh. A row names ids only (what they name is read from the database), and one process's announcements made
together are one row. The rows are deleted after ``KEEP_SECONDS``; a row a process never read (it was stopped,
or its database unreachable, that long) is covered by its periodic whole rebuild (``REBUILD_SECONDS``).

Rows are read by their increasing id. On PostgreSQL a row may commit after one with a higher id, so each read
looks ``LOOKBACK_ROWS`` ids back and skips the rows it has seen; SQLite commits in id order.

``announced`` wraps an ``adnet`` command that changes what is served (``adnet operators approve`` …): it collects
what the command announces and, when the command ends, publishes it through Redis (``Broadcast.tell``) when the
deployment has one, or writes it to the change log.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import secrets
import time
from collections.abc import AsyncIterator
from datetime import datetime, timedelta

from adnet.config import Settings
from adnet.core import changes
from adnet.core.clock import Clock
from adnet.delivery.index import REBUILD_SECONDS
from adnet.jobs.models import AnnouncedChange

log = logging.getLogger(__name__)

POLL_SECONDS = 1.0
KEEP_SECONDS = 600.0
PRUNE_SECONDS = 60.0
LOOKBACK_ROWS = 64


class ChangeLog:
    """This process's side of the change log: ``announce`` is its listener, ``exchange`` its job."""

    def __init__(self, listener: changes.Listener, clock: Clock) -> None:
        self.listener = listener
        self.clock = clock
        self.origin = secrets.token_hex(8)
        self.due = asyncio.Event()
        self._changed: set[str] = set()
        self._cursor = 0
        self._seen: set[int] = set()
        self._pruned_at = time.monotonic()

    def announce(self, changed: frozenset[str] | None) -> None:
        """A change made in this process: its index hears it now, the other processes at the next ``exchange``."""
        self.listener(changed)
        if changed is not None:
            self._changed |= changed
            self.due.set()

    async def start(self) -> None:
        """Take the rows written so far as read: the index this process loads next already has what they name."""
        await self._read(tell=False)

    async def stop(self) -> None:
        """Write what was announced since the last ``exchange``; a failure is logged (the other processes then see
        it at their next whole rebuild)."""
        try:
            await self._write()
        except Exception:
            log.warning("changes not written at stop origin=%s", self.origin, exc_info=True)

    async def exchange(self) -> None:
        """The job: write this process's announcements since the last run as one row, tell the listener what the
        other processes announced since the last read, and now and then delete the rows past ``KEEP_SECONDS``."""
        await self._write()
        await self._read(tell=True)
        if time.monotonic() - self._pruned_at >= PRUNE_SECONDS:
            self._pruned_at = time.monotonic()
            await prune(self.clock.now() - timedelta(seconds=KEEP_SECONDS))

    async def _write(self) -> None:
        changed, self._changed = self._changed, set()
        if not changed:
            return
        try:
            await write(self.origin, changed, self.clock)
        except BaseException:
            self._changed |= changed  # written at the next turn
            raise

    async def _read(self, *, tell: bool) -> None:
        floor = self._cursor - LOOKBACK_ROWS
        rows = await AnnouncedChange.filter(id__gt=floor).order_by("id").values_list("id", "origin", "changed")
        heard: set[str] = set()
        understood = True
        for row_id, origin, text in rows:
            if row_id in self._seen:
                continue
            self._seen.add(row_id)
            self._cursor = max(self._cursor, row_id)
            if origin == self.origin:
                continue
            try:
                heard |= {str(item) for item in json.loads(text)}
            except (ValueError, TypeError):
                log.warning("announced change not understood id=%s", row_id)
                understood = False
        self._seen = {row_id for row_id in self._seen if row_id > self._cursor - LOOKBACK_ROWS}
        if tell and not understood:
            self.listener(None)
        elif tell and heard:
            self.listener(frozenset(heard))


async def write(origin: str, changed: set[str] | frozenset[str], clock: Clock) -> None:
    """Add one row announcing ``changed`` from ``origin``."""
    await AnnouncedChange.create(origin=origin, changed=json.dumps(sorted(changed)), created_at=clock.now())


async def prune(before: datetime) -> int:
    """Delete the rows written before ``before``; how many."""
    return await AnnouncedChange.filter(created_at__lt=before).delete()


@contextlib.asynccontextmanager
async def announced(settings: Settings) -> AsyncIterator[set[str]]:
    """Collect what the block announces and, when it ends (also by an error: what it committed stays), tell the
    running servers: through Redis when ``settings`` names one, else through the change log (the database must be
    open). Yields the set of ids collected. When they cannot be told (Redis unreachable), a warning says so: the
    change is made, and every server serves it at its next whole rebuild, within ``REBUILD_SECONDS``."""
    collected: set[str] = set()
    with changes.listening(lambda changed: collected.update(changed or ())):
        try:
            yield collected
        finally:
            if collected:
                try:
                    await tell_servers(settings, frozenset(collected))
                except Exception:
                    log.warning("changes not told to the servers, served within %.0f s ids=%s", REBUILD_SECONDS,
                                ",".join(sorted(collected)), exc_info=True)


async def tell_servers(settings: Settings, changed: frozenset[str]) -> None:
    """Announce ``changed`` to every serving process of the deployment, from a process that serves nothing."""
    if settings.redis_url:
        await changes.Broadcast.tell(settings.redis_url, changed)
    else:
        await write(secrets.token_hex(8), changed, Clock())
    log.info("changes told to the servers ids=%s redis=%s", ",".join(sorted(changed)), bool(settings.redis_url))
