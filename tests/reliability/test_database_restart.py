"""A PostgreSQL restart under steady load: a two-worker ``adnet serve`` on a PostgreSQL server of the test's own
(``tests.postgres_server``; on the SQLite run of the suite too) serves ads and takes impressions from several
clients while that server is stopped (``pg_ctl stop -m fast``, as a restart does) and started again.

Proven: no request was answered with an error or left unanswered (serving from memory, tracking into each worker's
spool, ``adnet.delivery.spool``), the host stayed ready (``/readyz``) throughout, and afterwards, from the database:
every event answered 201 is stored, under the id its answer gave, and no event twice; the campaigns paid exactly
the cost of their billable events; the spools are written out and gone; ``adnet audit`` passes.
"""

from __future__ import annotations

import asyncio
import itertools
import re
import time
from collections import Counter
from decimal import Decimal
from pathlib import Path

import httpx

from adnet.campaigns.models import Campaign
from adnet.delivery.models import TrackingEvent
from adnet.delivery.spool import SPOOL_DIRECTORY, SUFFIX
from adnet.money import ledger
from tests.postgres_server import PrivatePostgres
from tests.reliability.conftest import (
    AdnetServer,
    books,
    browser_headers,
    http_client,
    impression,
    running_server,
    scaled,
    serve_ads,
    snapshot,
)

SENDERS = 8
BEFORE_SECONDS = scaled(ci=2, full=10)
DOWN_SECONDS = scaled(ci=3, full=30)
AFTER_SECONDS = scaled(ci=3, full=10)
WRITTEN_TIMEOUT = 60.0
SPOOLED = re.compile(r'^adnet_tracking_spooled_events_total\{outcome="spooled"\} (\S+)$', re.M)


class Load:
    """Clients that each serve an ad and report an impression of one served earlier, over and over, until told
    to stop; every answer is kept."""

    def __init__(self, server: AdnetServer, client: httpx.AsyncClient, ads: list[dict]) -> None:
        self.server = server
        self.client = client
        self.ads = ads
        self.acknowledged: dict[str, str] = {}  # event id -> fingerprint
        self.failures: list[str] = []
        self.statuses: Counter[str] = Counter()
        self.spooled = 0.0  # events the workers kept in their spools, once the load ended
        self.stopping = asyncio.Event()
        self._numbers = itertools.count()

    async def sender(self) -> None:
        while not self.stopping.is_set():
            n = next(self._numbers)
            ad = self.ads[n % len(self.ads)]
            headers = browser_headers(ad["client"])
            body = impression(self.server.site_id, ad, f"fp-restart-{n}")
            try:
                served = await self.client.get("/api/serve", params={"siteId": self.server.site_id,
                                                                     "size": "300x250"}, headers=headers)
                tracked = await self.client.post("/api/track", json=body, headers=headers)
            except httpx.HTTPError as error:
                self.failures.append(f"unanswered: {type(error).__name__}: {error}")
                continue
            self.statuses[f"serve {served.status_code}"] += 1
            self.statuses[f"track {tracked.status_code}"] += 1
            if served.status_code != 200:
                self.failures.append(f"serve {served.status_code}: {served.text[:200]}")
            if tracked.status_code != 201:
                self.failures.append(f"track {tracked.status_code}: {tracked.text[:200]}")
            else:
                self.acknowledged[tracked.json()["eventId"]] = body["fingerprint"]

    async def readiness(self) -> None:
        """Ask ``/readyz`` every tenth of a second: a host whose spool keeps events stays in rotation."""
        while not self.stopping.is_set():
            try:
                ready = await self.client.get("/readyz")
            except httpx.HTTPError as error:
                self.failures.append(f"readyz unanswered: {type(error).__name__}")
            else:
                self.statuses[f"readyz {ready.status_code}"] += 1
                if ready.status_code != 200:
                    self.failures.append(f"readyz {ready.status_code}: {ready.text[:200]}")
            await asyncio.sleep(0.1)


async def restart_under_load(server: AdnetServer, postgres: PrivatePostgres) -> Load:
    async with http_client(server, connections_limit=SENDERS + 8) as client:
        ads = await serve_ads(client, server.site_id, 200)
        await asyncio.sleep(1.1)  # in view for a second: billable
        load = Load(server, client, ads)
        tasks = [asyncio.create_task(load.sender()) for _ in range(SENDERS)]
        tasks.append(asyncio.create_task(load.readiness()))
        await asyncio.sleep(BEFORE_SECONDS)
        await asyncio.to_thread(postgres.stop)
        await asyncio.sleep(DOWN_SECONDS)
        await asyncio.to_thread(postgres.start)
        await asyncio.sleep(AFTER_SECONDS)
        load.stopping.set()
        await asyncio.wait_for(asyncio.gather(*tasks), timeout=60)
        load.spooled = await spooled(client)
    return load


async def spooled(client: httpx.AsyncClient) -> float:
    """How many events the server's workers kept in their spools (``/metrics``, every worker's added up)."""
    found = SPOOLED.search((await client.get("/metrics")).text)
    return float(found.group(1)) if found else 0.0


async def written(ids: list[str]) -> None:
    """Wait until every acknowledged event is stored (the spools are written within a second of the database's
    return), or ``WRITTEN_TIMEOUT``."""
    deadline = time.monotonic() + WRITTEN_TIMEOUT
    while time.monotonic() < deadline:
        if await TrackingEvent.filter(id__in=ids).count() == len(ids):
            return
        await asyncio.sleep(0.25)


async def test_a_postgresql_restart_under_load_answers_no_error_and_loses_no_event(tmp_path: Path):
    postgres = PrivatePostgres()
    try:
        postgres.start()
        with running_server(tmp_path, "restart", database_url=postgres.url("adnet_restart")) as server:
            load = await restart_under_load(server, postgres)
            async with books(server):
                await written(list(load.acknowledged))
                stored = dict(await TrackingEvent.filter(id__in=list(load.acknowledged))
                              .values_list("id", "fingerprint"))
                fingerprints = await TrackingEvent.filter(fingerprint__startswith="fp-restart-").values_list(
                    "fingerprint", flat=True)
                costs = await TrackingEvent.filter(billable=True).values_list("campaign_id", "cost")
                campaigns = await Campaign.all().values_list("id", "budget")
                state = await snapshot()

            assert load.failures == [], load.failures[:10]
            assert len(load.acknowledged) > 50, "the load did not reach the server"
            assert load.spooled > 0, "the restart was not met: no event went through a spool"
            assert stored == load.acknowledged, "an acknowledged event is missing or changed"
            assert len(fingerprints) == len(set(fingerprints)), "an event was stored twice"
            spent: dict[str, int] = {}
            for campaign_id, cost in costs:
                spent[campaign_id] = spent.get(campaign_id, 0) + int(Decimal(cost))
            for campaign_id, budget in campaigns:
                key = ledger.campaign(campaign_id)
                remaining = state.balances.get((key.kind, key.owner, key.token), 0)
                assert int(Decimal(budget)) - remaining == spent.get(campaign_id, 0)
            server.audit()
        # Stopped, each worker deleted its spool, which it does only when the spool is empty.
        assert list((tmp_path / SPOOL_DIRECTORY).glob(f"*{SUFFIX}")) == [], "a spool was not written out"
    finally:
        postgres.remove()
    print(f"restart: {len(load.acknowledged)} events acknowledged, {load.spooled:.0f} through the spools, "
          f"all stored once; answers {dict(sorted(load.statuses.items()))}")
