"""Test harness: one migrated database per session (SQLite by default, PostgreSQL when
``ADNET_TEST_DATABASE_URL`` names one), emptied before every test; an app whose startup and shutdown run around
each test; a frozen clock and a seeded random source."""

from __future__ import annotations

import asyncio
import os
import random
from collections.abc import AsyncIterator, Iterator
from graphlib import TopologicalSorter
from pathlib import Path

import pytest
import redis
from tortoise import Tortoise, connections

from adnet.accounts.fetching import Fetcher
from adnet.app import create_app
from adnet.config import Settings, load_settings
from adnet.core.clock import FrozenClock
from adnet.db import config as database
from adnet.db import migrations
from adnet.services import Services
from tests.images import png
from tests.redis_server import PrivateRedis, free_port
from tests.site_server import FileNetwork, SiteServer, resolver, serve_site

TEST_SIGNER_KEY = "0x" + "11" * 32


@pytest.fixture(scope="session")
def database_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A freshly migrated database for the whole session."""
    url = os.environ.get("ADNET_TEST_DATABASE_URL") or None
    if url is None:
        url = f"sqlite://{tmp_path_factory.mktemp('db') / 'adnet-test.sqlite3'}"
    else:
        asyncio.run(database.recreate_postgres(url))
    asyncio.run(migrations.migrate(url))
    yield url


def make_settings(database_url: str, data_dir: Path, **overrides: str) -> Settings:
    env = {
        "ADNET_ENV": "test",
        "ADNET_DATA_DIR": str(data_dir),
        "ADNET_DATABASE_URL": database_url,
        "ADNET_SECRET_KEY": "test-secret-key-" + "x" * 32,
        "ADNET_TRACKING_SECRET": "test-tracking-secret-" + "y" * 32,
        "ADNET_SIGNER_KEY": TEST_SIGNER_KEY,
        "ADNET_PUBLIC_URL": "http://adnet.test",
        **overrides,
    }
    return load_settings(env)


def redis_for_tests() -> str:
    """The Redis of ``ADNET_TEST_REDIS_URL``. A test that needs one is skipped where none is named, except under CI,
    which must name one: there the test fails instead."""
    url = os.environ.get("ADNET_TEST_REDIS_URL")
    if not url:
        if os.environ.get("CI"):
            pytest.fail("CI runs the tests that need Redis: set ADNET_TEST_REDIS_URL")
        pytest.skip("needs Redis: set ADNET_TEST_REDIS_URL (e.g. redis://127.0.0.1:6379/15)")
    return url


@pytest.fixture
def redis_url() -> str:
    """The test Redis (``redis_for_tests``), its database emptied."""
    url = redis_for_tests()
    with redis.Redis.from_url(url) as connection:
        connection.flushdb()
    return url


@pytest.fixture
def private_redis() -> Iterator[PrivateRedis]:
    """A Redis of the test's own, not started: the test starts and kills it (``tests.redis_server``)."""
    server = PrivateRedis(free_port())
    try:
        yield server
    finally:
        server.kill()


@pytest.fixture
def clock() -> FrozenClock:
    return FrozenClock()


@pytest.fixture
def site_server() -> Iterator[SiteServer]:
    """A publisher's site on 127.0.0.1 for verification tests (``tests.site_server``)."""
    with serve_site() as server:
        yield server


@pytest.fixture
def settings(database_url: str, tmp_path: Path) -> Settings:
    return make_settings(database_url, tmp_path)


@pytest.fixture
async def app(settings: Settings, clock: FrozenClock) -> AsyncIterator:
    """The app with its startup run, on an emptied database."""
    application = create_app(settings, clock=clock, rng=random.Random(1234))
    async with application.test_app() as test_app:
        await empty_database()
        yield test_app.app


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture
def services(app) -> Services:
    """The running app's services: its serving index, writers, jobs and chain."""
    return app.extensions["adnet"]


# The public address the test banner CDN resolves to (it is never connected to: ``FileNetwork`` answers).
CDN_ADDRESS = "93.184.216.34"


@pytest.fixture
def banner_cdn(services: Services) -> FileNetwork:
    """``https://cdn.example`` for creatives: the app's banner fetcher, under its environment's policy, reaches a
    network that serves ``/banner.png``, ``/second.png`` and ``/other.png`` (300x250 PNGs) and whatever a test adds
    with ``serve``."""
    network = FileNetwork()
    for path in ("/banner.png", "/second.png", "/other.png"):
        network.serve(path, png(300, 250))
    services.banners = Fetcher(services.banners.policy, resolve=resolver({"cdn.example": [CDN_ADDRESS]}),
                               network=network, user_agent=services.banners.user_agent)
    return network


@pytest.fixture
def chain(services):
    """The app's chain client: an in-memory development chain with the vault and tokens deployed and funded."""
    return services.chain


async def empty_database() -> None:
    """Delete every row of every model's table, keeping the schema and the migration history. On PostgreSQL the
    tables are emptied by DELETE, those that refer to others first: a TRUNCATE of every table costs several times
    as much for the few rows a test leaves, once per test."""
    connection = connections.get("default")
    if connection.capabilities.dialect == "postgres":
        await connection.execute_script("".join(f"DELETE FROM {table};" for table in _referring_first()))
    else:
        tables = [model._meta.db_table for model in Tortoise.apps["models"].values()]
        await connection.execute_script(
            "PRAGMA foreign_keys = OFF;" + "".join(f"DELETE FROM {t};" for t in tables) + "PRAGMA foreign_keys = ON;"
        )


def _referring_first() -> list[str]:
    """Every model's table, each before the tables its foreign keys refer to."""
    order: TopologicalSorter[str] = TopologicalSorter()
    for model in Tortoise.apps["models"].values():
        meta = model._meta
        order.add(meta.db_table)
        for name in meta.fk_fields | meta.o2o_fields:
            referred = meta.fields_map[name].related_model._meta.db_table
            if referred != meta.db_table:
                order.add(referred, meta.db_table)
    return list(order.static_order())


async def rebuild_index(app) -> None:
    """Rebuild the running app's serving index now, as its job does when a change is announced."""
    await app.extensions["adnet"].serving.rebuild()
