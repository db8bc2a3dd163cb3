"""The one raw-SQL facility: statements with named parameters, for what the ORM cannot say or says too slowly.

It is used where the ORM has no words for the statement (the deduplicating upsert that returns what it wrote, the
version-checked ledger update, the nonce increment that returns the new value, the pick of a free quiz attempt)
and where a hot path cannot afford the ORM's cost (the tracking batch, the completion's reads and inserts). Every
other query goes through the ORM.

**Named parameters.** A statement names its values (``WHERE id = :site_id``) and ``compiled`` writes them in the
database's markers (``?`` on SQLite, ``$1`` on PostgreSQL). A list value expands: scalars into a comma-separated
list (``IN (:ids)``), tuples into rows (``VALUES :rows``).

**Programs.** On SQLite every statement is a trip to the connection's thread and back, and the way back goes
through the event loop, behind whatever HTTP work is queued there: under load a batch of a dozen statements spent
most of its time waiting between them, not in SQLite, while it held the database's only writer. So the hot writes
(a tracking batch, the ledger bookings it makes) are written as a program: a generator that yields each
``Statement`` and receives its ``Result``, and returns what the write returns. ``run`` hands the whole program to
SQLite's thread in one trip, or on PostgreSQL sends each statement in turn on the transaction's asyncpg connection.
A failing statement is thrown into the program as the ORM's ``IntegrityError`` or ``OperationalError`` on either
database (a PostgreSQL deadlock or serialization failure as ``OperationalError``, so a batch that lost one is
retried like any other lost race), and a program handles its errors once. Every statement is logged at DEBUG, as
the ORM logs its own. ``run`` runs a program inside the caller's transaction; ``transaction`` runs one as a
transaction of its own, which on SQLite is a single trip: the beginning (``BEGIN IMMEDIATE``), the program and the
commit, or the rollback when it raises. Such a trip holds the ORM's lock of the connection only while it is queued
for the connection's thread, not until it returns: the thread runs it whole, after what was queued before and
before what is queued after, so an ORM transaction can neither be inside it nor around it, and a second trip can
wait in the queue while the first runs (``GroupCommitter``'s ``max_in_flight``), instead of waiting for the event
loop to see the first one's answer. A program may not touch the event loop, the ORM or a context variable (on
SQLite it runs in another thread): whatever it needs comes in through its arguments.

**Private driver interfaces.** Four are used, here only, for speed: aiosqlite's ``Connection._execute``,
``Connection._tx`` and ``Connection._conn`` (to run a function on its thread in one trip, or queue it there) and
Tortoise's ``Model._init_from_db`` (to build a model from a row as the ORM does). ``tests/adnet/db/test_sql.py``
fails, naming the interface, when an upgrade of either library changes them.
"""

from __future__ import annotations

import asyncio
import logging
import re
import sqlite3
from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass, field
from functools import lru_cache, partial
from typing import Any, TypeVar

import asyncpg
from tortoise import connections
from tortoise.backends.base.client import BaseDBAsyncClient
from tortoise.exceptions import IntegrityError, OperationalError
from tortoise.models import Model
from tortoise.transactions import in_transaction

log = logging.getLogger(__name__)
T = TypeVar("T")
ModelT = TypeVar("ModelT", bound=Model)
# ``:name``, but not a PostgreSQL cast (``::numeric``) nor a colon inside a word or a time.
_PARAMETER = re.compile(r"(?<![:\w]):([A-Za-z_]\w*)")


@dataclass(frozen=True)
class Statement:
    """SQL with ``:name`` parameters, and their values."""

    sql: str
    params: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Result:
    """What a statement did: rows changed (or returned, for a read), and the rows as dicts."""

    count: int
    rows: list[dict[str, Any]]


Program = Generator[Statement, Result, T]


def compiled(statement: Statement, dialect: str) -> tuple[str, list[Any]]:
    """The statement in the dialect's positional markers, and its values in their order."""
    texts, names = _split(statement.sql)
    values: list[Any] = []
    written = [texts[0]]
    for name, text in zip(names, texts[1:], strict=True):
        value, first = statement.params[name], len(values) + 1
        if isinstance(value, list) and value and isinstance(value[0], tuple):  # rows
            width = len(value[0])
            for row in value:
                values.extend(row)
            written.append(", ".join(f"({_markers(dialect, start, width)})"
                                     for start in range(first, first + len(value) * width, width)))
        elif isinstance(value, list):
            values.extend(value)
            written.append(_markers(dialect, first, len(value)))
        else:
            values.append(value)
            written.append(_markers(dialect, first, 1))
        written.append(text)
    return "".join(written), values


def _markers(dialect: str, first: int, count: int) -> str:
    """``count`` comma-separated markers, numbered from ``first`` on PostgreSQL."""
    if dialect == "postgres":
        return ", ".join(f"${number}" for number in range(first, first + count))
    return ", ".join("?" * count)


@lru_cache(maxsize=1024)
def _split(sql: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``sql`` around its parameters: the texts between them, and their names in order."""
    pieces = _PARAMETER.split(sql)
    return tuple(pieces[0::2]), tuple(pieces[1::2])


def dialect_of(connection: BaseDBAsyncClient) -> str:
    return connection.capabilities.dialect


# The start of the UTC day or hour a timestamp falls in, as ISO 8601 text ``YYYY-MM-DDTHH:00:00``: the same text on
# both databases (SQLite's ``strftime`` reads the stored offset and answers in UTC; PostgreSQL's ``to_char`` of the
# moment at UTC), so a report groups by it and reads it back one way.
_BUCKET_FORMATS = {
    "sqlite": {"day": "strftime('%Y-%m-%dT00:00:00', {column})", "hour": "strftime('%Y-%m-%dT%H:00:00', {column})"},
    "postgres": {"day": "to_char({column} AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"00:00:00')",
                 "hour": "to_char({column} AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:00:00')"},
}


def bucket_start(column: str, granularity: str, dialect: str) -> str:
    """SQL for the start of the UTC ``granularity`` (``day`` or ``hour``) in which the timestamp ``column`` falls, as
    text ``YYYY-MM-DDTHH:00:00`` on SQLite and PostgreSQL alike (``column`` is a name the caller wrote, never
    input)."""
    return _BUCKET_FORMATS[dialect][granularity].format(column=column)


async def fetch(sql: str, **params: Any) -> list[dict[str, Any]]:
    """The rows a statement returns, as dicts, on the current connection (the caller's transaction, if any)."""
    return (await run(_alone(Statement(sql, params)))).rows


async def execute(sql: str, **params: Any) -> int:
    """Run a statement on the current connection; the number of rows it changed (a unique key it breaks raises
    the ORM's IntegrityError)."""
    return (await run(_alone(Statement(sql, params)))).count


def _alone(statement: Statement) -> Program[Result]:
    return (yield statement)


async def run(program: Program[T]) -> T:
    """Run ``program`` on the current connection (the caller's transaction, if any) and return its result."""
    connection = connections.get("default")
    dialect = dialect_of(connection)
    # The ORM's own way to a connection: the transaction's (waiting for its other statements) or a free one.
    async with connection.acquire_connection() as driver:
        if dialect == "sqlite":  # aiosqlite: its thread runs the whole program
            return await on_sqlite_thread(driver, _run_on_sqlite, program)
        try:  # asyncpg
            statement = next(program)
            while True:
                text, values = compiled(statement, dialect)
                log.debug("%s: %s", text, values)
                try:
                    result = await _run_on_postgres(driver, text, values)
                except asyncpg.IntegrityConstraintViolationError as exc:
                    statement = program.throw(IntegrityError(exc))
                except (asyncpg.SyntaxOrAccessError, asyncpg.DataError, asyncpg.TransactionRollbackError) as exc:
                    statement = program.throw(OperationalError(exc))
                else:
                    statement = program.send(result)
        except StopIteration as stop:
            return stop.value


async def transaction(make: Callable[[], Program[T]]) -> T:
    """Run the program ``make`` gives as a transaction of its own (not inside another) and return its result;
    whatever it raises rolls all of it back. A busy SQLite database (another process held the write lock past the
    busy timeout) raises ``OperationalError``, like a lost race on PostgreSQL."""
    client = connections.get("default")
    if dialect_of(client) != "sqlite":
        async with in_transaction():
            return await run(make())
    async with client.acquire_connection() as driver:  # the lock every SQLite transaction of this process takes
        answer = _queue_on_sqlite_thread(driver, transaction_on_sqlite, make())
    try:
        return await answer
    except sqlite3.OperationalError as exc:
        raise OperationalError(exc) from exc


async def on_sqlite_thread(driver: Any, function: Callable[..., T], *args: Any) -> T:
    """``function(connection, *args)`` on the sqlite3 connection's own thread, in one trip (aiosqlite's private
    ``_execute`` and ``_conn``)."""
    return await driver._execute(function, driver._conn, *args)


def _queue_on_sqlite_thread(driver: Any, function: Callable[..., T], *args: Any) -> asyncio.Future[T]:
    """Queue ``function(connection, *args)`` for the connection's thread, as aiosqlite's ``_execute`` does, and
    return the future of its answer without waiting for it (aiosqlite's private ``_tx`` queue)."""
    answer: asyncio.Future[T] = asyncio.get_running_loop().create_future()
    driver._tx.put_nowait((answer, partial(function, driver._conn, *args)))
    return answer


def begin_immediate(connection: sqlite3.Connection) -> None:
    """End what the driver began implicitly and take the write lock (on the connection's thread)."""
    connection.commit()
    connection.execute("BEGIN IMMEDIATE")


async def _run_on_postgres(connection: asyncpg.Connection, text: str, values: list[Any]) -> Result:
    if text.startswith("SELECT") or " RETURNING " in text:
        rows = await connection.fetch(text, *values)
        return Result(len(rows), [dict(row) for row in rows])
    status = await connection.execute(text, *values)  # e.g. "UPDATE 3", "INSERT 0 3"; "LOCK TABLE" counts none
    count = status.rsplit(" ", 1)[-1]
    return Result(int(count) if count.isdigit() else 0, [])


def transaction_on_sqlite(connection: sqlite3.Connection, program: Program[T]) -> T:
    """``program`` as a transaction of its own on ``connection``, in the calling thread: on the connection's thread
    (``transaction``) or in a writer process (``adnet.db.writer_process``)."""
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
            text, values = compiled(statement, "sqlite")
            log.debug("%s: %s", text, values)
            try:
                before = connection.total_changes
                cursor = connection.execute(text, values)
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


async def insert_row(model: type[ModelT], values: dict[str, Any]) -> ModelT:
    """Insert one row of ``model`` (``values`` names every column) with a plain statement on the current connection
    and return it as the ORM would have loaded it. For rows written on a hot path inside a transaction, where the
    ORM's insert costs several times the write itself. Values are converted as the ORM converts them; a unique key
    raises IntegrityError."""
    return (await insert_rows(model, [values]))[0]


async def insert_rows(model: type[ModelT], rows: list[dict[str, Any]]) -> list[ModelT]:
    """``insert_row`` for several rows (each naming the same columns, in the same order) in one statement; a unique
    key that any of them breaks raises IntegrityError and none is inserted."""
    if not rows:
        return []
    fields, columns = model._meta.fields_map, list(rows[0])
    values = [tuple(fields[name].to_db_value(row[name], model) for name in columns) for row in rows]
    await execute(f"INSERT INTO {model._meta.db_table} ({', '.join(columns)}) VALUES :rows", rows=values)  # noqa: S608
    return [loaded(model, row) for row in rows]


def loaded(model: type[ModelT], row: dict[str, Any]) -> ModelT:
    """A model instance from a row read (or written) with a plain statement, exactly as the ORM builds the rows it
    reads itself (Tortoise's private ``_init_from_db``)."""
    return model._init_from_db(**row)
