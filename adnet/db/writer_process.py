"""SQLite transactions in a process of their own, for the tracking batch: its Python and SQLite's work run on
another core instead of taking turns with the worker's HTTP work at Python's lock.

On SQLite's thread inside the worker a batch could only run while the event loop's thread let go of the lock: it
waited for it before each statement, and while it ran the loop waited in turn, so every tracked event cost the worker
its HTTP work plus the whole batch's work, one after the other. With the batch's statements answered at once instead
(an experiment, not a mode of adnet), the same worker tracked about 4,200 events a second rather than 2,500.

A ``WriterProcess`` is a child process (``python -m adnet.db.writer_process DATABASE_URL``) with a connection of its
own to the worker's SQLite file, opened with the pragmas the ORM's connection has (``adnet.db.sqlite``: WAL, the
URL's options, foreign keys). It runs one transaction at a time as ``adnet.db.sql.transaction`` runs one on
SQLite's thread (``BEGIN IMMEDIATE``, the program, the commit, or the rollback when it raises): the worker sends
the function that makes the program, pickled (a module-level function and its arguments, usually a ``partial``),
and gets back the program's result or what it raised. Its transactions exclude every other writer exactly as the
worker's own do, so the exact rules of a batch (deduplication, caps, budgets) are unchanged.

Frames on the child's standard input and output are a 4-byte length and a pickle; the child writes nothing else
there, and ends when its input closes: when the worker lets it go, exits or dies (a terminal's interrupt is the
worker's to handle). A child that ends, or breaks off an answer, fails the transaction it had with
``WriterProcessFailed`` (whether that one committed is unknown: a batch's events are deduplicated, so a retried one
is not counted twice) and is started again for the next; a transaction whose caller is cancelled ends its child
at once, since its answer would otherwise be read as the next one's.

A worker keeps its writers for its life: one that an app stops using waits, idle, for the next app of the process
on the same database (``take``/``give_back``), so starting an app costs no new process after the first.
"""

from __future__ import annotations

import asyncio
import atexit
import os
import pickle
import signal
import sqlite3
import struct
import subprocess
import sys
from collections.abc import Callable
from typing import Any, BinaryIO, TypeVar

from tortoise.backends.base.config_generator import expand_db_url
from tortoise.exceptions import OperationalError

from adnet.db.outage import DatabaseUnreachable
from adnet.db.sql import Program, transaction_on_sqlite
from adnet.db.sqlite import ImmediateSqliteClient

T = TypeVar("T")
_LENGTH = struct.Struct(">I")
_idle: dict[str, list[WriterProcess]] = {}


class WriterProcessFailed(OperationalError, DatabaseUnreachable):
    """The writer process ended, or broke off its answer; whether its transaction committed is unknown. Should it
    go on failing, the database is as good as unreachable (``adnet.db.outage``)."""


class WriterProcess:
    """One child process that runs SQLite transactions for this worker, one at a time (the caller runs one at a
    time: the tracking writer has one batch in flight); started at its first transaction."""

    def __init__(self, database_url: str) -> None:
        self.database_url = database_url
        self._process: subprocess.Popen[bytes] | None = None

    @classmethod
    def take(cls, database_url: str) -> WriterProcess:
        """An idle writer of this process for ``database_url``, or a new one."""
        idle = _idle.get(database_url)
        return idle.pop() if idle else cls(database_url)

    def give_back(self) -> None:
        """Keep the writer, idle, for the next app of this process (closed when the process exits)."""
        _idle.setdefault(self.database_url, []).append(self)

    async def transaction(self, make: Callable[[], Program[T]]) -> T:
        """Run the program ``make`` gives as a transaction of its own in the child and return its result, or raise
        what it raised there."""
        frame = pickle.dumps(make, protocol=pickle.HIGHEST_PROTOCOL)
        process = self._running()
        try:
            write_frame(process.stdin, frame)  # type: ignore[arg-type]  # a pipe: the child reads at once
            outcome, value = pickle.loads(await self._answer(process))  # noqa: S301 - from our own child
        except (OSError, EOFError, pickle.UnpicklingError) as exc:
            self._abandon()
            raise WriterProcessFailed(f"the SQLite writer process failed: {exc!r}") from exc
        except BaseException:  # cancelled while the child works: its answer would be read as the next one's
            self._abandon()
            raise
        if outcome == "raised":
            raise value
        return value

    def close(self) -> None:
        """Let an idle child go: it ends once its input closes."""
        process, self._process = self._process, None
        if process is not None:
            _close_pipes(process)
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    def _abandon(self) -> None:
        """End the child now, whatever it is doing (SQLite rolls back a transaction it had not committed)."""
        process, self._process = self._process, None
        if process is not None:
            process.kill()
            process.wait()
            _close_pipes(process)

    def _running(self) -> subprocess.Popen[bytes]:
        if self._process is None or self._process.poll() is not None:
            self._process = subprocess.Popen(  # noqa: S603 - this interpreter, this module, the configured URL
                [sys.executable, "-m", __name__, self.database_url], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                env={**os.environ, "PYTHONPATH": os.pathsep.join(path for path in sys.path if path)})
            os.set_blocking(self._process.stdout.fileno(), False)  # type: ignore[union-attr]
        return self._process

    async def _answer(self, process: subprocess.Popen[bytes]) -> bytes:
        """The child's next frame, read as it arrives without blocking the event loop."""
        loop = asyncio.get_running_loop()
        descriptor = process.stdout.fileno()  # type: ignore[union-attr]
        received = bytearray()
        answer: asyncio.Future[bytes] = loop.create_future()

        def readable() -> None:
            try:
                chunk = os.read(descriptor, 1 << 20)
            except BlockingIOError:
                return
            except OSError as exc:
                answer.set_exception(exc)
                return
            if not chunk:
                answer.set_exception(EOFError("the writer process ended"))
                return
            received.extend(chunk)
            if len(received) >= _LENGTH.size:
                (length,) = _LENGTH.unpack_from(received)
                if len(received) >= _LENGTH.size + length:
                    answer.set_result(bytes(received[_LENGTH.size:]))

        loop.add_reader(descriptor, readable)
        try:
            return await answer
        finally:
            loop.remove_reader(descriptor)


def _close_pipes(process: subprocess.Popen[bytes]) -> None:
    process.stdin.close()  # type: ignore[union-attr]
    process.stdout.close()  # type: ignore[union-attr]


def write_frame(sink: BinaryIO, frame: bytes) -> None:
    sink.write(_LENGTH.pack(len(frame)) + frame)
    sink.flush()


def read_frame(source: BinaryIO) -> bytes | None:
    """The next frame on ``source``, or None at its end."""
    header = source.read(_LENGTH.size)
    if len(header) < _LENGTH.size:
        return None
    (length,) = _LENGTH.unpack(header)
    frame = source.read(length)
    return frame if len(frame) == length else None


def connect(database_url: str) -> sqlite3.Connection:
    """A connection to the SQLite file of ``database_url`` with the pragmas the ORM's connection has."""
    credentials = expand_db_url(database_url)["credentials"]
    client = ImmediateSqliteClient(connection_name="writer", **credentials)
    connection = sqlite3.connect(client.filename, isolation_level=None, check_same_thread=False)
    for pragma, value in client.pragmas.items():
        connection.execute(f"PRAGMA {pragma}={value}")
    return connection


def serve(database_url: str, source: BinaryIO, sink: BinaryIO) -> None:
    """The child: run each transaction ``source`` brings, answer each on ``sink``, end with ``source``. A file it
    cannot open (an outage, ``adnet.db.outage``) is the first transaction's answer, and the child ends: the next
    transaction starts another."""
    try:
        connection = connect(database_url)
    except sqlite3.Error as exc:
        if read_frame(source) is not None:
            write_frame(sink, pickle.dumps(("raised", OperationalError(exc)), protocol=pickle.HIGHEST_PROTOCOL))
        return
    while (frame := read_frame(source)) is not None:
        make = pickle.loads(frame)  # noqa: S301 - from the worker that started this process, on a private pipe
        try:
            answer: tuple[str, Any] = ("returned", transaction_on_sqlite(connection, make()))
        except sqlite3.OperationalError as exc:  # busy past the timeout, as ``adnet.db.sql.transaction`` says it
            answer = ("raised", OperationalError(exc))
        except Exception as exc:  # whatever the program raised is the caller's to handle
            answer = ("raised", exc)
        try:
            reply = pickle.dumps(answer, protocol=pickle.HIGHEST_PROTOCOL)
        except (pickle.PicklingError, TypeError, AttributeError) as exc:
            reply = pickle.dumps(("raised", OperationalError(f"{answer[1]!r} (not transferable: {exc})")))
        try:
            write_frame(sink, reply)
        except BrokenPipeError:  # the worker is gone; what committed is kept, deduplicated should it come again
            break
    connection.close()


@atexit.register
def _close_idle() -> None:
    for writers in _idle.values():
        for writer in writers:
            writer.close()


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a terminal's ^C is the worker's to handle; this ends with it
    sink, sys.stdout = sys.stdout.buffer, sys.stderr  # the frames alone go to standard output
    serve(sys.argv[1], sys.stdin.buffer, sink)
