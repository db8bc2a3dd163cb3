"""The tracking spool: where a worker keeps, on its host's disk, the events it acknowledged while the database could
not take them, until they are written there.

A 201 promises that the event is kept. While the database is unreachable (``adnet.db.outage``), tracking appends
each batch to the worker's spool instead, and answers only once the spool has it on disk (a SQLite file in WAL mode
with ``synchronous=FULL``: each append is one transaction, synced before it returns, and a crash leaves every
append whole or absent, never half-written). When the database answers again, the worker writes the spooled events
in the order they came, by the same batch code as any other (``adnet.delivery.batch.write_batch``, with
``replayed``): deduplication and billing are decided then, and each event is stored under the id its 201 carried,
once, even when a worker dies between writing a batch and removing it from the spool (the replay finds the ids in
the database and leaves those events alone).

Each worker has a file of its own, ``ADNET_DATA_DIR/spool/<pid>-<random>.sqlite3``, created at its first append,
and holds an exclusive lock (``flock``) on ``<file>.lock`` for its whole life: a file whose lock is free belongs to
a worker that ended (stopped, killed or crashed), and the next worker of the host that looks (every worker looks at
start and then every ``ORPHAN_SCAN_SECONDS``) adopts it, writes its events and deletes it. A worker that stops with
an empty spool deletes its file; one that stops with events left (the database still away) leaves them to the next.

The spool is bounded: an append that would take it past ``ADNET_SPOOL_MAX_EVENTS`` events, or while its oldest
event is older than ``ADNET_SPOOL_MAX_SECONDS``, is refused (``SpoolFull``) and the request answered 503, and the
host is not ready (``adnet.jobs.health``). Each spooled event is one JSON document (``encode``), so a worker of
another version can read what an older one left.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import logging
import os
import secrets
import sqlite3
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path
from typing import IO, Any

from adnet.core import metrics
from adnet.delivery.clients import Client
from adnet.delivery.commands import TrackEvent
from adnet.delivery.events import PendingEvent
from adnet.delivery.tokens import TokenClaims

log = logging.getLogger(__name__)

SPOOL_DIRECTORY = "spool"  # under ADNET_DATA_DIR
SUFFIX = ".sqlite3"
LOCK_SUFFIX = ".lock"
ORPHAN_SCAN_SECONDS = 10.0
PROBE_SECONDS = 1.0
FORMAT = 1
_SCHEMA = ("CREATE TABLE IF NOT EXISTS event (position INTEGER PRIMARY KEY AUTOINCREMENT, "
           "received_at REAL NOT NULL, body TEXT NOT NULL)")


class SpoolFull(Exception):
    """The spool holds as many events, or as old ones, as it may: it takes no more until it is written out."""


def encode(event: PendingEvent) -> str:
    """An event as the spool keeps it: one JSON document of everything the batch needs."""
    return json.dumps({
        "format": FORMAT, "eventId": event.event_id, "reported": event.reported.model_dump(mode="json"),
        "client": asdict(event.client), "receivedAt": event.received_at.isoformat(), "price": event.price,
        "reason": event.reason, "claims": None if event.claims is None else asdict(event.claims),
        "tokenRef": event.token_ref, "country": event.country, "device": event.device,
        "consentLimited": event.consent_limited,
    }, separators=(",", ":"))


def decode(text: str) -> PendingEvent:
    """The event ``encode`` wrote."""
    stored = json.loads(text)
    if stored.get("format") != FORMAT:
        raise ValueError(f"a spooled event of an unknown format: {stored.get('format')!r}")
    claims = stored["claims"]
    return PendingEvent(
        reported=TrackEvent.model_validate(stored["reported"]), client=Client(**stored["client"]),
        received_at=datetime.fromisoformat(stored["receivedAt"]), price=int(stored["price"]),
        reason=stored["reason"], claims=None if claims is None else TokenClaims(**claims),
        token_ref=stored["tokenRef"], country=stored["country"], device=stored["device"],
        consent_limited=stored.get("consentLimited", False), event_id=stored["eventId"])


@dataclass(frozen=True)
class SpooledBatch:
    """The oldest events of one spool file, taken to be written: removed from it only once they are."""

    file: SpoolFile
    positions: list[int]
    events: list[PendingEvent]


class SpoolFile:
    """One worker's spool file, and the lock that says its worker lives (held by whoever has this object)."""

    def __init__(self, path: Path, lock: IO[bytes], connection: sqlite3.Connection) -> None:
        self.path = path
        self._lock = lock
        self._connection = connection
        self.count, self.oldest = self._figures()

    @classmethod
    def create(cls, directory: Path) -> SpoolFile:
        """A new file of this worker's, locked before it exists (so no other worker can take it for an orphan)."""
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / f"{os.getpid()}-{secrets.token_hex(6)}{SUFFIX}"
        lock = open(_lock_path(path), "ab")  # held for the file's life: closed by close()
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        try:
            connection = _connect(path, create=True)
        except BaseException:
            _lock_path(path).unlink(missing_ok=True)
            lock.close()
            raise
        _sync_directory(directory)
        return cls(path, lock, connection)

    @classmethod
    def adopt(cls, path: Path) -> SpoolFile | None:
        """The file of a worker that ended, now this one's; None while its worker lives (its lock is held), or if
        it is gone."""
        try:
            lock = open(_lock_path(path), "ab")  # held for the file's life: closed by close()
        except FileNotFoundError:
            return None
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            lock.close()
            return None
        try:
            # Its worker may have deleted both between our open and our lock: then the lock is of a deleted name.
            if os.fstat(lock.fileno()).st_ino != os.stat(_lock_path(path)).st_ino or not path.exists():
                raise FileNotFoundError(path)
            connection = _connect(path, create=False)
        except (FileNotFoundError, sqlite3.OperationalError):
            lock.close()
            return None
        adopted = cls(path, lock, connection)
        log.info("tracking spool adopted path=%s events=%d", path, adopted.count)
        return adopted

    def append(self, rows: list[tuple[float, str]]) -> None:
        """Add (received at, event) rows in one transaction, synced to disk before it returns."""
        with self._connection:
            self._connection.executemany("INSERT INTO event (received_at, body) VALUES (?, ?)", rows)
        if self.count == 0:
            self.oldest = min(received for received, _ in rows)
        self.count += len(rows)

    def take(self, limit: int) -> SpooledBatch | None:
        """Its oldest ``limit`` events (none removed), or None when it is empty."""
        rows = self._connection.execute("SELECT position, body FROM event ORDER BY position LIMIT ?",
                                        (limit,)).fetchall()
        if not rows:
            return None
        return SpooledBatch(self, [position for position, _ in rows], [decode(body) for _, body in rows])

    def remove(self, positions: list[int]) -> None:
        """Remove events once they are written to the database."""
        with self._connection:
            self._connection.executemany("DELETE FROM event WHERE position = ?", [(p,) for p in positions])
        self.count, self.oldest = self._figures()

    def close(self) -> None:
        """Let the file go: deleted when empty, else kept, unlocked, for the next worker to adopt."""
        self._connection.close()
        if self.count == 0:
            for leftover in (self.path, *(self.path.with_name(self.path.name + end) for end in ("-wal", "-shm"))):
                leftover.unlink(missing_ok=True)
            _lock_path(self.path).unlink(missing_ok=True)
        self._lock.close()

    def _figures(self) -> tuple[int, float | None]:
        count, oldest = self._connection.execute("SELECT COUNT(*), MIN(received_at) FROM event").fetchone()
        return int(count), oldest


class Spool:
    """A worker's spool: its own file (made at its first append) and the files it adopted from workers that ended.

    Its files are touched in a thread, one operation at a time, so the event loop never waits for the disk.
    ``now`` is the tracking clock (events carry its times)."""

    def __init__(self, directory: Path, *, max_events: int, max_seconds: int, now: Callable[[], datetime]) -> None:
        self.directory = directory
        self.max_events = max_events
        self.max_seconds = max_seconds
        self._now = now
        self._own: SpoolFile | None = None
        self._adopted: list[SpoolFile] = []
        self._lock = asyncio.Lock()
        self._probed_at = -PROBE_SECONDS
        self._writable = True

    @property
    def depth(self) -> int:
        """Events held, in this worker's file and those it adopted."""
        return sum(file.count for file in self._files())

    @property
    def holds_own(self) -> bool:
        """Whether this worker's own file holds events: new events go behind them, so they are written in order."""
        return self._own is not None and self._own.count > 0

    @property
    def oldest_seconds(self) -> float:
        """How long the oldest event held has waited (0 when none is held)."""
        oldest = min((file.oldest for file in self._files() if file.oldest is not None), default=None)
        return 0.0 if oldest is None else max(0.0, self._now().timestamp() - oldest)

    @property
    def full(self) -> bool:
        """Whether an append would be refused now: at its size, or its oldest event at its age."""
        return self.depth >= self.max_events or self.oldest_seconds >= self.max_seconds

    def figures(self) -> dict[str, Any]:
        """What health shows of the spool."""
        return {"events": self.depth, "oldestSeconds": round(self.oldest_seconds, 1), "maxEvents": self.max_events,
                "maxSeconds": self.max_seconds}

    async def append(self, events: list[PendingEvent]) -> None:
        """Keep ``events`` on disk, synced; SpoolFull when the spool may not take them, OSError or sqlite3.Error
        when the disk refuses them (nothing of them is kept then)."""
        if self.depth + len(events) > self.max_events or self.oldest_seconds >= self.max_seconds:
            raise SpoolFull(f"the spool holds {self.depth} events, the oldest {self.oldest_seconds:.0f} s old")
        rows = [(event.received_at.timestamp(), encode(event)) for event in events]
        async with self._lock:
            try:
                await asyncio.to_thread(self._append, rows)
            finally:
                metrics.SPOOL_EVENTS.set(self.depth)

    async def take(self, limit: int) -> SpooledBatch | None:
        """The oldest events of an adopted file, or else of this worker's own, up to ``limit``."""
        async with self._lock:
            for file in self._files():
                batch = await asyncio.to_thread(file.take, limit)
                if batch is not None:
                    return batch
        return None

    async def remove(self, batch: SpooledBatch) -> None:
        """Remove a batch once it is written; an adopted file that is then empty is deleted."""
        async with self._lock:
            await asyncio.to_thread(batch.file.remove, batch.positions)
            if batch.file is not self._own and batch.file.count == 0:
                self._adopted.remove(batch.file)
                await asyncio.to_thread(batch.file.close)
            metrics.SPOOL_EVENTS.set(self.depth)

    async def adopt_orphans(self) -> None:
        """Take on the files of the host's workers that ended."""
        async with self._lock:
            await asyncio.to_thread(self._adopt_orphans)
            metrics.SPOOL_EVENTS.set(self.depth)

    async def writable(self) -> bool:
        """Whether the spool's directory takes a write synced to disk now (checked at most once a second): a full
        or read-only disk fails it."""
        if time.monotonic() - self._probed_at >= PROBE_SECONDS:
            self._probed_at = time.monotonic()
            self._writable = await asyncio.to_thread(self._probe)
        return self._writable

    async def close(self) -> None:
        """Let every file go (an empty one is deleted; one with events is left to the next worker)."""
        async with self._lock:
            for file in self._files():
                await asyncio.to_thread(file.close)
            if self._own is not None and self._own.count:
                log.warning("tracking spool left for the next worker path=%s events=%d", self._own.path,
                            self._own.count)
            self._own, self._adopted = None, []
            metrics.SPOOL_EVENTS.set(0)

    def _files(self) -> Iterator[SpoolFile]:
        yield from self._adopted
        if self._own is not None:
            yield self._own

    def _append(self, rows: list[tuple[float, str]]) -> None:
        if self._own is None:
            self._own = SpoolFile.create(self.directory)
        self._own.append(rows)

    def _adopt_orphans(self) -> None:
        held = {file.path for file in self._files()}
        for path in sorted(self.directory.glob(f"*{SUFFIX}")):
            if path not in held and (adopted := SpoolFile.adopt(path)) is not None:
                self._adopted.append(adopted)

    def _probe(self) -> bool:
        probe = self.directory / f".probe-{os.getpid()}"
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            descriptor = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            try:
                os.write(descriptor, b"adnet")
                os.fsync(descriptor)
            finally:
                os.close(descriptor)
            probe.unlink()
        except OSError as error:
            with contextlib.suppress(OSError):
                probe.unlink()
            log.debug("spool directory not writable error=%r", error)
            return False
        return True


def _lock_path(path: Path) -> Path:
    return path.with_name(path.name + LOCK_SUFFIX)


def _connect(path: Path, *, create: bool) -> sqlite3.Connection:
    """A connection to a spool file (``create``: made if absent), synced on every commit."""
    mode = "rwc" if create else "rw"
    connection = sqlite3.connect(f"file:{path}?mode={mode}", uri=True, check_same_thread=False,
                                 isolation_level=None)
    try:
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("PRAGMA synchronous=FULL")
        connection.execute(_SCHEMA)
    except BaseException:
        connection.close()
        raise
    connection.isolation_level = "DEFERRED"
    return connection


def _sync_directory(directory: Path) -> None:
    """Sync a directory, so a file just made in it survives a power cut."""
    descriptor = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
