"""One migration history for both databases: it matches the models and builds the schema from nothing."""

from __future__ import annotations

import importlib
from types import SimpleNamespace

import pytest
from tortoise import Tortoise, connections

from adnet.db import config as db
from adnet.db import migrations
from adnet.db.config import recreate_postgres

EXPECTED_TABLES = {"publisher", "site", "campaign", "creative", "task", "completion", "claim", "dedup_key",
                   "tracking_event", "deposit", "ledger_account", "ledger_transaction", "ledger_posting",
                   "interaction", "survey_session", "withdrawal", "exchange", "auth_nonce", "auth_session"}


@pytest.fixture
async def fresh_database_url(database_url: str, tmp_path) -> str:
    """An empty database of the kind the suite runs on (SQLite file, or PostgreSQL database beside the suite's)."""
    if database_url.startswith("sqlite://"):
        return f"sqlite://{tmp_path / 'fresh.sqlite3'}"
    url = database_url + "_fresh"
    await recreate_postgres(url)
    return url


async def test_models_and_migrations_agree(database_url):
    assert await migrations.pending_changes(database_url) == []


async def test_migrations_build_the_schema_from_nothing_and_apply_once(fresh_database_url):
    await migrations.migrate(fresh_database_url)
    await migrations.migrate(fresh_database_url)

    await db.open_database(fresh_database_url)
    try:
        tables = await _tables()
        assert EXPECTED_TABLES <= tables
        model_tables = {model._meta.db_table for model in Tortoise.apps["models"].values()}
        assert model_tables <= tables
        assert await migrations.pending_changes(fresh_database_url) == []
    finally:
        await db.close_database()


async def _tables() -> set[str]:
    connection = connections.get("default")
    if connection.capabilities.dialect == "postgres":
        rows = await connection.execute_query_dict(
            "SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public'")
    else:
        rows = await connection.execute_query_dict("SELECT name FROM sqlite_master WHERE type = 'table'")
    return {row["name"] for row in rows}


async def test_stored_addresses_become_networks(fresh_database_url):
    """0003 keeps only the network of the addresses events stored before it (run on a table of the columns it
    touches, in the suite's database)."""
    step = importlib.import_module("migrations.0003_tracking_clients").addresses_to_networks
    await db.open_database(fresh_database_url)
    try:
        connection = connections.get("default")
        await connection.execute_script("CREATE TABLE tracking_event (id VARCHAR(48) PRIMARY KEY, ip VARCHAR(45), "
                                        "client_network VARCHAR(45) NOT NULL DEFAULT '')")
        await connection.execute_script("INSERT INTO tracking_event (id, ip) VALUES ('a', '203.0.113.7'), "
                                        "('b', '203.0.113.99'), ('c', '2001:db8:1:2::7'), ('d', '')")
        await step(None, SimpleNamespace(client=connection))
        rows = await connection.execute_query_dict("SELECT id, client_network FROM tracking_event ORDER BY id")
    finally:
        await db.close_database()
    assert [(row["id"], row["client_network"]) for row in rows] == [
        ("a", "203.0.113.0/24"), ("b", "203.0.113.0/24"), ("c", "2001:db8:1::/48"), ("d", "")]
