"""Programs of statements: one definition that SQLite runs in one trip to its connection's thread and PostgreSQL
statement by statement, with the same results and the same errors."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import aiosqlite
import pytest
from tortoise import connections
from tortoise.exceptions import IntegrityError
from tortoise.transactions import in_transaction

from adnet.db import sql as statements
from adnet.db.sql import Program, Statement
from tests.sql import recorded_statements


@contextmanager
def trips(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Every trip to a SQLite connection's thread while the block runs."""
    taken: list[str] = []
    original = aiosqlite.Connection._execute

    async def counted(self, fn, *args, **kwargs):
        taken.append(getattr(fn, "__name__", repr(fn)))
        return await original(self, fn, *args, **kwargs)

    monkeypatch.setattr(aiosqlite.Connection, "_execute", counted)
    try:
        yield taken
    finally:
        monkeypatch.undo()


def signers(dialect: str, names: list[str]) -> Program[tuple[int, list[str]]]:
    """Insert a signer_nonce row per name (a repeated name breaks the unique key and is skipped), then read them."""
    inserted = 0
    for name in names:
        try:
            result = yield Statement(f"INSERT INTO signer_nonce (signer, next_nonce) VALUES "
                                     f"({', '.join(statements.marks(dialect, 2))})", [name, 0])
        except IntegrityError:
            continue
        inserted += result.count
    rows = yield Statement("SELECT signer FROM signer_nonce ORDER BY signer", [])
    return inserted, [row["signer"] for row in rows.rows]


def dialect() -> str:
    return statements.dialect_of(connections.get("default"))


async def test_a_program_is_one_trip_on_sqlite_and_statement_by_statement_elsewhere(app, monkeypatch):
    with trips(monkeypatch) as taken, recorded_statements() as sent:
        async with in_transaction() as connection:
            result = await statements.run(connection, signers(dialect(), ["0xa", "0xb", "0xc"]))
    assert result == (3, ["0xa", "0xb", "0xc"])
    program = [statement.split(" ", 1)[0] for statement in sent if "signer_nonce" in statement]
    assert program == ["INSERT", "INSERT", "INSERT", "SELECT"]  # logged in order, whichever way they went
    # SQLite: the transaction's beginning, the whole program and the commit; PostgreSQL has no such thread
    assert taken == (["begin_immediate", "_run_on_sqlite", "commit"] if dialect() == "sqlite" else [])


async def test_a_failing_statement_is_thrown_into_the_program_as_the_orms_error(app):
    # Outside a transaction each statement stands alone, so on PostgreSQL too the program can go on after it.
    result = await statements.run(connections.get("default"), signers(dialect(), ["0xa", "0xa", "0xb"]))
    assert result == (2, ["0xa", "0xb"])


async def test_an_error_the_program_raises_rolls_back_the_callers_transaction(app):
    def failing(dialect: str) -> Program[None]:
        yield from signers(dialect, ["0xa"])
        raise ValueError("refused")

    with pytest.raises(ValueError, match="refused"):
        async with in_transaction() as connection:
            await statements.run(connection, failing(dialect()))
    assert await statements.run(connections.get("default"), signers(dialect(), [])) == (0, [])


def test_markers_follow_the_dialect():
    assert statements.marks("postgres", 3) == ["$1", "$2", "$3"]
    assert statements.marks("sqlite", 3) == ["?", "?", "?"]
    assert statements.value_rows("postgres", 2, 2) == "($1, $2), ($3, $4)"
    assert statements.value_rows("sqlite", 1, 3) == "(?, ?, ?)"


async def test_a_transaction_of_its_own_is_one_trip_on_sqlite_and_commits(app, monkeypatch):
    with trips(monkeypatch) as taken:
        result = await statements.transaction(lambda dialect: signers(dialect, ["0xa", "0xb"]))
    assert result == (2, ["0xa", "0xb"])
    assert taken == (["_transaction_on_sqlite"] if dialect() == "sqlite" else [])
    assert await statements.run(connections.get("default"), signers(dialect(), [])) == (0, ["0xa", "0xb"])


async def test_a_transaction_of_its_own_is_rolled_back_whole_when_the_program_raises(app):
    def failing(dialect: str) -> Program[None]:
        yield from signers(dialect, ["0xa", "0xb"])
        raise ValueError("refused")

    with pytest.raises(ValueError, match="refused"):
        await statements.transaction(failing)
    assert await statements.run(connections.get("default"), signers(dialect(), [])) == (0, [])
