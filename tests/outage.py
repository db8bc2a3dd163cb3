"""A database outage inside the test process: the app's database stops answering the ORM and the tracking writer
the way a stopped server or a vanished file does, until the block ends.

On PostgreSQL the ORM's pool is closed and pointed at a port where nothing listens (each new connection is refused,
as during a restart); on SQLite the ORM's connection is closed and pointed at a file in a directory that does not
exist (SQLite cannot open it), and so is the SQLite writer process of tracking. What fails is the driver's own
error, raised where it is raised in an outage, so ``adnet.db.outage`` has to recognise it as it would in production.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from tortoise import connections

from adnet.services import Services
from tests.ports import free_port

NOWHERE = "/nonexistent-adnet-outage/adnet.sqlite3"


@asynccontextmanager
async def database_outage(services: Services) -> AsyncIterator[None]:
    """The database unreachable for the block; reachable again after it (the next statement reconnects)."""
    client = connections.get("default")
    writer = services.tracker.writer
    if client.capabilities.dialect == "postgres":
        where = client.port
        await client.close()
        client.port = free_port()
    else:
        where = client.filename
        await client.close()
        client.filename = NOWHERE
    if writer is not None:
        url = writer.database_url
        writer.close()
        writer.database_url = f"sqlite://{NOWHERE}"
    try:
        yield
    finally:
        await client.close()
        if client.capabilities.dialect == "postgres":
            client.port = where
        else:
            client.filename = where
        if writer is not None:
            writer.close()
            writer.database_url = url
