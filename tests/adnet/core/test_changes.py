"""Announcements of changes: heard in the announcing process at once, and through Redis by every other process."""

from __future__ import annotations

import asyncio

import pytest

from adnet.core import changes


class Heard:
    """A listener that counts what it heard."""

    def __init__(self) -> None:
        self.count = 0
        self._more = asyncio.Event()

    def __call__(self) -> None:
        self.count += 1
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
        processes["a"].announce()
        assert calls["a"].count == 1
        await calls["b"].reaches(1)
        await calls["c"].reaches(1)

        processes["b"].announce()
        await calls["a"].reaches(2)
        await calls["c"].reaches(2)
        await asyncio.sleep(0.05)
    finally:
        for broadcast in processes.values():
            await broadcast.stop()

    assert {name: heard.count for name, heard in calls.items()} == {"a": 2, "b": 2, "c": 2}


async def test_announcements_made_together_are_published_as_one(redis_url):
    calls = {name: Heard() for name in ("a", "b")}
    processes = {name: changes.Broadcast(redis_url, heard) for name, heard in calls.items()}
    for broadcast in processes.values():
        await broadcast.start()
    try:
        for _ in range(10):
            processes["a"].announce()
        await calls["b"].reaches(1)
        await asyncio.sleep(0.1)
    finally:
        for broadcast in processes.values():
            await broadcast.stop()

    assert (calls["a"].count, calls["b"].count) == (10, 1)


@pytest.mark.parametrize("database", [0, 3])
def test_the_channel_is_the_redis_databases_own(database):
    broadcast = changes.Broadcast(f"redis://127.0.0.1:6379/{database}", lambda: None)
    assert broadcast.channel == f"adnet:changes:{database}"
