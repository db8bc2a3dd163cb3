"""The migrations: one history (Tortoise's native, dialect-neutral migrations in ``migrations/``) serves SQLite and
PostgreSQL alike. ``adnet serve`` and ``adnet migrate`` apply it; ``adnet makemigrations`` writes what the models
need beyond it, and a test keeps models and history in agreement."""

from __future__ import annotations

from tortoise import Tortoise, connections
from tortoise.migrations.api import migrate as run_migrations
from tortoise.migrations.autodetector import MigrationAutodetector
from tortoise.migrations.executor import MigrationExecutor
from tortoise.migrations.writer import MigrationWriter, format_migration_name

from adnet.db.config import tortoise_config


async def migrate(database_url: str) -> None:
    """Apply every pending migration."""
    await run_migrations(config=tortoise_config(database_url))
    await Tortoise.close_connections()


async def unapplied(database_url: str) -> list[str]:
    """Names of the migrations of ``migrations/`` the database has not applied (every one for an empty database),
    without applying any. Raises what the driver raises when the database cannot be reached."""
    config = tortoise_config(database_url)
    await Tortoise.init(config=config, init_connections=False)
    try:
        connection = connections.get("default")
        await connection.execute_query("SELECT 1")  # the plan would take an unreachable database for an empty one
        plan = await MigrationExecutor(connection, config["apps"]).plan()
        return [step.migration.name for step in plan if not step.backward]
    finally:
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
