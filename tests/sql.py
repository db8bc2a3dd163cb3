"""What the database is sent, for tests that count statements and trips to SQLite's thread.

The scheduler's jobs (``adnet.jobs.scheduler``) run by themselves every few seconds, also in tests: flushing fill
counts, rebuilding the serving index. What they send is not recorded, so a block of serves counts its own statements
only, however long it lasts. A statement sent from a task is the jobs' when the task is one of theirs; a statement
that SQLite's thread runs (the programs of ``adnet.db.sql``) is recorded when the block itself put its trip on the
thread's queue, not a job, nor anyone before the block began.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from typing import Any

import aiosqlite
from tortoise import connections

from adnet.jobs.scheduler import TASK_PREFIX

# The ORM logs every statement it sends; adnet.db.sql logs every statement of the programs it runs.
LOGGERS = ("tortoise.db_client", "adnet.db.sql")
_thread_trip = threading.local()  # on SQLite's thread: ``recorded`` while it runs a trip a recording block put there


def _recorded_here() -> bool:
    """Whether what runs now is recorded: anything but a job in a task, and on SQLite's thread a recorded trip."""
    try:
        task = asyncio.current_task()
    except RuntimeError:  # no event loop: SQLite's thread
        return getattr(_thread_trip, "recorded", False)
    return task is None or not task.get_name().startswith(TASK_PREFIX)


def _run_recorded(function: Callable[[], Any]) -> Any:
    _thread_trip.recorded = True
    try:
        return function()
    finally:
        _thread_trip.recorded = False


class _RecordedQueue:
    """A SQLite connection's queue to its thread: notes the name of each function put on it from outside the jobs,
    for every block listening, and marks that trip as recorded."""

    def __init__(self, queue: Any) -> None:
        self.queue = queue
        self.listeners: list[list[str]] = []

    def put_nowait(self, item: tuple[Any, Any]) -> None:
        future, function = item
        if _recorded_here():
            for taken in self.listeners:
                taken.append(function.func.__name__)
            item = (future, partial(_run_recorded, function))
        self.queue.put_nowait(item)


@contextmanager
def trips() -> Iterator[list[str]]:
    """Every trip to the SQLite connection's thread while the block runs (none on PostgreSQL), but the jobs'."""
    taken: list[str] = []
    driver: Any = connections.get("default")._connection
    if not isinstance(driver, aiosqlite.Connection):
        yield taken
        return
    installed = not isinstance(driver._tx, _RecordedQueue)
    if installed:
        driver._tx = _RecordedQueue(driver._tx)
    recorded = driver._tx
    recorded.listeners.append(taken)
    try:
        yield taken
    finally:
        recorded.listeners = [listener for listener in recorded.listeners if listener is not taken]
        if installed:
            driver._tx = recorded.queue


@contextmanager
def recorded_statements() -> Iterator[list[str]]:
    """Every SQL statement sent while the block runs (with its parameters), in order, but the jobs'."""
    sent: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if _recorded_here():
                sent.append(record.getMessage())

    loggers = [logging.getLogger(name) for name in LOGGERS]
    handler, levels = Collect(), [logger.level for logger in loggers]
    for logger in loggers:
        logger.addHandler(handler)
        logger.setLevel(logging.DEBUG)
    try:
        with trips():  # on SQLite: which trips to its thread, where adnet.db.sql logs statements, are recorded
            yield sent
    finally:
        for logger, level in zip(loggers, levels, strict=True):
            logger.removeHandler(handler)
            logger.setLevel(level)
