"""The rate limiter's memory is bounded by the clients of the last limit period, not by every client ever seen
(quart-rate-limiter's MemoryStore kept every key: the soak run's server grew about 1 MiB a minute)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from api.ratelimit import ExpiringMemoryStore, OwnLimitsFirst


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


async def test_the_apps_limiter_uses_the_expiring_store(app):
    limiters = {getattr(hook, "__self__", None) for hook in app.before_request_funcs[None]}
    [limiter] = [found for found in limiters if isinstance(found, OwnLimitsFirst)]

    assert isinstance(limiter.store, ExpiringMemoryStore)
