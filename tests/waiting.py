"""Waiting, in a test, for what a background task of the app (its serving-index job, a writer, a deliverer) makes
true: ``eventually`` asks again every few milliseconds until the answer is truthy. The bound only ends a test that
never sees it; it is generous because the suite shares its machine with other work, and a test that passes does
not wait for it."""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")

NEVER_SECONDS = 15.0


async def eventually(check: Callable[[], T | Awaitable[T]], what: str = "the awaited change",
                     within: float = NEVER_SECONDS) -> T:
    """``check()``'s first truthy answer (awaited when it is a coroutine); AssertionError naming ``what`` when none
    came within ``within`` seconds."""
    deadline = time.monotonic() + within
    while True:
        answer = check()
        if inspect.isawaitable(answer):
            answer = await answer
        if answer:
            return answer
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} never came within {within:.0f} s")
        await asyncio.sleep(0.01)
