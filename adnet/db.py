"""The database: Tortoise configuration, migrations, and the lifecycle the app and the CLI share.

One migration history (Tortoise's native, dialect-neutral migrations in ``migrations/``) serves SQLite and
PostgreSQL alike.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, TypeVar

from tortoise import Tortoise, connections
from tortoise.backends.base.client import BaseDBAsyncClient
from tortoise.backends.base.config_generator import expand_db_url
from tortoise.migrations.api import migrate as run_migrations
from tortoise.migrations.autodetector import MigrationAutodetector
from tortoise.migrations.writer import MigrationWriter, format_migration_name
from tortoise.models import Model

from adnet import statements

log = logging.getLogger(__name__)

ModelT = TypeVar("ModelT", bound=Model)

APP_LABEL = "models"
MIGRATIONS_MODULE = "migrations"


def tortoise_config(database_url: str) -> dict[str, Any]:
    """The Tortoise configuration for ``database_url`` (sqlite:// or postgres://). SQLite goes through
    ``adnet.sqlite``, whose transactions take the write lock when they begin (several workers share the file)."""
    connection: str | dict[str, Any] = database_url
    if database_url.startswith("sqlite://"):
        connection = {**expand_db_url(database_url), "engine": "adnet.sqlite"}
        path = connection["credentials"]["file_path"]
        if path != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
    elif database_url.startswith("postgresql://"):
        connection = "postgres://" + database_url.removeprefix("postgresql://")
    return {
        "connections": {"default": connection},
        "apps": {
            APP_LABEL: {
                "models": ["adnet.models"],
                "migrations": MIGRATIONS_MODULE,
                "default_connection": "default",
            }
        },
        "use_tz": True,
        "timezone": "UTC",
    }


async def migrate(database_url: str) -> None:
    """Apply every pending migration."""
    await run_migrations(config=tortoise_config(database_url))
    await Tortoise.close_connections()


async def pending_changes(database_url: str) -> list[str]:
    """Names of the migrations the models would need beyond ``migrations/`` (empty when they agree)."""
    return [writer.name for writer in await _detect_changes(database_url)]


async def write_migrations(database_url: str, name: str | None = None) -> list[str]:
    """Write the migrations the models need into ``migrations/``; returns their names."""
    writers = await _detect_changes(database_url)
    for writer in writers:
        if name:
            writer.name = format_migration_name(int(writer.name.split("_", 1)[0]), name)
        writer.write()
    return [writer.name for writer in writers]


async def _detect_changes(database_url: str) -> list[MigrationWriter]:
    config = tortoise_config(database_url)
    await Tortoise.init(config=config, init_connections=False)
    try:
        return await MigrationAutodetector(Tortoise.apps, config["apps"]).changes()
    finally:
        await Tortoise.close_connections()


async def open_database(database_url: str) -> None:
    """Connect the ORM for a serving process (the app's startup, CLI commands)."""
    await Tortoise.init(config=tortoise_config(database_url), _enable_global_fallback=True)


async def close_database() -> None:
    """Close the connections and release the ORM's process-wide context."""
    await Tortoise.close_connections()


async def recreate_postgres(database_url: str) -> None:
    """Drop the PostgreSQL database ``database_url`` names (closing its connections) and create it empty, through
    the server's maintenance database: how the test suites and the benchmark start from nothing."""
    import asyncpg

    base, name = database_url.rsplit("/", 1)
    admin = await asyncpg.connect(base.replace("postgres://", "postgresql://", 1) + "/postgres")
    try:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.execute(f'CREATE DATABASE "{name}"')
    finally:
        await admin.close()


async def ping() -> None:
    """One round trip; raises when the database is unreachable."""
    await connections.get("default").execute_query("SELECT 1")


def placeholders(connection: BaseDBAsyncClient, count: int) -> list[str]:
    """Parameter markers for a raw statement in the connection's dialect: ``$1..$n`` on PostgreSQL, ``?`` on
    SQLite."""
    return statements.marks(statements.dialect_of(connection), count)


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
    tuples = statements.value_rows(statements.dialect_of(connection), len(rows), len(columns))
    sql = f"INSERT INTO {model._meta.db_table} ({', '.join(columns)}) VALUES {tuples}"  # noqa: S608
    await connection.execute_query(sql, [fields[name].to_db_value(row[name], model) for row in rows
                                         for name in columns])
    return [loaded(model, row) for row in rows]


def loaded(model: type[ModelT], row: dict[str, Any]) -> ModelT:
    """A model instance from a row read (or written) with a plain statement, exactly as the ORM builds the rows it
    reads itself (Tortoise's ``_init_from_db``)."""
    return model._init_from_db(**row)
