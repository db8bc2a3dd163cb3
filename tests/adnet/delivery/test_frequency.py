"""Serving's frequency counts without HTTP, in both implementations: counted per campaign, viewer and period and
forgotten when the period ends; the process memory bounded however many viewers come, the Redis counters shared
by every process on one Redis, expiring with their period, and read as none while Redis cannot be reached."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest
import redis

from adnet.delivery.frequency import Billed, FrequencyCounts, FrequencyMemory, RedisFrequency

NOON = datetime(2026, 1, 1, 12, 30, tzinfo=UTC)
HOUR = 3600


@pytest.fixture(params=["memory", "redis"])
async def counts(request: pytest.FixtureRequest) -> AsyncIterator[FrequencyCounts]:
    implementation = FrequencyMemory() if request.param == "memory" else RedisFrequency(
        request.getfixturevalue("redis_url"))
    yield implementation
    await implementation.close()


async def test_a_viewer_is_counted_per_campaign_and_period(counts: FrequencyCounts):
    await counts.add([Billed("cmp_a", "viewer-1", HOUR, NOON), Billed("cmp_a", "viewer-1", HOUR, NOON),
                      Billed("cmp_b", "viewer-1", 86_400, NOON), Billed("cmp_a", "viewer-2", HOUR, NOON)])
    await counts.add([Billed("cmp_a", "viewer-1", HOUR, NOON + timedelta(minutes=5))])

    assert await counts.counts("viewer-1", {"cmp_a": HOUR, "cmp_b": 86_400, "cmp_c": HOUR},
                               NOON + timedelta(minutes=20)) == {"cmp_a": 3, "cmp_b": 1}
    assert await counts.counts("viewer-2", {"cmp_a": HOUR, "cmp_b": 86_400}, NOON) == {"cmp_a": 1}
    assert await counts.counts("viewer-3", {"cmp_a": HOUR}, NOON) == {}
    assert await counts.counts("viewer-1", {"cmp_a": HOUR, "cmp_b": 86_400},
                               NOON + timedelta(minutes=30)) == {"cmp_b": 1}  # the next hour, the same day
    assert await counts.counts("viewer-1", {}, NOON) == {}


async def test_processes_on_one_redis_share_their_counts(redis_url):
    billing, serving = RedisFrequency(redis_url), RedisFrequency(redis_url)
    try:
        await billing.add([Billed("cmp_a", "viewer-1", HOUR, NOON)] * 2)
        assert await serving.counts("viewer-1", {"cmp_a": HOUR}, NOON + timedelta(minutes=1)) == {"cmp_a": 2}
    finally:
        await billing.close()
        await serving.close()


async def test_a_redis_counter_expires_when_its_period_ends(redis_url):
    counts = RedisFrequency(redis_url)
    try:
        await counts.add([Billed("cmp_a", "viewer-1", HOUR, NOON), Billed("cmp_a", "viewer-1", HOUR, NOON),
                          Billed("cmp_a", "viewer-1", HOUR, NOON + timedelta(minutes=10))])
    finally:
        await counts.close()
    key = RedisFrequency.key("cmp_a", "viewer-1", NOON, HOUR)
    with redis.Redis.from_url(redis_url) as connection:
        assert int(connection.get(key)) == 3
        assert 19 * 60 < connection.ttl(key) <= 20 * 60  # the hour ends 20 minutes after the latest impression


async def test_without_redis_serving_reads_no_counts_and_nothing_fails():
    unreachable = RedisFrequency("redis://127.0.0.1:1/0")
    try:
        await unreachable.add([Billed("cmp_a", "viewer-1", HOUR, NOON)])
        assert await unreachable.counts("viewer-1", {"cmp_a": HOUR}, NOON) == {}
    finally:
        await unreachable.close()


async def test_the_memory_stays_bounded_and_keeps_todays_periods_first():
    memory = FrequencyMemory(max_entries=3)
    yesterday = NOON - timedelta(days=1)

    async def seen(viewer: str, moment: datetime = NOON) -> bool:
        return await memory.counts(viewer, {"cmp_a": HOUR}, moment) == {"cmp_a": 1}

    await memory.add([Billed("cmp_a", "old", HOUR, yesterday), Billed("cmp_a", "kept-1", HOUR, NOON),
                      Billed("cmp_a", "kept-2", HOUR, NOON)])
    await memory.add([Billed("cmp_a", "new", HOUR, NOON)])  # full: yesterday's period goes
    assert [await seen(viewer) for viewer in ("kept-1", "kept-2", "new")] == [True] * 3
    assert not await seen("old", yesterday)
    await memory.add([Billed("cmp_a", "one-more", HOUR, NOON)])  # full of today's: all go
    assert await seen("one-more")
    assert not await seen("kept-1")
