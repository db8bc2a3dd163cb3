"""Test harness: one migrated database per session (SQLite by default, PostgreSQL when
``ADNET_TEST_DATABASE_URL`` names one), emptied before every test; an app whose startup and shutdown run around
each test; a frozen clock and a seeded random source.

The suite runs in several processes (pytest-xdist, ``make test``). Each worker process has its own databases and
its own Redis database: ``pytest_configure`` gives every worker a PostgreSQL database name and a Redis database
number of its own, derived from the configured ones, so no two workers empty or read each other's state."""

from __future__ import annotations

import asyncio
import os
import random
import shutil
from collections.abc import AsyncIterator, Coroutine, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from graphlib import TopologicalSorter
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

import pytest
import redis
from filelock import FileLock
from quart import Quart
from quart.testing import TestApp
from tortoise import Tortoise, connections
from tortoise.backends.base import executor
from xdist.scheduler import LoadScopeScheduling

from adnet.accounts.fetching import Fetcher
from adnet.app import create_app
from adnet.campaigns.previews import BannerPreviews
from adnet.config import Settings, load_settings
from adnet.core.clock import Clock, FrozenClock
from adnet.db import config as database
from adnet.db import migrations
from adnet.services import Services
from tests.images import png
from tests.ports import free_port
from tests.redis_server import PrivateRedis
from tests.site_server import FileNetwork, SiteServer, resolver, serve_site

TEST_SIGNER_KEY = "0x" + "11" * 32
REDIS_DATABASES = 16
# Tests that run longest start first, so that no worker is left with one of them at the end of the run.
SLOW_FIRST = ("tests/reliability/", "tests/browser/", "tests/chain/", "tests/adnet/db/", "tests/adnet/cli/")
# Test files outside tests/reliability whose tests share a server their module starts.
MODULE_SERVERS = frozenset({"tests/chain/test_real_chain.py"})


class PatientTestApp(TestApp):
    """Quart's test app, given a minute to start and stop rather than six seconds: an app's first start builds the
    development chain, and parallel workers on two busy cores can take longer than that. A start cut short would
    leave the ORM's global context behind and fail every later test of the worker."""

    def __init__(self, app: Quart, startup_timeout: int = 60, shutdown_timeout: int = 60) -> None:
        super().__init__(app, startup_timeout, shutdown_timeout)


Quart.test_app_class = PatientTestApp


def worker_number() -> int:
    """This pytest-xdist worker's number (``gw3`` is 3); 0 in a run without workers."""
    return int(os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw"))


def pytest_configure(config: pytest.Config) -> None:
    """Schedule a parallel run by shared servers (in the process that runs the workers); give each worker its own
    PostgreSQL database (``<name>_gw<n>``) and Redis database (counting down from the configured one), in the
    environment, where every fixture and every server a test starts reads them."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker is None:
        if config.pluginmanager.hasplugin("xdist"):
            config.pluginmanager.register(SharedServers())
        return
    database_url = os.environ.get("ADNET_TEST_DATABASE_URL")
    if database_url:
        os.environ["ADNET_TEST_DATABASE_URL"] = f"{database_url}_{worker}"
    redis_url = os.environ.get("ADNET_TEST_REDIS_URL")
    if redis_url:
        parts = urlsplit(redis_url)
        configured = int(parts.path.strip("/") or 0)
        database = (configured - worker_number()) % REDIS_DATABASES
        os.environ["ADNET_TEST_REDIS_URL"] = urlunsplit(parts._replace(path=f"/{database}"))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Order the slow directories first (stable within each), so parallel workers finish together."""
    def rank(item: pytest.Item) -> int:
        path = item.nodeid
        return next((index for index, prefix in enumerate(SLOW_FIRST) if path.startswith(prefix)), len(SLOW_FIRST))

    items.sort(key=rank)


class SharedServerScheduling(LoadScopeScheduling):
    """pytest-xdist's scheduling by scope, where a scope is the group of tests that share a server
    (``shared_server_group``), run in order on one worker, and every other test is a scope of its own. (xdist's
    ``loadgroup`` marks groups by renaming tests, which pytest 9.2's node ids no longer allow.)"""

    def _split_scope(self, nodeid: str) -> str:
        return shared_server_group(nodeid.partition("::")[0]) or nodeid


class SharedServers:
    """The plugin that gives a parallel run (``-n``, any ``--dist``) this suite's scheduling."""

    @staticmethod
    def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> SharedServerScheduling:
        return SharedServerScheduling(config, log)


def shared_server_group(path: str) -> str | None:
    """The group of tests that share a server with the test file at ``path``, or None when its tests stand alone."""
    if path.startswith("tests/browser/"):
        return path.rpartition("/")[0]
    if path.startswith("tests/reliability/") or path in MODULE_SERVERS:
        return path
    return None


_migrated_sqlite: list[Path] = []
T = TypeVar("T")


def run_coroutine(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run ``coroutine`` to its end from synchronous code, also when called inside a running event loop (a
    thread of its own runs it)."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


@pytest.fixture(scope="session", autouse=True)
def migrated_sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A SQLite file with every migration applied, made once per run (its workers share the run's directory) and
    copied by ``migrated_sqlite``: applying the history from nothing costs seconds, a copy next to nothing."""
    basetemp = tmp_path_factory.getbasetemp()
    run_dir = basetemp.parent if os.environ.get("PYTEST_XDIST_WORKER") else basetemp
    template = run_dir / "migrated.sqlite3"
    with FileLock(run_dir / "migrated.lock"):
        if not template.exists():
            building = run_dir / "migrating.sqlite3"
            building.unlink(missing_ok=True)
            run_coroutine(migrations.migrate(f"sqlite://{building}"))
            building.rename(template)
    _migrated_sqlite[:] = [template]
    return template


def migrated_sqlite(path: Path) -> str:
    """The URL of a new SQLite database at ``path`` with every migration applied (a copy of the run's template)."""
    shutil.copyfile(_migrated_sqlite[0], path)
    return f"sqlite://{path}"


_migrated_postgres: list[str] = []


def migrated_postgres(url: str) -> None:
    """Make the PostgreSQL database ``url`` names anew with every migration applied: a copy of a database this
    worker migrated once (``<ADNET_TEST_DATABASE_URL>_migrated``, to which no one stays connected)."""
    if not _migrated_postgres:
        template_url = f"{os.environ['ADNET_TEST_DATABASE_URL']}_migrated"
        run_coroutine(database.recreate_postgres(template_url))
        run_coroutine(migrations.migrate(template_url))
        _migrated_postgres.append(template_url.rsplit("/", 1)[1])
    run_coroutine(database.recreate_postgres(url, template=_migrated_postgres[0]))


@pytest.fixture(scope="session")
def database_url(tmp_path_factory: pytest.TempPathFactory, migrated_sqlite_template: Path) -> Iterator[str]:
    """A freshly migrated database for the whole session."""
    url = os.environ.get("ADNET_TEST_DATABASE_URL") or None
    if url is None:
        url = migrated_sqlite(tmp_path_factory.mktemp("db") / "adnet-test.sqlite3")
    else:
        migrated_postgres(url)
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


@pytest.fixture(scope="session")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The data directory of the apps of this worker (in test mode an app keeps nothing there)."""
    return tmp_path_factory.mktemp("data")


@pytest.fixture
def settings(database_url: str, data_dir: Path) -> Settings:
    return make_settings(database_url, data_dir)


class TestClock(Clock):
    """The clock of an app that the worker keeps from test to test: each test points it at its own ``clock``."""

    def __init__(self) -> None:
        self.target: Clock = FrozenClock()

    def now(self) -> datetime:
        return self.target.now()


@dataclass(frozen=True)
class KeptApp:
    app: Quart
    clock: TestClock
    rng: random.Random


_kept_apps: dict[Settings, KeptApp] = {}


@pytest.fixture(autouse=True)
def statements_of_one_dialect() -> None:
    """Tortoise keeps each model's INSERT statement by connection name, not by dialect: after a test that opened a
    SQLite database of its own in a run on PostgreSQL, the next test of the worker would send SQLite's ``?``
    placeholders to PostgreSQL. Every test starts without them (they are rendered again at the first insert)."""
    executor.EXECUTOR_CACHE.clear()


@pytest.fixture
async def app(settings: Settings, clock: FrozenClock) -> AsyncIterator:
    """The app with its startup run (fresh services), on an emptied database, with the test's clock and a random
    source seeded the same for every test. Building an app (its routes) costs more than most tests, so the worker
    keeps one per settings and starts it again for each test; a test that changes the app itself (a route, its
    config) uses ``own_app`` instead."""
    kept = _kept_apps.get(settings)
    if kept is None:
        app_clock, rng = TestClock(), random.Random()
        kept = _kept_apps[settings] = KeptApp(create_app(settings, clock=app_clock, rng=rng), app_clock, rng)
    kept.clock.target = clock
    kept.rng.seed(1234)
    async with kept.app.test_app() as test_app:
        await empty_database()
        yield test_app.app


@pytest.fixture
async def own_app(settings: Settings, clock: FrozenClock) -> AsyncIterator:
    """An app built for this test alone, for tests that change the app (register a route, set its config)."""
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
    """``https://cdn.example`` for creatives: the app's banner fetcher (and the review queue's previews, which fetch
    through it), under its environment's policy, reaches a network that serves ``/banner.png``, ``/second.png`` and
    ``/other.png`` (300x250 PNGs) and whatever a test adds with ``serve``."""
    network = FileNetwork()
    for path in ("/banner.png", "/second.png", "/other.png"):
        network.serve(path, png(300, 250))
    services.banners = Fetcher(services.banners.policy, resolve=resolver({"cdn.example": [CDN_ADDRESS]}),
                               network=network, user_agent=services.banners.user_agent)
    services.previews = BannerPreviews(services.banners)
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
