"""SQLite transactions in a writer process (``adnet.db.writer_process``): a program runs there as a transaction of
its own, against the worker's SQLite file with the ORM's pragmas, and answers with its result or what it raised;
a writer that dies is started again, and one that is let go ends."""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import time
from datetime import UTC, datetime
from decimal import Decimal
from functools import partial

import pytest
from tortoise.exceptions import IntegrityError, OperationalError

from adnet.db.sql import Program, Statement
from adnet.db.writer_process import WriterProcess, WriterProcessFailed
from adnet.money import ledger


@pytest.fixture
def database(tmp_path):
    """A SQLite file with one table of named amounts (as adnet stores them: text)."""
    path = tmp_path / "writer.sqlite3"
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE item (name VARCHAR(40) PRIMARY KEY, amount VARCHAR(40), at VARCHAR(40))")
    return path


@pytest.fixture
def writer(database):
    process = WriterProcess(f"sqlite://{database}?synchronous=FULL")
    yield process
    process.close()


def rows(database) -> list[tuple[str, str]]:
    with sqlite3.connect(database) as connection:
        return connection.execute("SELECT name, amount FROM item ORDER BY name").fetchall()


def insert(names: list[str], amount: int) -> Program[dict[str, object]]:
    """Insert ``names`` one statement each, then read back what this transaction sees, and the pragmas it has."""
    for name in names:
        yield Statement("INSERT INTO item (name, amount, at) VALUES (:name, :amount, :at)",
                        {"name": name, "amount": Decimal(amount), "at": datetime(2026, 11, 25, 12, tzinfo=UTC)})
    seen = yield Statement("SELECT name, amount, at FROM item ORDER BY name")
    journal = yield Statement("PRAGMA journal_mode")
    synchronous = yield Statement("PRAGMA synchronous")
    keys = yield Statement("PRAGMA foreign_keys")
    return {"rows": seen.rows, "journal": journal.rows[0]["journal_mode"],
            "synchronous": synchronous.rows[0]["synchronous"], "foreign_keys": keys.rows[0]["foreign_keys"]}


def overdraw() -> Program[None]:
    yield Statement("INSERT INTO item (name, amount) VALUES ('kept?', '1')")
    raise ledger.InsufficientFunds(ledger.campaign("cmp_1"), 5, -7)


def unpicklable() -> Program[None]:
    yield Statement("SELECT 1")
    raise RuntimeError(lambda: "a lambda cannot be pickled")


def slow() -> Program[None]:
    yield Statement("INSERT INTO item (name, amount) VALUES ('slow', '1')")
    time.sleep(30)


async def test_a_program_runs_as_one_transaction_in_the_writer_process(writer, database):
    answer = await writer.transaction(partial(insert, ["a", "b"], 10**30))
    assert answer["rows"] == [{"name": "a", "amount": str(10**30), "at": "2026-11-25 12:00:00+00:00"},
                              {"name": "b", "amount": str(10**30), "at": "2026-11-25 12:00:00+00:00"}]
    # The ORM's pragmas (adnet.db.sqlite) and the URL's own (synchronous=FULL is 2).
    assert (answer["journal"], answer["synchronous"], answer["foreign_keys"]) == ("wal", 2, 1)
    assert rows(database) == [("a", str(10**30)), ("b", str(10**30))]  # committed: another connection sees them
    assert writer._process is not None and writer._process.pid != os.getpid()


async def test_what_a_program_raises_comes_back_and_rolls_it_back(writer, database):
    await writer.transaction(partial(insert, ["a"], 1))
    with pytest.raises(IntegrityError):
        await writer.transaction(partial(insert, ["b", "a"], 2))
    with pytest.raises(ledger.InsufficientFunds) as raised:
        await writer.transaction(overdraw)
    assert (raised.value.account, raised.value.balance, raised.value.amount) == (ledger.campaign("cmp_1"), 5, -7)
    with pytest.raises(OperationalError, match="not transferable"):
        await writer.transaction(unpicklable)
    assert rows(database) == [("a", "1")]
    assert (await writer.transaction(partial(insert, ["c"], 3)))["rows"][-1]["name"] == "c"  # the same child goes on


async def test_a_busy_database_is_an_operational_error(writer, database):
    await writer.transaction(partial(insert, ["a"], 1))
    holder = sqlite3.connect(database, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        started = time.monotonic()
        with pytest.raises(OperationalError, match="locked"):
            await writer.transaction(partial(insert, ["b"], 1))
        assert time.monotonic() - started >= 4  # the busy timeout the ORM's connection has (5 s)
    finally:
        holder.rollback()
        holder.close()
    assert rows(database) == [("a", "1")]


async def test_a_writer_that_died_between_transactions_is_started_again(writer, database):
    await writer.transaction(partial(insert, ["a"], 1))
    first = writer._process
    os.kill(first.pid, signal.SIGKILL)
    first.wait()
    await writer.transaction(partial(insert, ["b"], 1))
    assert writer._process.pid != first.pid
    assert rows(database) == [("a", "1"), ("b", "1")]


async def test_a_writer_that_dies_mid_transaction_fails_it_and_is_started_again(writer, database):
    await writer.transaction(partial(insert, ["a"], 1))
    running = asyncio.create_task(writer.transaction(slow))
    await asyncio.sleep(0.5)
    os.kill(writer._process.pid, signal.SIGKILL)
    with pytest.raises(WriterProcessFailed):
        await running
    assert rows(database) == [("a", "1")]  # the killed transaction never committed
    await writer.transaction(partial(insert, ["b"], 1))
    assert rows(database) == [("a", "1"), ("b", "1")]


async def test_a_cancelled_transaction_ends_its_child(writer, database):
    """Its answer would otherwise be read as the next transaction's; what it had not committed is rolled back."""
    running = asyncio.create_task(writer.transaction(slow))
    await asyncio.sleep(0.5)
    child = writer._process
    running.cancel()
    with pytest.raises(asyncio.CancelledError):
        await running
    assert writer._process is None
    assert child.returncode == -signal.SIGKILL
    assert (await writer.transaction(partial(insert, ["b"], 1)))["rows"] == [
        {"name": "b", "amount": "1", "at": "2026-11-25 12:00:00+00:00"}]


async def test_an_idle_writer_serves_the_next_app_and_ends_with_its_input(database):
    url = f"sqlite://{database}"
    first = WriterProcess.take(url)
    await first.transaction(partial(insert, ["a"], 1))
    child = first._process
    first.give_back()
    again = WriterProcess.take(url)
    assert again is first
    assert WriterProcess.take(url) is not first  # none idle now: a new one
    again.close()
    assert child.wait(timeout=10) == 0
