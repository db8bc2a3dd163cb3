"""The rate limiter's stores: a process's memory, bounded by the clients of the last limit period, not by every
client ever seen (quart-rate-limiter's MemoryStore kept every key: the soak run's server grew about 1 MiB a
minute); Redis, where workers that share it admit exactly a limit's count between them; and the database, for the
limits that guard accounts (``tests/adnet/accounts/test_limits.py`` has its rule)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest
import redis
from quart_rate_limiter import RateLimit

from adnet.core.redis_link import RedisUnavailable
from tests.conftest import make_settings
from web.limits import DatabaseStore, ExpiringMemoryStore, OwnLimitsFirst, RedisStore

THIRTY_A_MINUTE = RateLimit(30, timedelta(minutes=1))


async def test_keys_whose_limit_recovered_are_dropped_and_read_as_new():
    store = ExpiringMemoryStore(sweep_seconds=0)
    now = datetime.now(UTC)
    for number in range(1000):
        await store.set(f"127.0.{number // 250}.{number % 250}", now - timedelta(seconds=1))
    await store.set("203.0.113.9", now + timedelta(minutes=5))

    assert len(store) == 1
    assert await store.get("127.0.0.1", now) == now
    assert await store.get("203.0.113.9", now) == now + timedelta(minutes=5)


async def test_keys_are_kept_until_the_next_sweep():
    store = ExpiringMemoryStore(sweep_seconds=3600)
    past = datetime.now(UTC) - timedelta(seconds=1)
    for number in range(10):
        await store.set(f"key-{number}", past)

    assert len(store) == 10


def limiter_of(app) -> OwnLimitsFirst:
    limiters = {getattr(hook, "__self__", None) for hook in app.before_request_funcs[None]}
    [limiter] = [found for found in limiters if isinstance(found, OwnLimitsFirst)]
    return limiter


async def test_without_redis_the_apps_limiter_keeps_limits_in_memory_and_the_database(app):
    limiter = limiter_of(app)

    assert limiter.redis is None
    assert isinstance(limiter.memory, ExpiringMemoryStore) and isinstance(limiter.database, DatabaseStore)


async def test_with_redis_the_apps_limiter_uses_it(database_url, tmp_path, clock, redis_url):
    from adnet.app import create_app

    app = create_app(make_settings(database_url, tmp_path, ADNET_REDIS_URL=redis_url), clock=clock)

    assert isinstance(limiter_of(app).redis, RedisStore)


async def test_memory_admits_a_limits_count_and_a_refusal_counts_nothing():
    store = ExpiringMemoryStore()
    one_a_minute = RateLimit(1, timedelta(minutes=1))

    admitted = [(await store.admit([("wide", THIRTY_A_MINUTE)])).wait for _ in range(30)]
    assert admitted == [None] * 30
    assert (await store.admit([("wide", THIRTY_A_MINUTE)])).wait == 2  # one slot returns every 2 s

    assert (await store.admit([("fresh", THIRTY_A_MINUTE), ("narrow", one_a_minute)])).wait is None
    assert (await store.admit([("fresh", THIRTY_A_MINUTE), ("narrow", one_a_minute)])).wait == 60
    assert [(await store.admit([("fresh", THIRTY_A_MINUTE)])).wait for _ in range(29)] == [None] * 29


async def test_two_workers_on_one_redis_admit_exactly_the_limit_between_them(redis_url):
    workers = [RedisStore(redis_url), RedisStore(redis_url)]
    for store in workers:
        await store.before_serving()
    try:
        admissions = await asyncio.gather(*(workers[number % 2].admit([("nonce-127.0.0.1", THIRTY_A_MINUTE)])
                                            for number in range(90)))
        other_client = await workers[0].admit([("nonce-203.0.113.9", THIRTY_A_MINUTE)])
    finally:
        for store in workers:
            await store.after_serving()

    answers = [admission.wait for admission in admissions]
    assert answers.count(None) == 30
    assert {wait for wait in answers if wait is not None} <= {1, 2}
    assert other_client.wait is None and 1.9 < other_client.ahead <= 2.0
    assert max(admission.ahead for admission in admissions) == pytest.approx(60, abs=2)


async def test_redis_admits_under_a_limit_too_high_to_reach(redis_url):
    """The reliability suites set 10,000,000 a minute: an interval of 6 µs, which vanishes next to Redis's clock."""
    store = RedisStore(redis_url)
    await store.before_serving()
    try:
        answers = [(await store.admit([("key", RateLimit(10**9, timedelta(minutes=1)))])).wait for _ in range(3)]
    finally:
        await store.after_serving()

    assert answers == [None] * 3


async def test_a_redis_key_lasts_until_its_limit_has_recovered(redis_url):
    store = RedisStore(redis_url)
    await store.before_serving()
    try:
        for _ in range(3):
            await store.admit([("key", THIRTY_A_MINUTE)])
    finally:
        await store.after_serving()

    with redis.Redis.from_url(redis_url) as connection:
        assert 5_000 < connection.pttl(RedisStore.PREFIX + "key") <= 6_000  # 6 s, less the time the test took


async def test_while_redis_is_unreachable_the_store_says_so_and_counts_nothing():
    """The limiter then admits by its store without Redis (``tests/api/test_redis_outage.py``)."""
    store = RedisStore("redis://127.0.0.1:1/0")  # nothing listens on port 1
    await store.before_serving()
    try:
        with pytest.raises(RedisUnavailable):
            await store.admit([("key", THIRTY_A_MINUTE)])
    finally:
        await store.after_serving()

    assert not store.link.reachable
