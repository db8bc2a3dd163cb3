"""SQLite shared by several processes: every transaction takes the write lock when it begins.

SQLite's default (deferred) transaction takes the write lock at its first write. A transaction that reads first
cannot take it after another process committed in between: SQLite answers "database is locked" at once, without
waiting (in WAL mode its snapshot is stale). With ``adnet serve --workers N`` on SQLite that turned concurrent
withdrawals, whose transaction reads the claimRef and the ledger accounts before writing, into 500s. ``BEGIN
IMMEDIATE`` waits for the lock instead (up to the busy timeout), so the transactions of different processes run one
after the other, which is what each worker's single connection already does within a process.

This module is a Tortoise engine (``adnet.db`` names it for ``sqlite://`` URLs): Tortoise's SQLite client with
that one change.
"""

from __future__ import annotations

import sqlite3

from tortoise.backends.base.client import TransactionContext
from tortoise.backends.sqlite.client import SqliteClient, SqliteTransactionContext, SqliteTransactionWrapper
from tortoise.exceptions import TransactionManagementError

from adnet.db.sql import begin_immediate, on_sqlite_thread


class ImmediateTransactionWrapper(SqliteTransactionWrapper):
    """A transaction of the connection that begins with ``BEGIN IMMEDIATE``; savepoints nest as before.

    Both steps of the beginning run in one trip to the connection's thread (``adnet.db.sql.on_sqlite_thread``):
    every trip waits for the event loop to take its answer, which under load costs more than the statements
    themselves."""

    async def begin(self) -> None:
        try:
            await on_sqlite_thread(self._connection, begin_immediate)
        except sqlite3.OperationalError as exc:
            raise TransactionManagementError(exc) from exc


class ImmediateSqliteClient(SqliteClient):
    """Tortoise's SQLite client whose transactions take the write lock when they begin."""

    def _in_transaction(self) -> TransactionContext:
        return SqliteTransactionContext(ImmediateTransactionWrapper(self), self._lock)


client_class = ImmediateSqliteClient
