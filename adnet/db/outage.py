"""Database outages: telling an outage from a fault, and one process's view of whether its database answers.

A PostgreSQL restart, a failover, a network cut, a SQLite file on a full disk: for their duration every statement
fails, whatever it is. Such a failure is not a fault of the request that met it, so it is not a 500 with a
traceback: ``is_outage`` recognises it (by the driver's exception, wherever the ORM or adnet wrapped it), the web
layer answers ``503 database_unavailable`` with ``Retry-After`` (``unavailable``), and tracking keeps its events in
the host's spool instead (``adnet.delivery.spool``). The failed statement's transaction is rolled back by the
database (a connection that drops takes its open transaction with it), so nothing is half-written.

A ``DatabaseLink`` is what one process knows of it, shared by everything that meets an outage (requests, the
tracking writer, the jobs, health):

- it **says so once** when an outage begins (``database unreachable``), at most once every ``REPORT_SECONDS`` while
  it lasts, and once when it ends, with its duration and how many requests and jobs failed on it (``database
  reachable again``), instead of a traceback per request;
- it **probes** the database every ``PROBE_SECONDS`` while it is away, so the end is seen within that time whether
  or not requests arrive, and tells whoever waits for it (the spool's drain);
- it is read by readiness and health (``adnet.jobs.health``): ``database_unreachable``.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import time
import traceback
from collections.abc import Awaitable, Callable, Iterator

import asyncpg
from tortoise.exceptions import DBConnectionError

from adnet.core.errors import Unavailable

log = logging.getLogger(__name__)

PROBE_SECONDS = 0.5
PROBE_TIMEOUT_SECONDS = 2.0
REPORT_SECONDS = 60.0
RETRY_AFTER_SECONDS = 5
# The ORM could not connect; the PostgreSQL server refused or lost the connection, is starting or stopping, is out
# of disk, memory or
# connections (class 53), or is a read-only standby (after a failover).
_OUTAGES = (
    DBConnectionError, asyncpg.PostgresConnectionError, asyncpg.CannotConnectNowError, asyncpg.AdminShutdownError,
    asyncpg.CrashShutdownError, asyncpg.InsufficientResourcesError, asyncpg.ReadOnlySQLTransactionError,
)
# SQLite's primary result codes that say the file cannot be written now, not that the statement is wrong: busy past
# the timeout, disk full, I/O error, cannot open, read-only (a remounted disk).
_SQLITE_OUTAGES = frozenset({"SQLITE_BUSY", "SQLITE_LOCKED", "SQLITE_FULL", "SQLITE_IOERR", "SQLITE_CANTOPEN",
                             "SQLITE_READONLY"})
# Where a connection error (refused, reset, timed out) comes from when it is the database's.
_DRIVER_MODULES = ("asyncpg", "aiosqlite", "tortoise.backends", "adnet.db")


class DatabaseUnreachable(Exception):
    """The database cannot be reached (raised by adnet's own code where it knows, such as the SQLite writer
    process that ended)."""


def unavailable(what: str = "The database cannot be reached") -> Unavailable:
    """The refusal of a request that needs the database during an outage: 503 with ``Retry-After``."""
    return Unavailable("database_unavailable", f"{what}; nothing was changed, retry later.",
                       retry_after=RETRY_AFTER_SECONDS)


def is_outage(error: BaseException) -> bool:
    """Whether ``error`` says the database cannot be reached or written now (an outage), rather than that a
    statement was wrong: looked for in the error, what it wraps (the ORM's exceptions carry the driver's as their
    argument) and what it was raised from."""
    for cause in _causes(error):
        if isinstance(cause, (DatabaseUnreachable, *_OUTAGES)):
            return True
        if isinstance(cause, asyncpg.InterfaceError) and "closed" in str(cause):  # "connection is closed"
            return True
        if isinstance(cause, sqlite3.OperationalError):
            name = getattr(cause, "sqlite_errorname", "")
            if "_".join(name.split("_")[:2]) in _SQLITE_OUTAGES:
                return True
        if isinstance(cause, OSError) and _raised_by_driver(cause):  # refused, reset, timed out connecting
            return True
    return False


def _causes(error: BaseException) -> Iterator[BaseException]:
    """``error`` and every exception it wraps or was raised from or during, each once."""
    seen: set[int] = set()
    waiting = [error]
    while waiting:
        cause = waiting.pop()
        if id(cause) in seen:
            continue
        seen.add(id(cause))
        yield cause
        waiting += [inner for inner in (cause.__cause__, cause.__context__, *cause.args)
                    if isinstance(inner, BaseException)]


def _raised_by_driver(error: BaseException) -> bool:
    return any(frame.f_globals.get("__name__", "").startswith(_DRIVER_MODULES)
               for frame, _ in traceback.walk_tb(error.__traceback__))


class DatabaseLink:
    """One process's view of its database: whether it answers, the log of its outages, and who waits for its return.

    ``ping`` makes one round trip; ``now`` is a monotonic clock in seconds (both injected by tests)."""

    def __init__(self, ping: Callable[[], Awaitable[None]], *, now: Callable[[], float] = time.monotonic,
                 probe_seconds: float = PROBE_SECONDS) -> None:
        self._ping = ping
        self._now = now
        self._probe_seconds = probe_seconds
        self._down_since: float | None = None
        self._next_report = 0.0
        self._failures = 0
        self._back: asyncio.Event | None = None
        self._probe: asyncio.Task[None] | None = None

    @property
    def reachable(self) -> bool:
        """False from a failure that ``is_outage`` recognises until a round trip answers."""
        return self._down_since is None

    @property
    def down_seconds(self) -> float:
        return 0.0 if self._down_since is None else self._now() - self._down_since

    def failed(self, error: BaseException) -> None:
        """A request or a job met an outage: count it, and begin the outage if it is new."""
        self._down(error)
        self._failures += 1

    def _down(self, error: BaseException) -> None:
        """Say so if the outage is new, and probe until the database answers."""
        if self._down_since is not None:
            return
        self._down_since = self._now()
        self._next_report, self._failures = self._down_since + REPORT_SECONDS, 0
        self._back_event().clear()
        log.warning("database unreachable error=%r", _described(error))
        if self._probe is None or self._probe.done():
            self._probe = asyncio.get_running_loop().create_task(self._probe_until_back(), name="database-probe")

    def answered(self) -> None:
        """A round trip succeeded: the outage, if one was on, is over."""
        if self._down_since is None:
            return
        log.info("database reachable again down_seconds=%.1f failures=%d", self.down_seconds, self._failures)
        self._down_since = None
        self._back_event().set()

    async def wait_until_reachable(self) -> None:
        """Return at once when the database answers, or when it is back."""
        if self._down_since is not None:
            await self._back_event().wait()

    async def ping(self) -> bool:
        """One round trip now (within ``PROBE_TIMEOUT_SECONDS``): whether it answered. An outage is reported here
        like any other; any other failure is logged once per call, since health must always answer."""
        try:
            async with asyncio.timeout(PROBE_TIMEOUT_SECONDS):
                await self._ping()
        except Exception as error:
            if is_outage(error) or isinstance(error, TimeoutError):
                self._down(error)
            else:
                log.warning("database round trip failed error=%r", _described(error))
            return False
        self.answered()
        return True

    async def close(self) -> None:
        """Stop probing (the process is stopping)."""
        if self._probe is not None:
            self._probe.cancel()
            await asyncio.gather(self._probe, return_exceptions=True)
            self._probe = None

    def _back_event(self) -> asyncio.Event:
        if self._back is None:
            self._back = asyncio.Event()
            self._back.set()
        return self._back

    async def _probe_until_back(self) -> None:
        while self._down_since is not None:
            await asyncio.sleep(self._probe_seconds)
            if await self.ping():
                return
            if self._down_since is not None and self._now() >= self._next_report:
                log.warning("database still unreachable down_seconds=%.0f failures=%d", self.down_seconds,
                            self._failures)
                self._next_report = self._now() + REPORT_SECONDS


def _described(error: BaseException) -> str:
    """An error's type and text, for the log (never a response)."""
    return f"{type(error).__name__}: {error}"
