"""State shared by the workers of a real ``adnet serve --workers 2``: with Redis, a rate limit admits exactly its
count across both workers (kept in each worker's memory, 58-62 of 90 sign-in nonce requests passed a 30-per-minute
limit), and serving's frequency-cap counts are shared, so no worker offers a viewer a campaign it reached its cap
on; and one worker leads the chain watcher, another taking over when the leader dies and its lease lapses."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections import Counter
from collections.abc import Iterator

import pytest

from adnet.campaigns.models import Campaign
from adnet.core import changes
from adnet.delivery.models import TrackingEvent
from adnet.jobs.leases import LEASE_SECONDS
from adnet.jobs.models import JobLease
from adnet.jobs.periodic import WATCH_SECONDS, WATCHER_LEASE
from tests.conftest import redis_for_tests
from tests.reliability.conftest import (
    AdnetServer,
    books,
    browser_headers,
    http_client,
    impression,
    running_server,
    serve_ads,
)

REQUESTS = 90
TAKEOVER_TIMEOUT = LEASE_SECONDS + 4 * WATCH_SECONDS + 10


@pytest.fixture(scope="module")
def shared_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AdnetServer]:
    """A two-worker server on the test Redis, with a sign-in limit of 30 an hour."""
    with running_server(tmp_path_factory.mktemp("adnet-workers"), "workers",
                        extra_env={"ADNET_REDIS_URL": redis_for_tests(), "ADNET_RATE_LIMIT_AUTH": "30/3600"}) as server:
        yield server


async def test_a_30_an_hour_limit_admits_exactly_30_across_two_workers(shared_server: AdnetServer,
                                                                       redis_url: str):
    """The Redis is emptied first (``redis_url``), so no count is left from an earlier run."""
    headers = {"X-Forwarded-For": "198.51.100.7"}  # one client, behind the one trusted proxy
    async with http_client(shared_server, connections_limit=REQUESTS) as client:
        async with asyncio.timeout(60):
            responses = await asyncio.gather(*(client.get("/api/auth/nonce", headers=headers)
                                               for _ in range(REQUESTS)))

    assert Counter(response.status_code for response in responses) == {200: 30, 429: 60}
    assert all(int(response.headers["Retry-After"]) >= 1 for response in responses if response.status_code == 429)


async def test_a_campaign_one_worker_billed_up_to_a_viewers_cap_is_skipped_by_every_worker(shared_server: AdnetServer,
                                                                                            redis_url: str):
    """Serving's frequency counts live in Redis: after one impression of a campaign capped at one per viewer is
    billed (by whichever worker), neither worker offers that campaign to that viewer again, while another viewer
    still gets it from both."""
    site = shared_server.site_id
    async with http_client(shared_server) as client, books(shared_server):
        served = await serve_ads(client, site, 20)
        campaign_id, _ = Counter(ad["campaignId"] for ad in served).most_common(1)[0]
        before = await Campaign.get(id=campaign_id).values_list("frequency_cap", "frequency_hours")
        await set_frequency_cap(redis_url, campaign_id, 1, 24)
        try:
            async def serve(viewer: str, number: int) -> dict:
                address = f"127.{200 + number // 250}.{number % 250}.1"
                response = await client.get("/api/serve", params={"siteId": site, "size": "300x250",
                                                                   "viewer": viewer},
                                            headers=browser_headers(address))
                assert response.status_code == 200, response.text
                return {**response.json().get("ad", {}), "client": address}

            ads = [await serve("viewer-capped", number) for number in range(40)]
            ad = next(ad for ad in ads if ad.get("campaignId") == campaign_id)
            await asyncio.sleep(1.1)  # in view for a second
            tracked = await client.post("/api/track", json=impression(site, ad, "fp-workers-frequency"),
                                        headers=browser_headers(ad["client"]))
            assert (await TrackingEvent.get(id=tracked.json()["eventId"])).billable
            capped = await asyncio.gather(*(serve("viewer-capped", 100 + number) for number in range(60)))
            other = await asyncio.gather(*(serve("viewer-other", 200 + number) for number in range(60)))
        finally:
            await set_frequency_cap(redis_url, campaign_id, *before)

    assert campaign_id not in {ad.get("campaignId") for ad in capped}
    assert campaign_id in {ad.get("campaignId") for ad in other}


async def set_frequency_cap(redis_url: str, campaign_id: str, cap: int | None, hours: int) -> None:
    """Set the campaign's frequency cap and have every worker read it now, as a change announced through Redis."""
    await Campaign.filter(id=campaign_id).update(frequency_cap=cap, frequency_hours=hours)
    broadcast = changes.Broadcast(redis_url, lambda _changed: None)
    await broadcast.start()
    try:
        broadcast.announce(frozenset({campaign_id}))
        await asyncio.sleep(0.5)  # published
    finally:
        await broadcast.stop()
    await asyncio.sleep(0.5)  # heard and read by each worker


async def test_one_worker_leads_the_watcher_and_another_takes_over_when_it_dies(shared_server: AdnetServer):
    async with books(shared_server):
        leader = await leading(shared_server, other_than=None)
        os.kill(pid_of(leader), signal.SIGKILL)
        successor = await leading(shared_server, other_than=leader)

    assert pid_of(successor) != pid_of(leader)
    assert pid_of(successor) in shared_server.worker_pids()


async def leading(server: AdnetServer, other_than: str | None) -> str:
    """The holder of the watcher's lease once a live worker other than ``other_than`` holds it."""
    deadline = time.monotonic() + TAKEOVER_TIMEOUT
    while time.monotonic() < deadline:
        lease = await JobLease.get_or_none(name=WATCHER_LEASE)
        if lease is not None and lease.holder != other_than and pid_of(lease.holder) in server.worker_pids():
            return lease.holder
        await asyncio.sleep(0.2)
    raise AssertionError(f"no worker took the watcher's lease within {TAKEOVER_TIMEOUT:.0f} s: {server.log_tail()}")


def pid_of(holder: str) -> int:
    """The process id in a lease holder (``host:pid:token``)."""
    return int(holder.split(":")[1])


