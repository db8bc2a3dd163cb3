"""Writes as programs of statements: one definition, run in one trip to SQLite's connection thread or statement by
statement on any other database.

On SQLite every statement is a trip to the connection's thread and back, and the way back goes through the event
loop, behind whatever HTTP work is queued there: under load a batch of a dozen statements spent most of its time
waiting between them, not in SQLite, while it held the database's only writer. So the hot writes (a tracking
batch, the ledger bookings it makes) are written as a program: a generator that yields each ``Statement`` and
receives its ``Result``, and returns what the write returns. ``run`` hands the whole program to SQLite's thread in
one trip, or on PostgreSQL sends each statement in turn on the transaction's asyncpg connection. A failing
statement is thrown into the program as the ORM's ``IntegrityError`` or ``OperationalError`` on either database
(a PostgreSQL deadlock or serialization failure as ``OperationalError``, so a batch that lost one is retried like
any other lost race), and a program handles its errors once. Every statement is logged at DEBUG, as the ORM logs
its own.

``run`` runs a program inside the caller's transaction; ``transaction`` runs one as a transaction of its own, which
on SQLite is a single trip: the beginning (``BEGIN IMMEDIATE``), the program and the commit, or the rollback when
it raises. A writer that commits many times a second (a tracking batch) waits for one answer instead of three, and
holds the database's write lock only while SQLite works. A program may not touch the event loop, the ORM or a
context variable (on SQLite it runs in another thread): whatever it needs comes in through its arguments, dialect
included.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import Any, TypeVar

import asyncpg
from tortoise import connections
from tortoise.backends.base.client import BaseDBAsyncClient
from tortoise.exceptions import IntegrityError, OperationalError
from tortoise.models import Model
from tortoise.transactions import in_transaction

from adnet.db.sqlite import begin_immediate

log = logging.getLogger(__name__)
T = TypeVar("T")
ModelT = TypeVar("ModelT", bound=Model)


@dataclass(frozen=True)
class Statement:
    sql: str
    params: list[Any]


@dataclass(frozen=True)
class Result:
    """What a statement did: rows changed (or returned, for a read), and the rows as dicts."""

    count: int
    rows: list[dict[str, Any]]


Program = Generator[Statement, Result, T]


def marks(dialect: str, count: int) -> list[str]:
    """Parameter markers in the dialect: ``$1..$n`` on PostgreSQL, ``?`` on SQLite."""
    if dialect == "postgres":
        return [f"${number}" for number in range(1, count + 1)]
    return ["?"] * count


def value_rows(dialect: str, count: int, width: int) -> str:
    """The VALUES of an insert of ``count`` rows of ``width`` columns: ``(?, ?), (?, ?)`` on SQLite, ``($1, $2),
    ($3, $4)`` on PostgreSQL."""
    markers = marks(dialect, count * width)
    return ", ".join(f"({', '.join(markers[start:start + width])})" for start in range(0, len(markers), width))


def dialect_of(connection: BaseDBAsyncClient) -> str:
    return connection.capabilities.dialect


async def run(connection: BaseDBAsyncClient, program: Program[T]) -> T:
    """Run ``program`` on ``connection`` (the caller's transaction) and return its result."""
    # The ORM's own way to a connection: the transaction's (waiting for its other statements) or a free one.
    async with connection.acquire_connection() as driver:
        if dialect_of(connection) == "sqlite":  # aiosqlite: its thread runs the whole program
            return await driver._execute(_run_on_sqlite, driver._conn, program)
        try:  # asyncpg
            statement = next(program)
            while True:
                log.debug("%s: %s", statement.sql, statement.params)
                try:
                    result = await _run_on_postgres(driver, statement)
                except asyncpg.IntegrityConstraintViolationError as exc:
                    statement = program.throw(IntegrityError(exc))
                except (asyncpg.SyntaxOrAccessError, asyncpg.DataError, asyncpg.TransactionRollbackError) as exc:
                    statement = program.throw(OperationalError(exc))
                else:
                    statement = program.send(result)
        except StopIteration as stop:
            return stop.value


async def transaction(make: Callable[[str], Program[T]]) -> T:
    """Run the program ``make`` gives for the database's dialect as a transaction of its own (not inside another)
    and return its result; whatever it raises rolls all of it back. A busy SQLite database (another process held
    the write lock past the busy timeout) raises ``OperationalError``, like a lost race on PostgreSQL."""
    client = connections.get("default")
    dialect = dialect_of(client)
    if dialect != "sqlite":
        async with in_transaction() as connection:
            return await run(connection, make(dialect))
    async with client.acquire_connection() as driver:  # the lock every SQLite transaction of this process takes
        try:
            return await driver._execute(_transaction_on_sqlite, driver._conn, make(dialect))
        except sqlite3.OperationalError as exc:
            raise OperationalError(exc) from exc


async def _run_on_postgres(connection: asyncpg.Connection, statement: Statement) -> Result:
    if statement.sql.startswith("SELECT") or " RETURNING " in statement.sql:
        rows = await connection.fetch(statement.sql, *statement.params)
        return Result(len(rows), [dict(row) for row in rows])
    status = await connection.execute(statement.sql, *statement.params)  # e.g. "UPDATE 3", "INSERT 0 3"
    return Result(int(status.rsplit(" ", 1)[-1]), [])


def _transaction_on_sqlite(connection: sqlite3.Connection, program: Program[T]) -> T:
    begin_immediate(connection)
    try:
        result = _run_on_sqlite(connection, program)
        connection.commit()
    except BaseException:
        connection.rollback()
        raise
    return result


def _run_on_sqlite(connection: sqlite3.Connection, program: Program[T]) -> T:
    try:
        statement = next(program)
        while True:
            log.debug("%s: %s", statement.sql, statement.params)
            try:
                before = connection.total_changes
                cursor = connection.execute(statement.sql, statement.params)
                rows = cursor.fetchall()
                names = [column[0] for column in cursor.description or ()]
            except sqlite3.IntegrityError as exc:
                statement = program.throw(IntegrityError(exc))
            except sqlite3.OperationalError as exc:
                statement = program.throw(OperationalError(exc))
            else:
                result = Result((connection.total_changes - before) or len(rows),
                                [dict(zip(names, row, strict=True)) for row in rows])
                statement = program.send(result)
    except StopIteration as stop:
        return stop.value


def placeholders(connection: BaseDBAsyncClient, count: int) -> list[str]:
    """Parameter markers for a raw statement in the connection's dialect: ``$1..$n`` on PostgreSQL, ``?`` on
    SQLite."""
    return marks(dialect_of(connection), count)


async def insert_row(connection: BaseDBAsyncClient, model: type[ModelT], values: dict[str, Any]) -> ModelT:
    """Insert one row of ``model`` (``values`` names every column) with a plain statement and return it as the ORM
    would have loaded it. For rows written on a hot path inside a transaction, where the ORM's insert costs several
    times the write itself. Values are converted as the ORM converts them; a unique key raises IntegrityError."""
    return (await insert_rows(connection, model, [values]))[0]


async def insert_rows(connection: BaseDBAsyncClient, model: type[ModelT], rows: list[dict[str, Any]]) -> list[ModelT]:
    """``insert_row`` for several rows (each naming the same columns, in the same order) in one statement; a unique
    key that any of them breaks raises IntegrityError and none is inserted."""
    if not rows:
        return []
    fields, columns = model._meta.fields_map, list(rows[0])
    tuples = value_rows(dialect_of(connection), len(rows), len(columns))
    sql = f"INSERT INTO {model._meta.db_table} ({', '.join(columns)}) VALUES {tuples}"  # noqa: S608
    await connection.execute_query(sql, [fields[name].to_db_value(row[name], model) for row in rows
                                         for name in columns])
    return [loaded(model, row) for row in rows]


def loaded(model: type[ModelT], row: dict[str, Any]) -> ModelT:
    """A model instance from a row read (or written) with a plain statement, exactly as the ORM builds the rows it
    reads itself (Tortoise's ``_init_from_db``)."""
    return model._init_from_db(**row)
