"""The database's configuration and lifecycle, which the app, the CLI and the tests share: Tortoise's settings for a
``sqlite://`` or ``postgres://`` URL, opening and closing the connections, and a round trip for health checks."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from tortoise import Tortoise
from tortoise.backends.base.config_generator import expand_db_url

from adnet.db import sql

log = logging.getLogger(__name__)

APP_LABEL = "models"
MIGRATIONS_MODULE = "migrations"
# Every area's models, loaded by Tortoise as the one app ``models`` (relations name each other as "models.X").
MODEL_MODULES = (
    "adnet.accounts.models", "adnet.audiences.models", "adnet.campaigns.models", "adnet.chain.models",
    "adnet.conversions.models", "adnet.delivery.models",
    "adnet.interactions.models", "adnet.jobs.models", "adnet.money.models", "adnet.tasks.models",
    "adnet.webhooks.models",
)


def tortoise_config(database_url: str) -> dict[str, Any]:
    """The Tortoise configuration for ``database_url`` (sqlite:// or postgres://). SQLite goes through
    ``adnet.db.sqlite``, whose transactions take the write lock when they begin (several workers share the file),
    PostgreSQL through ``adnet.db.postgres``, whose transactions undo themselves when an outage interrupts them."""
    connection: str | dict[str, Any] = database_url
    if database_url.startswith("sqlite://"):
        connection = {**expand_db_url(database_url), "engine": "adnet.db.sqlite"}
        path = sqlite_file(database_url)
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
    elif database_url.startswith(("postgres://", "postgresql://", "asyncpg://")):
        connection = {**expand_db_url("postgres://" + database_url.split("://", 1)[1]), "engine": "adnet.db.postgres"}
    return {
        "connections": {"default": connection},
        "apps": {
            APP_LABEL: {
                "models": list(MODEL_MODULES),
                "migrations": MIGRATIONS_MODULE,
                "default_connection": "default",
            }
        },
        "use_tz": True,
        "timezone": "UTC",
    }


def sqlite_file(database_url: str) -> Path | None:
    """The file a ``sqlite://`` URL names, without its options (``?synchronous=FULL``); None for another database
    or an in-memory one."""
    if not database_url.startswith("sqlite://"):
        return None
    path = expand_db_url(database_url)["credentials"]["file_path"]
    return None if path == ":memory:" else Path(path)


async def open_database(database_url: str) -> None:
    """Connect the ORM for a serving process (the app's startup, CLI commands)."""
    await Tortoise.init(config=tortoise_config(database_url), _enable_global_fallback=True)


async def close_database() -> None:
    """Close the connections and release the ORM's process-wide context."""
    await Tortoise.close_connections()


async def recreate_postgres(database_url: str, template: str | None = None) -> None:
    """Drop the PostgreSQL database ``database_url`` names (closing its connections) and create it empty, or as a
    copy of the database named ``template`` (which no one may be connected to), through the server's maintenance
    database: how the test suites and the benchmark start from nothing."""
    import asyncpg

    base, name = database_url.rsplit("/", 1)
    admin = await asyncpg.connect(base.replace("postgres://", "postgresql://", 1) + "/postgres")
    try:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.execute(f'CREATE DATABASE "{name}"' + (f' TEMPLATE "{template}"' if template else ""))
    finally:
        await admin.close()


async def ping() -> None:
    """One round trip; raises when the database is unreachable."""
    await sql.fetch("SELECT 1")
