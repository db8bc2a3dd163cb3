"""What the database is sent, for tests that count statements and trips to SQLite's thread."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from contextlib import contextmanager

import aiosqlite
from tortoise import connections

# The ORM logs every statement it sends; adnet.db.sql logs every statement of the programs it runs.
LOGGERS = ("tortoise.db_client", "adnet.db.sql")
# What the ``fill-counts`` job writes from memory: fill counters, request hours and decision samples. It runs by
# itself every few seconds, also in tests, and may fall inside a block of serves.
FLUSHED_TABLES = ("site_daily_stat", "request_hour", "decision_sample")
_FLUSH = re.compile(rf'^INSERT INTO "?({"|".join(FLUSHED_TABLES)})\b')


@contextmanager
def recorded_statements() -> Iterator[list[str]]:
    """Every SQL statement sent while the block runs (with its parameters), in order."""
    sent: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            sent.append(record.getMessage())

    loggers = [logging.getLogger(name) for name in LOGGERS]
    handler, levels = Collect(), [logger.level for logger in loggers]
    for logger in loggers:
        logger.addHandler(handler)
        logger.setLevel(logging.DEBUG)
    try:
        yield sent
    finally:
        for logger, level in zip(loggers, levels, strict=True):
            logger.removeHandler(handler)
            logger.setLevel(level)


def without_flushes(statements: list[str]) -> list[str]:
    """The statements of ``statements`` that are not the ``fill-counts`` job's periodic flush."""
    return [statement for statement in statements if not _FLUSH.match(statement)]


class _RecordedQueue:
    """A SQLite connection's queue to its thread, noting the name of each function put on it."""

    def __init__(self, queue, taken: list[str]) -> None:
        self.queue, self.taken = queue, taken

    def put_nowait(self, item) -> None:
        _, function = item
        self.taken.append(function.func.__name__)
        self.queue.put_nowait(item)


@contextmanager
def trips() -> Iterator[list[str]]:
    """Every trip to the SQLite connection's thread while the block runs (none on PostgreSQL)."""
    taken: list[str] = []
    driver = connections.get("default")._connection
    if not isinstance(driver, aiosqlite.Connection):
        yield taken
        return
    queue = driver._tx
    driver._tx = _RecordedQueue(queue, taken)
    try:
        yield taken
    finally:
        driver._tx = queue
