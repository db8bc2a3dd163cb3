"""The raw-SQL facility: named parameters in either dialect's markers, and programs of statements that SQLite runs
in one trip to its connection's thread and PostgreSQL statement by statement, with the same results and the same
errors; and the private driver interfaces it relies on."""

from __future__ import annotations

import asyncio
import inspect

import aiosqlite
import pytest
from tortoise import connections
from tortoise.exceptions import IntegrityError
from tortoise.models import Model
from tortoise.transactions import in_transaction

from adnet.db import sql
from adnet.db.sql import Program, Statement
from adnet.money.models import SignerNonce
from tests.sql import recorded_statements, trips


def signers(names: list[str]) -> Program[tuple[int, list[str]]]:
    """Insert a signer_nonce row per name (a repeated name breaks the unique key and is skipped), then read them."""
    inserted = 0
    for name in names:
        try:
            result = yield Statement("INSERT INTO signer_nonce (signer, next_nonce) VALUES (:signer, 0)",
                                     {"signer": name})
        except IntegrityError:
            continue
        inserted += result.count
    rows = yield Statement("SELECT signer FROM signer_nonce ORDER BY signer")
    return inserted, [row["signer"] for row in rows.rows]


def dialect() -> str:
    return sql.dialect_of(connections.get("default"))


async def test_a_program_is_one_trip_on_sqlite_and_statement_by_statement_elsewhere(app):
    with trips() as taken, recorded_statements() as sent:
        async with in_transaction():
            result = await sql.run(signers(["0xa", "0xb", "0xc"]))
    assert result == (3, ["0xa", "0xb", "0xc"])
    program = [statement.split(" ", 1)[0] for statement in sent if "signer_nonce" in statement]
    assert program == ["INSERT", "INSERT", "INSERT", "SELECT"]  # logged in order, whichever way they went
    # SQLite: the transaction's beginning, the whole program and the commit; PostgreSQL has no such thread
    assert taken == (["begin_immediate", "_run_on_sqlite", "commit"] if dialect() == "sqlite" else [])


async def test_a_failing_statement_is_thrown_into_the_program_as_the_orms_error(app):
    # Outside a transaction each statement stands alone, so on PostgreSQL too the program can go on after it.
    result = await sql.run(signers(["0xa", "0xa", "0xb"]))
    assert result == (2, ["0xa", "0xb"])


async def test_an_error_the_program_raises_rolls_back_the_callers_transaction(app):
    def failing() -> Program[None]:
        yield from signers(["0xa"])
        raise ValueError("refused")

    with pytest.raises(ValueError, match="refused"):
        async with in_transaction():
            await sql.run(failing())
    assert await sql.run(signers([])) == (0, [])


def test_named_parameters_are_written_in_the_dialects_markers():
    statement = Statement("SELECT x FROM t WHERE a = :a AND b IN (:bs) AND c::text = :a", {"a": 1, "bs": [2, 3]})
    assert sql.compiled(statement, "postgres") == (
        "SELECT x FROM t WHERE a = $1 AND b IN ($2, $3) AND c::text = $4", [1, 2, 3, 1])
    assert sql.compiled(statement, "sqlite") == ("SELECT x FROM t WHERE a = ? AND b IN (?, ?) AND c::text = ?",
                                                 [1, 2, 3, 1])
    rows = Statement("INSERT INTO t (a, b) VALUES :rows ON CONFLICT DO NOTHING", {"rows": [(1, "x"), (2, "y")]})
    assert sql.compiled(rows, "postgres") == (
        "INSERT INTO t (a, b) VALUES ($1, $2), ($3, $4) ON CONFLICT DO NOTHING", [1, "x", 2, "y"])
    assert sql.compiled(Statement("SELECT '10:30' AS t"), "sqlite") == ("SELECT '10:30' AS t", [])


async def test_fetch_and_execute_run_on_the_callers_connection(app):
    async with in_transaction():
        assert await sql.execute("INSERT INTO signer_nonce (signer, next_nonce) VALUES (:signer, :next)",
                                 signer="0xa", next=4) == 1
        assert await sql.fetch("SELECT next_nonce FROM signer_nonce WHERE signer IN (:signers)",
                               signers=["0xa", "0xb"]) == [{"next_nonce": 4}]
    assert await sql.fetch("SELECT signer FROM signer_nonce") == [{"signer": "0xa"}]


async def test_a_transaction_of_its_own_is_one_trip_on_sqlite_and_commits(app):
    with trips() as taken:
        result = await sql.transaction(lambda: signers(["0xa", "0xb"]))
    assert result == (2, ["0xa", "0xb"])
    assert taken == (["transaction_on_sqlite"] if dialect() == "sqlite" else [])
    assert await sql.run(signers([])) == (0, ["0xa", "0xb"])


async def test_a_transaction_of_its_own_is_rolled_back_whole_when_the_program_raises(app):
    def failing() -> Program[None]:
        yield from signers(["0xa", "0xb"])
        raise ValueError("refused")

    with pytest.raises(ValueError, match="refused"):
        await sql.transaction(failing)
    assert await sql.run(signers([])) == (0, [])


def test_the_private_driver_interfaces_are_still_there():
    """aiosqlite's ``Connection._execute(fn, *args)`` runs ``fn`` on the connection's thread by queueing
    ``(future, function)`` on ``_tx``, and ``_conn`` is its sqlite3 connection; Tortoise's
    ``Model._init_from_db(**row)`` builds a model from a row. adnet.db.sql uses them for speed: if an upgrade
    changes them, this fails before anything else does."""
    execute = inspect.signature(aiosqlite.Connection._execute)
    assert list(execute.parameters)[:2] == ["self", "fn"], f"aiosqlite's _execute changed: {execute}"
    assert inspect.iscoroutinefunction(aiosqlite.Connection._execute), "aiosqlite's _execute is no longer async"
    assert "_conn" in inspect.getsource(aiosqlite.Connection.__init__), "aiosqlite's Connection has no _conn"
    assert "self._tx.put_nowait((future, function))" in inspect.getsource(aiosqlite.Connection._execute), (
        "aiosqlite no longer queues (future, function) on _tx")
    assert isinstance(inspect.getattr_static(Model, "_init_from_db"), classmethod), "Tortoise's _init_from_db changed"


async def test_a_row_read_by_hand_becomes_the_model_the_orm_would_load(app):
    await sql.execute("INSERT INTO signer_nonce (signer, next_nonce) VALUES (:signer, 7)", signer="0xa")
    row = (await sql.fetch("SELECT signer, next_nonce FROM signer_nonce"))[0]
    assert sql.loaded(SignerNonce, row) == await SignerNonce.get(signer="0xa")
    assert sql.loaded(SignerNonce, row).next_nonce == 7


async def test_a_transaction_of_its_own_waits_for_an_orm_transaction_and_never_runs_inside_it(app):
    """On SQLite the trip holds the ORM's lock of the connection only to be queued: one asked for while an ORM
    transaction is open (from another task) waits for it to commit, then sees its rows; a failing ORM transaction
    afterwards takes none of the trip's writes with it. On PostgreSQL each has its own connection and transaction."""
    asked = asyncio.Event()

    async def trip() -> tuple[int, list[str]]:
        await asked.wait()
        return await sql.transaction(lambda: signers(["0xb"]))

    queued = asyncio.ensure_future(trip())  # its context has no ORM transaction
    async with in_transaction():
        await sql.execute("INSERT INTO signer_nonce (signer, next_nonce) VALUES ('0xa', 0)")
        asked.set()
        await asyncio.sleep(0.05)
        assert queued.done() == (dialect() != "sqlite")
    assert await queued == ((1, ["0xa", "0xb"]) if dialect() == "sqlite" else (1, ["0xb"]))

    with pytest.raises(RuntimeError):
        async with in_transaction():
            await sql.execute("INSERT INTO signer_nonce (signer, next_nonce) VALUES ('0xc', 0)")
            raise RuntimeError("the ORM transaction fails")
    assert await sql.run(signers([])) == (0, ["0xa", "0xb"])
