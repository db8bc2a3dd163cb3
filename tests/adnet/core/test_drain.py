"""The drain's SIGTERM handler: draining at once, the signal handed on to the handler that was there before only
once the drain is over, and a repeated SIGTERM neither handed on early nor prolonging the drain."""

from __future__ import annotations

import asyncio
import signal
import time
from collections.abc import Iterator

import pytest

from adnet.core.drain import Drain


@pytest.fixture
def received() -> Iterator[list[float]]:
    """When the handler in place before the drain's (as uvicorn's is in a worker) got SIGTERM; the process's own
    handler is put back after the test."""
    times: list[float] = []
    original = signal.signal(signal.SIGTERM, lambda signum, frame: times.append(time.monotonic()))
    try:
        yield times
    finally:
        signal.signal(signal.SIGTERM, original)


async def test_sigterm_drains_then_reaches_the_handler_before_it(received: list[float]):
    drain = Drain(seconds=0.3)
    drain.install()
    assert not drain.draining

    sent = time.monotonic()
    signal.raise_signal(signal.SIGTERM)
    await asyncio.sleep(0.1)
    assert drain.draining
    assert received == []
    signal.raise_signal(signal.SIGTERM)  # a second one, mid-drain
    await asyncio.sleep(0.5)

    assert len(received) == 1
    assert received[0] - sent >= 0.3
    signal.raise_signal(signal.SIGTERM)
    assert len(received) == 2  # the earlier handler is back in place: a later SIGTERM reaches it directly


async def test_no_drain_hands_the_signal_on_at_once(received: list[float]):
    drain = Drain(seconds=0)
    drain.install()

    signal.raise_signal(signal.SIGTERM)
    await asyncio.sleep(0.05)

    assert drain.draining
    assert len(received) == 1
