"""A real two-worker ``adnet serve`` whose Redis (a private ``redis-server``) is not there when it starts, comes,
and is killed mid-run: the server starts without it; serving and tracking answer without an error throughout; the
sign-in limit admits exactly its count across both workers whether Redis answers (Redis decides) or not (the
database decides); ``/healthz`` stays 200 and names ``redis_unreachable`` while Redis is away; the log says so at
most once a minute per worker, not once a request; and when Redis comes, the limits use it.

The server runs with ``TZ=America/New_York``, and every line it wrote, its workers' and uvicorn's own included, is
checked last: UTC with an offset, ``key=value`` fields, one line per record (``adnet.core.logs``)."""

from __future__ import annotations

import asyncio
import re
import time
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import httpx
import pytest

from tests.ports import free_port
from tests.redis_server import PrivateRedis
from tests.reliability.conftest import (
    AdnetServer,
    browser_headers,
    http_client,
    impression,
    running_server,
    scaled,
    serve_ads,
)

REQUESTS = 90
LOAD_ROUNDS = scaled(ci=3, full=20)
LINE = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00) level=[A-Z]+ logger=\S+ pid=(\d+) \S")
OUTAGE = re.compile(r"pid=(\d+) redis (unreachable|still unreachable|reachable again) ")


@pytest.fixture(scope="module")
def redis_server() -> Iterator[PrivateRedis]:
    server = PrivateRedis(free_port())
    try:
        yield server
    finally:
        server.kill()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, redis_server: PrivateRedis) -> Iterator[AdnetServer]:
    """Two workers on the private Redis (not started), a sign-in limit of 30 an hour, in New York."""
    with running_server(tmp_path_factory.mktemp("adnet-redis-outage"), "redis_outage",
                        extra_env={"ADNET_REDIS_URL": redis_server.url, "ADNET_RATE_LIMIT_AUTH": "30/3600",
                                   "TZ": "America/New_York"}) as started:
        yield started


async def sign_in_nonces(server: AdnetServer, client_ip: str) -> Counter[int]:
    """The statuses of ``REQUESTS`` concurrent nonce requests from one client (behind the one trusted proxy)."""
    async with http_client(server, connections_limit=REQUESTS) as client:
        async with asyncio.timeout(60):
            responses = await asyncio.gather(*(client.get("/api/auth/nonce", headers={"X-Forwarded-For": client_ip})
                                               for _ in range(REQUESTS)))
    return Counter(response.status_code for response in responses)


async def serve_and_track(server: AdnetServer) -> Counter[int]:
    """Rounds of serves and impressions (each to a client of its own); the statuses of every answer."""
    statuses: Counter[int] = Counter()
    async with http_client(server) as client:
        for round_number in range(LOAD_ROUNDS):
            ads = await serve_ads(client, server.site_id, 20)  # asserts each serve answered 200
            statuses[200] += len(ads)
            tracked = await asyncio.gather(*(
                client.post("/api/track", json=impression(server.site_id, ad, f"fp-outage-{round_number}-{number}"),
                            headers=browser_headers(ad["client"])) for number, ad in enumerate(ads)))
            statuses.update(response.status_code for response in tracked)
    return statuses


def health_reasons(server: AdnetServer, times: int = 12) -> list[tuple[int, tuple[str, ...]]]:
    """``/healthz`` asked ``times`` times, each on a new connection (so both workers answer some)."""
    answers = []
    for _ in range(times):
        response = httpx.get(f"{server.url}/healthz", timeout=10)
        answers.append((response.status_code, tuple(response.json()["reasons"])))
    return answers


def wait_for_health(server: AdnetServer, redis_away: bool, within: float = 30.0) -> list[tuple[int, tuple[str, ...]]]:
    """``/healthz``'s answers once every one of them names ``redis_unreachable`` (``redis_away``) or none does."""
    deadline = time.monotonic() + within
    while True:
        answers = health_reasons(server)
        if all(("redis_unreachable" in reasons) == redis_away for _status, reasons in answers):
            return answers
        if time.monotonic() > deadline:
            raise AssertionError(f"health did not settle: {answers}\n{server.log_tail()}")
        time.sleep(0.5)


def wait_for_log(server: AdnetServer, what: str, count: int, within: float = 30.0) -> str:
    """The server's log once its workers have said ``what`` (an ``OUTAGE`` word) ``count`` times in all: a worker
    that no request reached learns of Redis from its own subscription, a moment later than the one that answered."""
    deadline = time.monotonic() + within
    while True:
        text = (server.data_dir / "server.log").read_text()
        said = [word for _pid, word in OUTAGE.findall(text)].count(what)
        if said >= count:
            return text
        if time.monotonic() > deadline:
            raise AssertionError(f"the workers said {what!r} {said} times, not {count}: {server.log_tail()}")
        time.sleep(0.2)


async def test_it_starts_serves_and_limits_exactly_while_redis_is_not_there(server: AdnetServer):
    answers = wait_for_health(server, redis_away=True)
    served = await serve_and_track(server)
    nonces = await sign_in_nonces(server, "198.51.100.21")

    assert {status for status, _reasons in answers} == {200}
    assert set(served) == {200, 201}
    assert nonces == {200: 30, 429: 60}  # the database decides, for both workers


async def test_when_redis_comes_the_limits_use_it(server: AdnetServer, redis_server: PrivateRedis):
    redis_server.start()
    wait_for_log(server, "reachable again", 2)  # both workers
    answers = wait_for_health(server, redis_away=False)
    nonces = await sign_in_nonces(server, "198.51.100.22")

    assert {status for status, _reasons in answers} == {200}
    assert nonces == {200: 30, 429: 60}
    assert [key for key in redis_server.keys("adnet:rate:*") if key.endswith("-198.51.100.22")]


async def test_when_redis_goes_away_mid_run_nothing_fails_and_health_says_so(server: AdnetServer,
                                                                            redis_server: PrivateRedis):
    redis_server.kill()
    wait_for_log(server, "unreachable", 4)  # both workers, at start and now
    served = await serve_and_track(server)
    answers = wait_for_health(server, redis_away=True)
    nonces = await sign_in_nonces(server, "198.51.100.23")

    assert set(served) == {200, 201}
    assert {status for status, _reasons in answers} == {200}
    assert nonces == {200: 30, 429: 60}


def test_every_line_is_utc_with_fields_and_the_outage_is_said_once_a_minute(server: AdnetServer):
    text = (server.data_dir / "server.log").read_text()
    lines = text.splitlines()

    bad = [line for line in lines if not LINE.match(line)]
    assert bad == [], "\n".join(bad[:20])
    fields = [LINE.match(line).groups() for line in lines]
    stamps = [datetime.fromisoformat(stamp) for stamp, _pid in fields]
    assert all(abs(stamp - datetime.now(UTC)) < timedelta(minutes=30) for stamp in stamps)  # UTC, not New York's
    minutes = (datetime.now(UTC) - stamps[0]).total_seconds() / 60
    assert any("logger=uvicorn.error" in line and "Started server process" in line for line in lines)
    workers = {pid for (_stamp, pid), line in zip(fields, lines, strict=True)
               if "Waiting for application startup" in line}
    assert len(workers) == 2
    said = Counter((pid, what) for pid, what in OUTAGE.findall(text))
    for pid in workers:
        assert said[(pid, "unreachable")] == 2  # at start, and when it was killed
        assert said[(pid, "reachable again")] == 1
        assert said[(pid, "still unreachable")] <= minutes + 1
