"""Announcements of changes: heard in the announcing process at once, and through Redis by every other process."""

from __future__ import annotations

import asyncio

import pytest

from adnet.core import changes
from tests.redis_server import PrivateRedis


class Heard:
    """A listener that keeps what it heard."""

    def __init__(self) -> None:
        self.heard: list[frozenset[str] | None] = []
        self._more = asyncio.Event()

    @property
    def count(self) -> int:
        return len(self.heard)

    def __call__(self, changed: frozenset[str] | None) -> None:
        self.heard.append(changed)
        self._more.set()

    async def reaches(self, count: int, within: float = 1.0) -> None:
        """Wait until it has heard ``count`` announcements; fail after ``within`` seconds."""
        async with asyncio.timeout(within):
            while self.count < count:
                self._more.clear()
                await self._more.wait()


async def test_a_change_reaches_every_other_process_once_and_its_own_at_once(redis_url):
    calls = {name: Heard() for name in ("a", "b", "c")}
    processes = {name: changes.Broadcast(redis_url, heard) for name, heard in calls.items()}
    for broadcast in processes.values():
        await broadcast.start()
    try:
        processes["a"].announce(frozenset({"cmp_one"}))
        assert calls["a"].count == 1
        await calls["b"].reaches(1)
        await calls["c"].reaches(1)

        processes["b"].announce(frozenset({"site_two"}))
        await calls["a"].reaches(2)
        await calls["c"].reaches(2)
        await asyncio.sleep(0.05)
    finally:
        for broadcast in processes.values():
            await broadcast.stop()

    assert {name: heard.heard for name, heard in calls.items()} == {
        "a": [{"cmp_one"}, {"site_two"}], "b": [{"cmp_one"}, {"site_two"}], "c": [{"cmp_one"}, {"site_two"}]}


async def test_announcements_made_together_are_published_as_one(redis_url):
    calls = {name: Heard() for name in ("a", "b")}
    processes = {name: changes.Broadcast(redis_url, heard) for name, heard in calls.items()}
    for broadcast in processes.values():
        await broadcast.start()
    try:
        for number in range(10):
            processes["a"].announce(frozenset({f"cmp_{number}"}))
        await calls["b"].reaches(1)
        await asyncio.sleep(0.1)
    finally:
        for broadcast in processes.values():
            await broadcast.stop()

    assert (calls["a"].count, calls["b"].heard) == (10, [{f"cmp_{number}" for number in range(10)}])


async def test_a_message_not_understood_asks_for_everything(redis_url):
    heard = Heard()
    broadcast = changes.Broadcast(redis_url, heard)
    await broadcast.start()
    try:
        await broadcast._redis.publish(broadcast.channel, b"not json")
        await heard.reaches(1)
    finally:
        await broadcast.stop()

    assert heard.heard == [None]


@pytest.mark.parametrize("database", [0, 3])
def test_the_channel_is_the_redis_databases_own(database):
    broadcast = changes.Broadcast(f"redis://127.0.0.1:6379/{database}", Heard())
    assert broadcast.channel == f"adnet:changes:{database}"


async def test_a_process_starts_without_redis_and_catches_up_when_it_comes(private_redis: PrivateRedis):
    """Started while its Redis does not answer, a process hears its own changes at once, subscribes when Redis
    comes, then hears that anything may have changed (for what it missed) and publishes what it announced."""
    here, there = Heard(), Heard()
    early = changes.Broadcast(private_redis.url, here)
    await early.start()
    try:
        early.announce(frozenset({"cmp_during"}))
        assert here.heard == [{"cmp_during"}] and not early.link.reachable

        private_redis.start()
        await here.reaches(2, within=5)
        assert early.link.reachable
        other = changes.Broadcast(private_redis.url, there)
        await other.start()
        try:
            early.announce(frozenset({"cmp_after"}))
            await there.reaches(1, within=5)
        finally:
            await other.stop()
    finally:
        await early.stop()

    assert here.heard == [{"cmp_during"}, None, {"cmp_after"}]
    assert there.heard[-1] == {"cmp_after"}
