"""A Redis outage degrades, never breaks: with ``ADNET_REDIS_URL`` naming a Redis that does not answer, the app
starts, serves and tracks without an error, keeps the limits that guard accounts exact in the database and the
public one in its memory, says so in one log line (not one per request), and ``/healthz`` names
``redis_unreachable`` while still answering 200; when Redis comes back, the limits use it again.
``tests/reliability/test_redis_outage.py`` does the same to a real ``adnet serve``."""

from __future__ import annotations

import asyncio
import logging
import random

import pytest

from adnet.accounts.models import RateLimitState
from adnet.app import create_app
from tests.api.test_track import billed, event_body, post, serve_ad
from tests.conftest import empty_database, make_settings, rebuild_index
from tests.factories import make_campaign, make_creative, make_site
from tests.ports import free_port
from tests.redis_server import PrivateRedis

LINK_LOGGER = "adnet.core.redis_link"


def outage_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [record.getMessage().split(" where=")[0] for record in caplog.records if record.name == LINK_LOGGER]


async def started(app) -> tuple:
    """The test's site and a campaign capped per viewer (so serving asks Redis for counts), on an emptied database
    whose health the job has checked."""
    await empty_database()
    site = await make_site()
    campaign = await make_campaign(site_allow=[site.id], frequency_cap=5, frequency_hours=24)
    await make_creative(campaign)
    await rebuild_index(app)
    await app.extensions["adnet"].jobs.run("health")
    return site, campaign


async def serve_and_track(client, clock, site, count: int, viewers: str = "viewer") -> None:
    """``count`` ads served to viewers of their own and their impressions tracked: every answer a success."""
    for number in range(count):
        ad = await serve_ad(client, site, viewer=f"{viewers}-{number}")
        clock.advance(seconds=2)
        response, body = await post(client, event_body(ad, site, fingerprint=f"fp-{viewers}-{number}"))
        assert response.status_code == 201, body
        assert await billed(body)


async def health(client) -> tuple[int, dict]:
    response = await client.get("/healthz")
    return response.status_code, await response.get_json()


async def nonces(client, address: str, count: int) -> list[int]:
    return [(await client.get("/api/auth/nonce", scope_base={"client": (address, 4000)})).status_code
            for _ in range(count)]


async def test_a_redis_that_never_answered_costs_nothing_but_one_log_line(database_url, tmp_path, clock,
                                                                           caplog: pytest.LogCaptureFixture):
    caplog.set_level(logging.INFO)
    settings = make_settings(database_url, tmp_path, ADNET_REDIS_URL=f"redis://127.0.0.1:{free_port()}/0",
                             ADNET_RATE_LIMIT_AUTH="3/60")
    app = create_app(settings, clock=clock, rng=random.Random(1))
    async with app.test_app() as running:
        site, _campaign = await started(running.app)
        client = running.test_client()
        await serve_and_track(client, clock, site, 20)
        status, body = await health(client)
        signing_in = await nonces(client, "198.51.100.7", 4)
        kept = await RateLimitState.all().count()

    assert (status, body["status"], body["reasons"]) == (200, "degraded", ["redis_unreachable"])
    assert signing_in == [200, 200, 200, 429]  # the database's limit
    assert kept == 1
    assert outage_lines(caplog) == ["redis unreachable"]


async def test_when_redis_goes_away_the_app_does_without_and_uses_it_again_when_it_returns(
        database_url, tmp_path, clock, private_redis: PrivateRedis, caplog: pytest.LogCaptureFixture):
    caplog.set_level(logging.INFO)
    private_redis.start()
    settings = make_settings(database_url, tmp_path, ADNET_REDIS_URL=private_redis.url, ADNET_RATE_LIMIT_AUTH="3/60",
                             ADNET_RATE_LIMIT_PUBLIC="1000/60")
    app = create_app(settings, clock=clock, rng=random.Random(2))
    async with app.test_app() as running:
        site, _campaign = await started(running.app)
        client = running.test_client()
        assert await nonces(client, "198.51.100.1", 1) == [200]
        in_redis = private_redis.keys("adnet:rate:*")

        private_redis.kill()
        await serve_and_track(client, clock, site, 20)
        during = await health(client)
        signing_in = await nonces(client, "198.51.100.2", 4)
        kept = await RateLimitState.all().count()

        private_redis.start()
        after = await recovered(client)
        assert await nonces(client, "198.51.100.3", 1) == [200]
        in_redis_again = private_redis.keys("adnet:rate:*")
        await serve_and_track(client, clock, site, 3, viewers="after")

    assert [key for key in in_redis if key.endswith("-198.51.100.1")]
    assert (during[0], during[1]["reasons"]) == (200, ["redis_unreachable"])
    assert signing_in == [200, 200, 200, 429] and kept == 1
    assert after == (200, [])
    assert [key for key in in_redis_again if key.endswith("-198.51.100.3")]
    assert outage_lines(caplog) == ["redis unreachable", "redis reachable again"]


async def recovered(client, within: float = 10.0) -> tuple[int, list[str]]:
    """``/healthz``'s status and reasons once Redis is no longer among them (the changes' subscriber finds it back
    within a second), or after ``within`` seconds."""
    async with asyncio.timeout(within):
        while True:
            status, body = await health(client)
            if "redis_unreachable" not in body["reasons"]:
                return status, body["reasons"]
            await asyncio.sleep(0.1)
