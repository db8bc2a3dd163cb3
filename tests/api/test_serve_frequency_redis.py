"""Frequency caps through HTTP with Redis (``ADNET_REDIS_URL``): the counts serving reads are shared by every process
on one Redis, so a process skips a campaign for a viewer another process billed up to the cap."""

from __future__ import annotations

import random

from adnet.app import create_app
from tests.api.test_serve_frequency import kind_served
from tests.api.test_track import billed, event_body, post, serve_ad
from tests.conftest import empty_database, make_settings, rebuild_index
from tests.factories import make_campaign, make_creative, make_site
from tests.sql import recorded_statements


async def test_another_process_on_the_same_redis_skips_what_one_billed_up_to_the_cap(
        database_url, tmp_path, clock, redis_url):
    """Two apps on one database and one Redis, one after the other (the ORM holds one app's database per process):
    the second, whose own memory is empty, no longer offers the campaign to the viewer the first billed it to."""
    settings = make_settings(database_url, tmp_path, ADNET_REDIS_URL=redis_url)
    billing = create_app(settings, clock=clock, rng=random.Random(1))
    async with billing.test_app() as running:
        await empty_database()
        site = await make_site()
        capped = await make_campaign(frequency_cap=2, frequency_hours=24, site_allow=[site.id])
        await make_creative(capped)
        await rebuild_index(running.app)
        client = running.test_client()
        for number in range(2):
            ad = await serve_ad(client, site, viewer="viewer-a")
            clock.advance(seconds=2)
            assert await billed((await post(client, event_body(ad, site, fingerprint=f"fp-{number}")))[1])

    serving = create_app(settings, clock=clock, rng=random.Random(2))
    async with serving.test_app() as running:
        client = running.test_client()
        with recorded_statements() as queries:
            assert await kind_served(client, site, viewer="viewer-a") == "NONE"
            assert await kind_served(client, site, viewer="viewer-b") == capped.id
        assert queries == []
        clock.advance(days=1)
        assert await kind_served(client, site, viewer="viewer-a") == capped.id  # the next period
