"""A process's view of its Redis: a failed call makes it unreachable and rests the link, so requests do not each
try; an outage is logged once and then at most once a minute, however many calls fail; the first call that
succeeds ends it, with one line."""

from __future__ import annotations

import logging

import pytest
from redis.exceptions import ConnectionError as RedisConnectionError

from adnet.core.redis_link import RETRY_SECONDS, RedisLink, RedisUnavailable


class Ticking:
    """A monotonic clock moved by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class FlakyRedis:
    """An operation that fails while ``down`` and counts its calls."""

    def __init__(self) -> None:
        self.down = False
        self.calls = 0

    async def __call__(self) -> str:
        self.calls += 1
        if self.down:
            raise RedisConnectionError("Error 111 connecting to 127.0.0.1:6390. Connection refused.")
        return "PONG"


def lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [record.getMessage() for record in caplog.records if record.name == "adnet.core.redis_link"]


async def test_an_outage_is_logged_once_a_minute_and_its_end_once(caplog: pytest.LogCaptureFixture):
    caplog.set_level(logging.INFO)
    clock, redis = Ticking(), FlakyRedis()
    link = RedisLink("redis://:secret@127.0.0.1:6390/7", now=clock)
    assert await link.call(redis) == "PONG"

    redis.down = True
    failures = 0
    for _ in range(150):  # two and a half minutes, ten calls a second
        for _ in range(10):
            with pytest.raises(RedisUnavailable):
                await link.call(redis)
            failures += 1
        clock.now += 1
        assert not link.reachable
    redis.down = False
    clock.now += RETRY_SECONDS
    assert await link.call(redis) == "PONG"

    reported = lines(caplog)
    assert link.reachable
    assert [line.split(" where=")[0] for line in reported] == [
        "redis unreachable", "redis still unreachable", "redis still unreachable", "redis reachable again"]
    assert all("where=127.0.0.1:6390/7" in line and "secret" not in line for line in reported)
    assert "down_seconds=60 failed_tries=60" in reported[1]
    assert "down_seconds=151" in reported[-1]
    assert redis.calls == 1 + 150 + 1  # while resting, a call does not reach Redis: once a second
    assert failures == 1500


async def test_a_call_after_the_rest_tries_redis_again():
    clock, redis = Ticking(), FlakyRedis()
    link = RedisLink("redis://127.0.0.1:6390/0", now=clock)
    redis.down = True
    with pytest.raises(RedisUnavailable):
        await link.call(redis)
    redis.down = False

    with pytest.raises(RedisUnavailable):
        await link.call(redis)  # resting
    clock.now += RETRY_SECONDS
    assert await link.call(redis) == "PONG"
    assert redis.calls == 2


async def test_news_that_redis_answers_ends_the_rest_at_once():
    """The changes' subscriber tells the link when it gets through; every user tries Redis again at once."""
    clock, redis = Ticking(), FlakyRedis()
    link = RedisLink("unix:///run/redis.sock", now=clock)
    link.failed(OSError("gone"))
    link.answered()

    assert await link.call(redis) == "PONG"
    assert link.where == "/run/redis.sock"

