"""Database outages (``adnet.db.outage``): which failures are an outage rather than a fault, and one process's view
of them: logged once when it begins and once when it ends (with its duration), found over by a probe whether or
not requests come."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from pathlib import Path

import asyncpg
import pytest
from tortoise.exceptions import DBConnectionError, IntegrityError, OperationalError

from adnet.db.outage import DatabaseLink, is_outage
from adnet.db.writer_process import WriterProcessFailed
from tests.ports import free_port


def sqlite_error(path: Path, statement: str, *, mode: str = "rwc") -> sqlite3.Error:
    """What SQLite itself raises for ``statement`` on the file at ``path`` opened in ``mode``."""
    try:
        connection = sqlite3.connect(f"file:{path}?mode={mode}", uri=True)
        try:
            connection.execute(statement)
        finally:
            connection.close()
    except sqlite3.Error as error:
        return error
    raise AssertionError("no error")


def raised_from(error: BaseException, wrapper: type[Exception]) -> Exception:
    try:
        try:
            raise error
        except BaseException as inner:
            raise wrapper("wrapped") from inner
    except Exception as outer:
        return outer


async def test_the_drivers_outages_are_outages(tmp_path: Path):
    read_only = tmp_path / "ro.sqlite3"
    sqlite3.connect(read_only).close()
    cannot_open = sqlite_error(tmp_path / "missing" / "x.sqlite3", "SELECT 1")
    refused_by_a_read_only_file = sqlite_error(read_only, "CREATE TABLE t (x)", mode="ro")
    with pytest.raises(OSError) as refused:  # asyncpg's own connection attempt to a closed port
        await asyncpg.connect(host="127.0.0.1", port=free_port(), user="nobody", timeout=5)

    outages = [
        asyncpg.CannotConnectNowError("the database system is starting up"),
        asyncpg.AdminShutdownError("terminating connection due to administrator command"),
        asyncpg.ConnectionDoesNotExistError("connection was closed in the middle of operation"),
        asyncpg.TooManyConnectionsError("sorry, too many clients already"),
        asyncpg.DiskFullError("could not extend file"),
        asyncpg.ReadOnlySQLTransactionError("cannot execute INSERT in a read-only transaction"),
        asyncpg.InterfaceError("connection is closed"),
        DBConnectionError("cannot connect"),
        refused.value,
        cannot_open, refused_by_a_read_only_file,
        OperationalError(cannot_open),  # as adnet.db.sql and the writer process wrap it
        raised_from(cannot_open, OperationalError),
        raised_from(refused.value, RuntimeError),
        WriterProcessFailed("the SQLite writer process failed"),
    ]
    assert [is_outage(error) for error in outages] == [True] * len(outages)


def test_a_wrong_statement_or_another_fault_is_not_an_outage(tmp_path: Path):
    no_table = sqlite_error(tmp_path / "x.sqlite3", "SELECT * FROM nothing_here")
    faults = [
        no_table, OperationalError(no_table), IntegrityError("UNIQUE constraint failed"),
        asyncpg.UniqueViolationError("duplicate key"), asyncpg.UndefinedTableError("no such table"),
        asyncpg.QueryCanceledError("canceling statement due to statement timeout"),
        asyncpg.InterfaceError("cannot perform operation: another operation is in progress"),
        ConnectionRefusedError("an HTTP call, not the database's"), ValueError("a bug"),
    ]
    assert [is_outage(error) for error in faults] == [False] * len(faults)


class Database:
    """A database that answers or refuses at the test's will."""

    def __init__(self) -> None:
        self.up = True
        self.pings = 0

    async def ping(self) -> None:
        self.pings += 1
        if not self.up:
            raise asyncpg.CannotConnectNowError("the database system is starting up")


async def test_an_outage_is_logged_once_when_it_begins_and_once_when_it_ends(caplog):
    database, now = Database(), [1000.0]
    link = DatabaseLink(database.ping, now=lambda: now[0], probe_seconds=0.01)
    database.up = False
    with caplog.at_level(logging.INFO, logger="adnet.db.outage"):
        for _ in range(50):
            link.failed(asyncpg.CannotConnectNowError("the database system is starting up"))
        assert not link.reachable
        await asyncio.sleep(0.1)
        assert database.pings > 1 and not link.reachable  # probing, quietly
        now[0] += 61
        await asyncio.sleep(0.05)
        database.up = True
        now[0] += 4.5
        async with asyncio.timeout(5):
            await link.wait_until_reachable()
    await link.close()

    messages = [record.getMessage() for record in caplog.records]
    assert messages[0] == ("database unreachable error='CannotConnectNowError: the database system is starting "
                           "up'")
    assert messages[1].startswith("database still unreachable down_seconds=61 failures=50")
    assert messages[2] == "database reachable again down_seconds=65.5 failures=50"
    assert len(messages) == 3
    assert link.reachable


async def test_a_round_trip_reports_the_outage_it_meets_and_its_end():
    database = Database()
    link = DatabaseLink(database.ping, probe_seconds=3600)
    assert await link.ping() and link.reachable
    database.up = False
    assert not await link.ping() and not link.reachable
    database.up = True
    assert await link.ping() and link.reachable
    await link.wait_until_reachable()
    await link.close()


async def test_a_failure_that_is_not_an_outage_does_not_begin_one(caplog):
    async def broken() -> None:
        raise ValueError("a bug")

    link = DatabaseLink(broken)
    with caplog.at_level(logging.WARNING, logger="adnet.db.outage"):
        assert not await link.ping()
    assert link.reachable  # health says database_unreachable; nothing waits for a return
    said = [record.getMessage() for record in caplog.records]
    assert said == ["database round trip failed error='ValueError: a bug'"]
