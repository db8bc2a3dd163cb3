"""SQLite shared by several processes: every transaction takes the write lock when it begins.

SQLite's default (deferred) transaction takes the write lock at its first write. A transaction that reads first
cannot take it after another process committed in between: SQLite answers "database is locked" at once, without
waiting (in WAL mode its snapshot is stale). With ``adnet serve --workers N`` on SQLite that turned concurrent
withdrawals, whose transaction reads the claimRef and the ledger accounts before writing, into 500s. ``BEGIN
IMMEDIATE`` waits for the lock instead (up to the busy timeout), so the transactions of different processes run one
after the other, which is what each worker's single connection already does within a process.

This module is a Tortoise engine (``adnet.db`` names it for ``sqlite://`` URLs): Tortoise's SQLite client with
that change, and one fix: Tortoise's client takes the connection's lock before it opens the connection (or begins a
transaction) and releases it only when the block it guards ends, so a file that cannot be opened, or a ``BEGIN``
refused, left the lock taken for ever and every later statement of the process waiting for it: one outage of the
file (``adnet.db.outage``) hung the worker after it was over. Here the lock is released when the opening fails.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from tortoise.backends.base.client import ConnectionWrapper, TransactionContext
from tortoise.backends.sqlite.client import SqliteClient, SqliteTransactionContext, SqliteTransactionWrapper
from tortoise.connection import get_connections
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


class ReleasingConnectionWrapper(ConnectionWrapper[Any]):
    """The connection under its lock, the lock given back when the connection cannot be opened."""

    async def __aenter__(self) -> Any:
        await self._lock.acquire()
        try:
            await self.ensure_connection()
        except BaseException:
            self._lock.release()
            raise
        return self.connection


class ReleasingTransactionContext(SqliteTransactionContext):
    """A transaction under the connection's lock, the lock given back when the connection cannot be opened or the
    transaction cannot begin."""

    async def __aenter__(self) -> Any:
        await self._trxlock.acquire()
        try:
            await self.ensure_connection()
            self.token = get_connections().set(self.connection_name, self.connection)
            try:
                await self.connection.begin()
            except BaseException:
                get_connections().reset(self.token)
                raise
        except BaseException:
            self._trxlock.release()
            raise
        return self.connection


class ImmediateSqliteClient(SqliteClient):
    """Tortoise's SQLite client whose transactions take the write lock when they begin, and whose lock a failure to
    open or begin gives back."""

    def acquire_connection(self) -> ConnectionWrapper[Any]:
        return ReleasingConnectionWrapper(self._lock, self)

    def _in_transaction(self) -> TransactionContext:
        return ReleasingTransactionContext(ImmediateTransactionWrapper(self), self._lock)


client_class = ImmediateSqliteClient
