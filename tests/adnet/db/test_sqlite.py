"""SQLite shared by several processes: a transaction that reads before it writes is not refused because another
process wrote in between (``adnet serve --workers 2`` answered such withdrawals 500 "database is locked")."""

from __future__ import annotations

import asyncio
import sqlite3

import aiosqlite
import pytest
from tortoise import Tortoise, connections
from tortoise.exceptions import OperationalError
from tortoise.transactions import in_transaction

from adnet.db import config as db
from adnet.db import sql
from adnet.db.sql import Program, Statement
from adnet.money.models import SignerNonce
from tests.conftest import migrated_sqlite


def write_from_another_process(path: str, signer: str) -> None:
    """What another worker does: its own connection, one committed insert."""
    other = sqlite3.connect(path, timeout=10, isolation_level=None)
    try:
        other.execute("INSERT INTO signer_nonce (signer, next_nonce) VALUES (?, 0)", (signer,))
    finally:
        other.close()


async def test_a_transaction_reading_first_writes_after_another_process_wrote(tmp_path):
    path = str(tmp_path / "shared.sqlite3")
    await db.open_database(migrated_sqlite(tmp_path / "shared.sqlite3"))
    try:
        async with in_transaction():
            assert await SignerNonce.filter(signer="0x" + "a" * 40).count() == 0
            other = asyncio.create_task(asyncio.to_thread(write_from_another_process, path, "0x" + "b" * 40))
            # A deferred transaction lets the other process commit now and then cannot write; an immediate one
            # holds the write lock, so the other process waits for this commit.
            await asyncio.wait({other}, timeout=1.0)
            await SignerNonce.create(signer="0x" + "a" * 40, next_nonce=1)
        await other
        signers = sorted(await SignerNonce.all().values_list("signer", flat=True))
    finally:
        await Tortoise.close_connections()

    assert signers == ["0x" + "a" * 40, "0x" + "b" * 40]


async def test_a_transaction_begins_in_one_trip_to_the_connections_thread(tmp_path, monkeypatch):
    await db.open_database(migrated_sqlite(tmp_path / "trips.sqlite3"))
    try:
        client = connections.get("default")
        await client.execute_query("SELECT 1")  # connected
        trips = []
        original = aiosqlite.Connection._execute

        async def counted(self, fn, *args, **kwargs):
            trips.append(getattr(fn, "__name__", repr(fn)))
            return await original(self, fn, *args, **kwargs)

        monkeypatch.setattr(aiosqlite.Connection, "_execute", counted)
        async with in_transaction():
            began = list(trips)
            in_transaction_now = client._connection.in_transaction
        monkeypatch.undo()
    finally:
        await Tortoise.close_connections()

    assert began == ["begin_immediate"] and in_transaction_now


def insert_signer() -> Program[int]:
    written = yield Statement("INSERT INTO signer_nonce (signer, next_nonce) VALUES (:signer, 0)",
                              {"signer": "0x" + "c" * 40})
    return written.count


async def test_a_transaction_of_its_own_waits_for_another_process_and_is_refused_after_the_busy_timeout(tmp_path):
    path = str(tmp_path / "busy.sqlite3")
    await db.open_database(migrated_sqlite(tmp_path / "busy.sqlite3") + "?busy_timeout=200")
    other = sqlite3.connect(path, isolation_level=None)
    try:
        other.execute("BEGIN IMMEDIATE")  # another worker holds the write lock past the busy timeout
        with pytest.raises(OperationalError, match="locked"):
            await sql.transaction(insert_signer)
        other.execute("ROLLBACK")
        assert await sql.transaction(insert_signer) == 1  # the connection is usable again
        assert await SignerNonce.all().count() == 1
    finally:
        other.close()
        await Tortoise.close_connections()


async def test_a_file_that_cannot_be_opened_leaves_the_connection_usable_once_it_can(tmp_path):
    path = tmp_path / "outage.sqlite3"
    await db.open_database(migrated_sqlite(path))
    try:
        client = connections.get("default")
        await client.close()
        client.filename = str(tmp_path / "gone" / "outage.sqlite3")  # its directory vanished: cannot be opened
        async with asyncio.timeout(10):  # Tortoise's own client kept its lock after a failure, and waited for ever
            for attempt in (sql.fetch("SELECT 1"), _in_a_transaction()):
                with pytest.raises(sqlite3.OperationalError, match="unable to open"):
                    await attempt
            client.filename = str(path)
            assert await sql.fetch("SELECT 1 AS one") == [{"one": 1}]
            assert await _in_a_transaction() == 0
    finally:
        await Tortoise.close_connections()


async def _in_a_transaction() -> int:
    async with in_transaction():
        return await SignerNonce.all().count()
