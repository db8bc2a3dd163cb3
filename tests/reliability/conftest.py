"""Harness of the reliability suites: a real ``adnet serve`` in a subprocess on 127.0.0.1, what the demo data
created, sign-in over HTTP, snapshots of the books read from the database, and ``adnet audit``.

The server runs in development mode on a fresh data directory, so it starts its own development chain process
(which outlives a SIGKILL of the server, as a node would). The database is a SQLite file there, or, when
``ADNET_TEST_DATABASE_URL`` names a PostgreSQL database, a database of that server named ``<name>_reliability``.
Every server runs two workers. Rate limits are set far above the load the suites make; the limits themselves are
tested in ``tests/api/test_rate_limits.py``.

Size: ``ADNET_RELIABILITY=full`` (``make reliability``) runs every suite at full size; by default (``make test``,
CI) the same suites run reduced, within a few minutes in all.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import httpx
import pytest
from eth_account.signers.local import LocalAccount
from tortoise import Tortoise, connections

from adnet.chain import devserver
from adnet.chain import service as chain_service
from adnet.config import load_settings
from adnet.core.clock import Clock
from adnet.core.wallets import dev_accounts
from adnet.db import config as db
from adnet.db.config import sqlite_file
from adnet.money.holders import account_ref
from tests.auth_helpers import sign, siwe_message
from tests.chain.helpers import deposit
from tests.conftest import migrated_postgres, migrated_sqlite, run_coroutine
from tests.ports import free_port

HOST = "127.0.0.1"
FULL = os.environ.get("ADNET_RELIABILITY", "").lower() == "full"
WORKERS = 2
START_TIMEOUT = 120.0
STOP_TIMEOUT = 30.0
COMMAND_TIMEOUT = 300
ROOT = Path(__file__).resolve().parents[2]
# Tables that background work writes on its own schedule (what the fill-counts job flushes, the watcher's cursor,
# the lease of the job that leads, the change log, the reach job's cursor and viewers), and the rate limit keys,
# which every admitted request counts in whatever it answers: a snapshot taken around one request leaves them out.
BACKGROUND_TABLES = frozenset({"site_daily_stat", "request_hour", "decision_sample", "chain_cursor", "job_lease",
                               "announced_change", "rate_limit", "reach_cursor", "reach_viewer_daily"})
HIGH_LIMIT = "10000000/60"


def scaled(ci: int, full: int) -> int:
    """The size of a suite: ``ci`` by default, ``full`` under ``ADNET_RELIABILITY=full``."""
    return full if FULL else ci


def adnet_command(*args: str) -> list[str]:
    return [str(Path(sys.executable).with_name("adnet")), *args]


def database_url_for(data_dir: Path, name: str) -> str:
    """The database of server ``name`` on ``data_dir``: a SQLite file there, or a PostgreSQL database of its own
    beside the suite's."""
    configured = os.environ.get("ADNET_TEST_DATABASE_URL")
    if not configured:
        return f"sqlite://{data_dir / 'adnet.sqlite3'}"
    return f"{configured}_{name}"


@dataclass
class AdnetServer:
    """One ``adnet serve`` process group and everything the suites need to reach it."""

    data_dir: Path
    port: int
    database_url: str
    workers: int = WORKERS
    extra_env: dict[str, str] = field(default_factory=dict)
    own_database: bool = False  # a database on a server of the test's own: made empty, then migrated
    log_name: str = "server.log"  # two servers on one data directory (two hosts of one database) log apart
    process: subprocess.Popen | None = None
    demo: dict = field(default_factory=dict)

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}"

    @property
    def log_path(self) -> Path:
        return self.data_dir / self.log_name

    @property
    def env(self) -> dict[str, str]:
        inherited = {name: value for name, value in os.environ.items() if not name.startswith("ADNET_")}
        return {
            **inherited,
            "ADNET_ENV": "development",
            "ADNET_DATA_DIR": str(self.data_dir),
            "ADNET_DATABASE_URL": self.database_url,
            "ADNET_HOST": HOST,
            "ADNET_PORT": str(self.port),
            "ADNET_PUBLIC_URL": self.url,
            "ADNET_TRUSTED_PROXIES": "1",
            "ADNET_RATE_LIMIT_PUBLIC": HIGH_LIMIT,
            "ADNET_RATE_LIMIT_AUTH": HIGH_LIMIT,
            "ADNET_RATE_LIMIT_ACCOUNT": HIGH_LIMIT,
            "ADNET_MIN_WITHDRAWAL": "1000",
            "ADNET_DRAIN_SECONDS": "0",  # stopped at once; test_rolling_restart.py drains
            **self.extra_env,
        }

    def run(self, *args: str) -> subprocess.CompletedProcess:
        """An ``adnet`` command with this server's settings."""
        return subprocess.run(adnet_command(*args), env=self.env, cwd=ROOT, capture_output=True,  # noqa: S603
                              text=True, timeout=COMMAND_TIMEOUT, check=False)

    def prepare(self) -> None:
        """Migrate (the database starts as a copy of a migrated one, or empty on a server of the test's own;
        ``adnet migrate`` then makes the data directory) and load the demo data without its month of history
        (which deploys the development chain)."""
        path = sqlite_file(self.database_url)
        if self.own_database:
            run_coroutine(db.recreate_postgres(self.database_url))
        elif path is None:
            migrated_postgres(self.database_url)
        else:
            migrated_sqlite(path)
        for args in (("migrate",), ("demo", "--bare", "--json")):
            result = self.run(*args)
            if result.returncode != 0:
                raise RuntimeError(f"adnet {' '.join(args)} failed: {result.stderr[-2000:]}")
        self.demo = json.loads(result.stdout)

    def start(self) -> None:
        """Start ``adnet serve`` in its own process group and wait until it answers ``/healthz`` and every worker
        has started (one worker answering is not all of them, on a busy machine)."""
        startups = self.startups()
        log = open(self.log_path, "ab")
        try:
            self.process = subprocess.Popen(  # noqa: S603 - our own command, fixed arguments
                adnet_command("serve", "--workers", str(self.workers)), env=self.env, cwd=ROOT,
                stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        finally:
            log.close()
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"adnet serve exited with {self.process.returncode}: {self.log_tail()}")
            with contextlib.suppress(httpx.HTTPError):
                answered = httpx.get(f"{self.url}/healthz", timeout=2).status_code == 200
                if answered and self.startups() - startups >= self.workers:
                    return
            time.sleep(0.2)
        self.kill()
        raise RuntimeError(f"adnet serve did not answer within {START_TIMEOUT:.0f} s: {self.log_tail()}")

    def startups(self) -> int:
        """How many times a worker logged that its app started, in this server's log."""
        log = self.log_path
        return log.read_text(errors="replace").count("Application startup complete") if log.exists() else 0

    def stop(self) -> None:
        """SIGINT to the server, which stops its workers gracefully (queued events are committed); SIGKILL to the
        group if it hangs."""
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                self.kill()
        self._reap_group()
        self.process = None

    def kill(self) -> None:
        """SIGKILL to the server's whole process group (the main process and its workers), as a crash does."""
        if self.process is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=STOP_TIMEOUT)
        self._reap_group()
        self.process = None

    def _reap_group(self) -> None:
        """Wait for the workers of the group to be gone (they may outlive their parent by a moment)."""
        assert self.process is not None
        deadline = time.monotonic() + STOP_TIMEOUT
        while time.monotonic() < deadline:
            try:
                os.killpg(self.process.pid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.05)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)

    def stop_chain(self) -> None:
        """Stop the development chain of the data directory (started by the server, it outlives a SIGKILL)."""
        info = devserver.running(devserver.state_path(self.data_dir))
        if info is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.kill(info.pid, signal.SIGTERM)
        deadline = time.monotonic() + STOP_TIMEOUT
        while time.monotonic() < deadline and devserver.running(devserver.state_path(self.data_dir)) is not None:
            time.sleep(0.05)
        with contextlib.suppress(ProcessLookupError):
            os.kill(info.pid, signal.SIGKILL)

    def audit(self) -> str:
        """Run ``adnet audit`` (books and vault); fail the test with its report when it finds any problem."""
        result = self.run("audit")
        report = result.stdout + result.stderr
        assert result.returncode == 0, f"adnet audit failed:\n{report}"
        assert "audit passed" in result.stdout
        return result.stdout

    def worker_pids(self) -> list[int]:
        """The server's worker processes: the children its main process spawned to serve (uvicorn's workers run
        multiprocessing's ``spawn_main``; the chain and multiprocessing's resource tracker are not workers)."""
        assert self.process is not None
        children = Path(f"/proc/{self.process.pid}/task/{self.process.pid}/children").read_text().split()
        workers = []
        for child in children:
            with contextlib.suppress(FileNotFoundError):
                if b"spawn_main" in Path(f"/proc/{child}/cmdline").read_bytes():
                    workers.append(int(child))
        return workers

    def log_tail(self, size: int = 4000) -> str:
        path = self.log_path
        return path.read_text(errors="replace")[-size:] if path.exists() else ""

    @property
    def site_id(self) -> str:
        return self.demo["siteId"]


@contextlib.contextmanager
def running_server(data_dir: Path, name: str, workers: int = WORKERS, extra_env: dict[str, str] | None = None,
                   database_url: str | None = None) -> Iterator[AdnetServer]:
    """A prepared and started server ``name`` (its PostgreSQL database's suffix) on ``data_dir``, or on the
    PostgreSQL database ``database_url`` of a server of the test's own; stopped, with its chain, whatever happens."""
    server = AdnetServer(data_dir=data_dir, port=free_port(),
                         database_url=database_url or database_url_for(data_dir, name), workers=workers,
                         extra_env=extra_env or {}, own_database=database_url is not None)
    try:
        server.prepare()
        server.start()
        yield server
    finally:
        try:
            server.stop()
        finally:
            server.stop_chain()


@pytest.fixture(scope="module")
def adnet_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AdnetServer]:
    """One running server with the demo data for a whole module."""
    with running_server(tmp_path_factory.mktemp("adnet-server"), "reliability") as server:
        yield server


@contextlib.asynccontextmanager
async def books(server: AdnetServer) -> AsyncIterator[None]:
    """The server's database opened in the test process (to read what the server wrote)."""
    await db.open_database(server.database_url)
    try:
        yield
    finally:
        await Tortoise.close_connections()


@dataclass(frozen=True)
class BooksState:
    """Row counts of every table (but the background ones) and every ledger account's balance."""

    rows: dict[str, int]
    balances: dict[tuple[str, str, str], int]

    def totals(self) -> dict[str, int]:
        """Per token, the sum of every account but ``external`` (what adnet owes)."""
        owed: dict[str, int] = {}
        for (kind, _owner, token), balance in self.balances.items():
            if kind != "external":
                owed[token] = owed.get(token, 0) + balance
        return owed


async def snapshot() -> BooksState:
    """What the database holds now (call inside ``books``)."""
    connection = connections.get("default")
    tables = sorted(model._meta.db_table for model in Tortoise.apps["models"].values())
    rows = {}
    for table in tables:
        if table in BACKGROUND_TABLES:
            continue
        result = await connection.execute_query_dict(f"SELECT COUNT(*) AS n FROM {table}")
        rows[table] = int(result[0]["n"])
    accounts = await connection.execute_query_dict("SELECT kind, owner, token, balance FROM ledger_account")
    balances = {(row["kind"], row["owner"], row["token"]): int(Decimal(str(row["balance"]))) for row in accounts}
    return BooksState(rows=rows, balances=balances)


def account(index: int) -> LocalAccount:
    """A development account (2 is the demo publisher, 1 the demo advertiser)."""
    return dev_accounts()[index]


async def sign_in(client: httpx.AsyncClient, wallet: LocalAccount) -> str:
    """Sign in over HTTP as a wallet does (nonce, SIWE message, signature) and return the session token."""
    grant = (await client.get("/api/auth/nonce")).json()
    message = siwe_message(wallet.address, nonce=grant["nonce"], domain=grant["domain"], uri=grant["uri"] + "/portal",
                           scheme=grant["uri"].split("://", 1)[0], chain_id=grant["chainId"],
                           issued_at=datetime.now(UTC))
    response = await client.post("/api/auth/verify", json={"message": message, "signature": sign(wallet, message)})
    assert response.status_code == 200, response.text
    return response.json()["token"]


def http_client(server: AdnetServer, connections_limit: int = 200) -> httpx.AsyncClient:
    """An HTTP client of the server that keeps up to ``connections_limit`` connections open at once."""
    return httpx.AsyncClient(base_url=server.url, timeout=60,
                             limits=httpx.Limits(max_connections=connections_limit,
                                                 max_keepalive_connections=connections_limit))


def browser_headers(client_ip: str) -> dict[str, str]:
    """Headers of a browser on a page of the demo site (whose domain is the server's host, 127.0.0.1), behind our
    one trusted proxy, from ``client_ip``."""
    return {"User-Agent": "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0",
            "Origin": "http://127.0.0.1", "X-Forwarded-For": client_ip}


# Client networks handed out so far: every served ad goes to a /24 of its own for the whole session, so one
# test's billed events never count against another's billing caps per client network.
_NETWORKS = itertools.count()


async def serve_ads(client: httpx.AsyncClient, site_id: str, count: int) -> list[dict]:
    """``count`` banners served to the demo site, each with its own tracking token and to a client of its own /24
    network, never used before in the session; ``ad["client"]`` is that client's address, which the ad's events
    must come from to be billable."""
    async def one(number: int) -> dict:
        address = f"127.{1 + number // 250}.{number % 250}.1"
        response = await client.get("/api/serve", params={"siteId": site_id, "size": "300x250"},
                                    headers=browser_headers(address))
        assert response.status_code == 200, response.text
        body = response.json()
        assert body["kind"] == "BANNER", body
        return {**body["ad"], "client": address}

    return list(await asyncio.gather(*(one(next(_NETWORKS)) for _ in range(count))))


def impression(site_id: str, ad: dict, fingerprint: str) -> dict:
    """A viewable, rendered impression of a served ad, as the SDK reports it."""
    return {"type": "IMPRESSION", "campaignId": ad["campaignId"], "adId": ad["id"], "siteId": site_id,
            "fingerprint": fingerprint, "rendered": True, "viewportVisible": True, "renderTime": 40,
            "timestamp": int(time.time() * 1000), "pageUrl": "http://127.0.0.1/article",
            "trackingToken": ad["trackingToken"]}


async def deposit_to_site(server: AdnetServer, amount: int) -> str:
    """A G$ deposit of ``amount`` from the demo publisher's wallet to the vault for the demo site, sent to the
    development chain (call inside ``books``); its transaction hash."""
    connection = await chain_service.connect(load_settings(server.env), clock=Clock())
    try:
        receipt = await deposit(connection.client, account(2), amount, account_ref(server.site_id))
    finally:
        await connection.close()
    return receipt["transactionHash"].to_0x_hex()
