"""PostgreSQL transactions interrupted by an outage leave their task as it was (``adnet.db.postgres``).

The client is Tortoise's own with adnet's transaction context; only the driver beneath it is replaced, by a pool
whose connections fail where an outage makes asyncpg's fail: at ``BEGIN``, or when the pool resets a returned
connection, with the server's answer or with none (a connection the server ended while it sat in the pool). With
Tortoise's context the task kept the dead transaction as its connection and every later transaction of the task
failed as a savepoint of it; with no answer, the driver's error was taken for a fault (a 500)."""

from __future__ import annotations

import asyncpg
import pytest
from tortoise import connections
from tortoise.connection import get_connections
from tortoise.context import TortoiseContext
from tortoise.transactions import in_transaction

from adnet.db.outage import DatabaseUnreachable, is_outage
from adnet.db.postgres import ReleasingPostgresClient

ALIAS = "outage"
# What asyncpg raises at BEGIN on a connection whose server ended it while it sat idle in the pool.
UNANSWERED = asyncpg.InternalClientError("cannot switch to state 15; another operation (2) is in progress")
SERVER_GONE = asyncpg.ConnectionDoesNotExistError("connection was closed in the middle of operation")


class Transaction:
    def __init__(self, connection: Connection) -> None:
        self.connection = connection

    async def start(self) -> None:
        if self.connection.pool.begin_fails is not None:
            raise self.connection.pool.begin_fails
        self.connection.pool.statements.append("BEGIN")

    async def commit(self) -> None:
        self.connection.pool.statements.append("COMMIT")

    async def rollback(self) -> None:
        self.connection.pool.statements.append("ROLLBACK")


class Connection:
    def __init__(self, pool: Pool) -> None:
        self.pool = pool

    def transaction(self) -> Transaction:
        return Transaction(self)

    def terminate(self) -> None:
        self.pool.terminated += 1


class Pool:
    """A pool of one connection that records what is sent on it and whether it is lent."""

    def __init__(self) -> None:
        self.begin_fails: Exception | None = None
        self.reset_fails: Exception | None = None
        self.lent = 0
        self.terminated = 0
        self.statements: list[str] = []

    async def acquire(self) -> Connection:
        self.lent += 1
        return Connection(self)

    async def release(self, connection: Connection) -> None:
        self.lent -= 1
        if self.reset_fails is not None:
            raise self.reset_fails


@pytest.fixture
async def pool():
    client = ReleasingPostgresClient(connection_name=ALIAS, host="127.0.0.1", database="adnet")
    client._pool = Pool()
    async with TortoiseContext():
        token = get_connections().set(ALIAS, client)
        yield client._pool
        get_connections().reset(token)


async def test_a_transaction_that_cannot_begin_gives_its_connection_back_and_is_not_the_tasks_connection(pool):
    client = connections.get(ALIAS)
    pool.begin_fails = SERVER_GONE
    with pytest.raises(asyncpg.ConnectionDoesNotExistError):
        async with in_transaction(ALIAS):
            pytest.fail("the block ran without a transaction")

    assert connections.get(ALIAS) is client
    assert pool.lent == 0
    pool.begin_fails = None
    async with in_transaction(ALIAS):
        pass
    assert pool.statements == ["BEGIN", "COMMIT"], "the next transaction was a savepoint of the failed one"


async def test_a_connection_the_pool_cannot_reset_leaves_the_task_without_its_transaction(pool):
    client = connections.get(ALIAS)
    pool.reset_fails = SERVER_GONE
    with pytest.raises(asyncpg.ConnectionDoesNotExistError):
        async with in_transaction(ALIAS):
            pass

    assert connections.get(ALIAS) is client
    pool.reset_fails = None
    with pytest.raises(ValueError, match="kept"):
        async with in_transaction(ALIAS):
            raise ValueError("kept")
    assert pool.statements == ["BEGIN", "COMMIT", "BEGIN", "ROLLBACK"]
    assert pool.lent == 0


async def test_a_begin_the_server_never_answered_closes_the_connection_and_is_an_outage(pool):
    client = connections.get(ALIAS)
    pool.begin_fails = UNANSWERED
    with pytest.raises(DatabaseUnreachable) as raised:
        async with in_transaction(ALIAS):
            pytest.fail("the block ran without a transaction")

    assert is_outage(raised.value)
    assert raised.value.__cause__ is UNANSWERED
    assert (pool.terminated, pool.lent) == (1, 0), "the broken connection went back to the pool open"
    assert connections.get(ALIAS) is client
    pool.begin_fails = None
    async with in_transaction(ALIAS):
        pass
    assert pool.statements == ["BEGIN", "COMMIT"]


async def test_a_reset_that_breaks_without_an_answer_is_an_outage(pool):
    pool.reset_fails = UNANSWERED
    with pytest.raises(DatabaseUnreachable) as raised:
        async with in_transaction(ALIAS):
            pass

    assert is_outage(raised.value)
    assert pool.lent == 0
    assert pool.terminated == 0, "a connection that committed was closed by adnet rather than by its pool"
