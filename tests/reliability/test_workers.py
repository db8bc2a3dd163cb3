"""State shared by the workers of a real ``adnet serve --workers 2``: with Redis, a rate limit admits exactly its
count across both workers (kept in each worker's memory, 58-62 of 90 sign-in nonce requests passed a 30-per-minute
limit); and one worker leads the chain watcher, another taking over when the leader dies and its lease lapses."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections import Counter
from collections.abc import Iterator

import pytest

from adnet.jobs.leases import LEASE_SECONDS
from adnet.jobs.models import JobLease
from adnet.jobs.periodic import WATCH_SECONDS, WATCHER_LEASE
from tests.conftest import redis_for_tests
from tests.reliability.conftest import AdnetServer, books, http_client, running_server

REQUESTS = 90
TAKEOVER_TIMEOUT = LEASE_SECONDS + 4 * WATCH_SECONDS + 10


@pytest.fixture(scope="module")
def shared_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AdnetServer]:
    """A two-worker server on the test Redis, with the default sign-in limit of 30 a minute."""
    with running_server(tmp_path_factory.mktemp("adnet-workers"), "workers",
                        extra_env={"ADNET_REDIS_URL": redis_for_tests(), "ADNET_RATE_LIMIT_AUTH": "30/60"}) as server:
        yield server


async def test_a_30_per_minute_limit_admits_exactly_30_across_two_workers(shared_server: AdnetServer,
                                                                          redis_url: str):
    """The Redis is emptied first (``redis_url``), so no count is left from an earlier run."""
    headers = {"X-Forwarded-For": "198.51.100.7"}  # one client, behind the one trusted proxy
    async with http_client(shared_server, connections_limit=REQUESTS) as client:
        async with asyncio.timeout(60):
            responses = await asyncio.gather(*(client.get("/api/auth/nonce", headers=headers)
                                               for _ in range(REQUESTS)))

    assert Counter(response.status_code for response in responses) == {200: 30, 429: 60}
    assert all(int(response.headers["Retry-After"]) >= 1 for response in responses if response.status_code == 429)


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


