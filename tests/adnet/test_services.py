"""A serving process's parts shared with other processes: a change made in one process reaches every other
process's serving index when it is announced, through Redis, or at the change log's next poll without it, without
waiting for its periodic rebuild (an hour here). How soon, on a quiet machine, is the reliability suite's to show
(``tests/reliability/test_changes.py``); here a busy machine has ``ARRIVAL_TIMEOUT``."""

from __future__ import annotations

import asyncio
import random

import pytest
from quart.testing.app import LifespanError

from adnet.app import create_app
from adnet.campaigns import review
from adnet.campaigns.models import CampaignStatus, CreativeStatus
from adnet.core import changes
from adnet.delivery.serving import Server
from adnet.jobs.changelog import POLL_SECONDS, ChangeLog
from adnet.jobs.scheduler import Job, Scheduler
from tests.conftest import empty_database, make_settings
from tests.factories import make_campaign, make_creative, make_site

ARRIVAL_TIMEOUT = 10.0


async def test_a_change_made_in_one_process_is_served_by_another_when_announced(database_url, tmp_path, clock,
                                                                                  redis_url):
    settings = make_settings(database_url, tmp_path, ADNET_REDIS_URL=redis_url)
    app = create_app(settings, clock=clock, rng=random.Random(1))
    async with app.test_app():
        await empty_database()
        running = app.extensions["adnet"]
        # Another process's serving state, whose index is updated only when a change is heard.
        other = Server(clock=clock, rng=random.Random(2), tracking_secret=settings.tracking_secret)
        rebuilt = asyncio.Event()

        async def update() -> None:
            await other.update()
            rebuilt.set()

        other_jobs = Scheduler([Job("serving-index", update, every=3600, wake=other.stale)])
        other_changes = changes.Broadcast(redis_url, other.invalidate)
        await other_changes.start()
        other_jobs.start()
        try:
            await make_site()
            campaign = await make_campaign(status=CampaignStatus.REVIEW)
            await make_creative(campaign, status=CreativeStatus.REVIEW)
            await other.rebuild()
            assert campaign.id not in other.index.campaigns
            built_at = other.index.built_at
            rebuilt.clear()

            changes.listen(running.announce)  # as every request and job of the app does
            await review.approve_campaign("operator", campaign.id, clock.now())
            async with asyncio.timeout(ARRIVAL_TIMEOUT):
                await rebuilt.wait()
        finally:
            await other_jobs.stop()
            await other_changes.stop()

    assert campaign.id in other.index.campaigns
    assert other.index.built_at == built_at  # the approved campaign was read, not the whole index


async def test_without_redis_a_change_made_in_one_process_is_served_by_another_through_the_change_log(
        app, clock):
    """The app's change log writes what it announced (its ``changes`` job, run here as its timer would); another
    process, whose change log and index jobs run on their timers, reads it at its next poll and reads the
    approved campaign alone into its index."""
    running = app.extensions["adnet"]
    other = Server(clock=clock, rng=random.Random(2), tracking_secret=running.settings.tracking_secret)
    other_log = ChangeLog(other.invalidate, clock)
    refreshed = asyncio.Event()

    async def update() -> None:
        await other.update()
        refreshed.set()

    other_jobs = Scheduler([Job("serving-index", update, every=3600, wake=other.stale),
                            Job("changes", other_log.exchange, every=POLL_SECONDS, wake=other_log.due)])
    await make_site()
    campaign = await make_campaign(status=CampaignStatus.REVIEW)
    await make_creative(campaign, status=CreativeStatus.REVIEW)
    await other_log.start()
    await other.rebuild()
    assert campaign.id not in other.index.campaigns
    built_at = other.index.built_at
    other_jobs.start()
    try:
        changes.listen(running.announce)  # as every request and job of the app does
        await review.approve_campaign("operator", campaign.id, clock.now())
        await running.jobs.run("changes")
        async with asyncio.timeout(ARRIVAL_TIMEOUT):
            await refreshed.wait()
    finally:
        await other_jobs.stop()

    assert campaign.id in other.index.campaigns
    assert other.index.built_at == built_at  # the approved campaign was read, not the whole index


async def test_stopping_releases_the_database_even_when_writing_what_it_holds_fails(database_url, tmp_path, clock):
    """A failed last flush (here: the serve counts of a site removed under the server) is raised, and the database
    is still closed, so the next start in this process opens it again."""
    app = create_app(make_settings(database_url, tmp_path), clock=clock, rng=random.Random(1))
    lifespan = app.test_app()
    await lifespan.__aenter__()
    running = app.extensions["adnet"]

    async def failing_flush() -> None:
        raise RuntimeError("FOREIGN KEY constraint failed")

    running.serving.flush_counts = failing_flush
    with pytest.raises(LifespanError, match="FOREIGN KEY"):
        await lifespan.__aexit__(None, None, None)

    again = create_app(make_settings(database_url, tmp_path), clock=clock, rng=random.Random(2))
    async with again.test_app():
        await empty_database()
        assert (await make_site()).id
