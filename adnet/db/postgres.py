"""PostgreSQL: Tortoise's asyncpg client with transactions that leave nothing behind when the database goes away.

A Tortoise transaction marks itself as its task's current connection (a context variable) before it sends
``BEGIN``, and undoes the mark only in its exit, after giving its connection back to the pool. Two failures of an
outage skipped that undoing: a ``BEGIN`` refused (the block's exit never runs, so the connection also stayed
taken), and a connection the pool could not reset on its return (the return raises before the mark is undone).
Either way the task kept a transaction whose connection the pool had taken back: every later transaction of that
task became a savepoint of it and failed with "connection has been released back to the pool", long after the
database was back. The task that group-commits tracking events lives as long as the process, so one restart of
PostgreSQL at the wrong moment failed every event of the worker until it was restarted (``adnet.db.outage``).
Here both failures give the connection back and undo the mark.

A stopping server also ends the connections that sit idle in the pool: the next ``BEGIN`` on one fails in the
driver without any answer from the server (asyncpg's ``InternalClientError``, "cannot switch to state …; another
operation is in progress", or a reset connection), which no rule can tell from a fault. A statement as plain as
``BEGIN`` fails that way only on a broken connection, so such a failure is closed for good and raised as
``DatabaseUnreachable``: an outage, which tracking meets by keeping its events in the spool.

``adnet.db`` names this module as the engine of ``postgres://`` URLs.
"""

from __future__ import annotations

from typing import Any

import asyncpg
from tortoise.backends.asyncpg.client import AsyncpgDBClient, TransactionWrapper
from tortoise.backends.base.client import TransactionContext, TransactionContextPooled
from tortoise.connection import get_connections
from tortoise.exceptions import BaseORMException, TransactionManagementError

from adnet.db.outage import DatabaseUnreachable


class ReleasingTransactionContext(TransactionContextPooled):
    """A transaction on a pooled connection that gives the connection back, and stops being its task's current
    connection, however it ends: also when it cannot begin, and when the pool cannot reset the connection."""

    async def __aenter__(self) -> Any:
        await self.ensure_connection()
        self.client._connection = await self.client._parent._pool.acquire()
        self.token = get_connections().set(self.connection_name, self.client)
        try:
            await self.client.begin()
        except Exception as error:
            if _answered(error):
                await self._give_back()
                raise
            await self._give_back(broken=True)
            raise DatabaseUnreachable("the connection broke before BEGIN was answered") from error
        except BaseException:  # cancelled
            await self._give_back()
            raise
        return self.client

    async def __aexit__(self, exc_type: Any, exc_val: Any, exc_tb: Any) -> None:
        try:
            if not self.client._finalized and exc_type is None:
                await self.client.commit()
            elif not self.client._finalized and exc_type is not TransactionManagementError:  # not already failed
                await self.client.rollback()
        finally:
            await self._give_back()

    async def _give_back(self, *, broken: bool = False) -> None:
        """Stop being the task's current connection, then return the connection to the pool, closed first when it
        is ``broken``. The pool resets a connection it takes back, which raises on a connection the server ended:
        an outage."""
        get_connections().reset(self.token)
        connection = self.client._connection
        if broken:
            connection.terminate()
        try:
            await self.client._parent._pool.release(connection)
        except Exception as error:
            if _answered(error):
                raise
            raise DatabaseUnreachable("the connection broke when the pool reset it") from error


def _answered(error: Exception) -> bool:
    """Whether a statement's failure is the server's answer (or the ORM's reading of one), rather than the
    driver's finding that the connection broke under it."""
    return isinstance(error, (asyncpg.PostgresError, BaseORMException))


class ReleasingPostgresClient(AsyncpgDBClient):
    """Tortoise's asyncpg client whose transactions undo themselves when an outage interrupts them."""

    def _in_transaction(self) -> TransactionContext:
        return ReleasingTransactionContext(TransactionWrapper(self), self._pool_init_lock)


client_class = ReleasingPostgresClient
