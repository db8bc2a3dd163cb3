"""Rate limits in the database, without HTTP: the GCRA of the other stores (a limit's count at once, then one every
interval), decided and counted by one conditional upsert, so concurrent requests admit exactly the count; a
refusal counts against no limit; keys are stored hashed and swept once their limit has recovered."""

from __future__ import annotations

import asyncio

import pytest

from adnet.accounts import limits
from adnet.accounts.limits import MICROSECONDS, Limit
from adnet.accounts.models import RateLimitState

pytestmark = pytest.mark.usefixtures("app")  # the database, open and emptied

NOW = 1_800_000_000 * MICROSECONDS
SECOND = MICROSECONDS


def thirty_a_minute(key: str = "nonce-198.51.100.7") -> Limit:
    return Limit.of(key, 30, 60)


async def waits(limit: Limit, count: int, at: int = NOW) -> list[float | None]:
    return [(await limits.admit([limit], at)).wait for _ in range(count)]


async def test_a_limit_admits_its_count_then_one_every_interval():
    limit = thirty_a_minute()

    assert await waits(limit, 30) == [None] * 30
    assert await waits(limit, 3) == [2.0] * 3  # one slot returns every 2 s
    assert await waits(limit, 1, NOW + 1 * SECOND) == [1.0]
    assert await waits(limit, 2, NOW + 2 * SECOND) == [None, 2.0]
    assert await waits(limit, 31, NOW + 62 * SECOND) == [None] * 30 + [2.0]  # fully recovered


async def test_the_answer_says_how_far_the_limit_stands_ahead():
    limit = thirty_a_minute()

    first = await limits.admit([limit], NOW)
    for _ in range(28):
        await limits.admit([limit], NOW)
    last = await limits.admit([limit], NOW)
    refused = await limits.admit([limit], NOW)

    assert (first.wait, first.ahead) == (None, 2.0)
    assert (last.wait, last.ahead) == (None, 60.0)
    assert (refused.wait, refused.ahead) == (2.0, 60.0)


async def test_concurrent_requests_admit_exactly_the_count():
    limit = thirty_a_minute()

    answers = await asyncio.gather(*(limits.admit([limit], NOW) for _ in range(90)))

    assert [answer.wait for answer in answers].count(None) == 30


async def test_clients_and_limits_count_apart():
    assert await waits(thirty_a_minute("nonce-198.51.100.7"), 31) == [None] * 30 + [2.0]
    assert await waits(thirty_a_minute("nonce-203.0.113.9"), 1) == [None]
    assert await waits(Limit.of("verify-198.51.100.7", 30, 60), 1) == [None]


async def test_a_refusal_by_one_limit_counts_against_none():
    wide, narrow = thirty_a_minute("wide"), Limit.of("narrow", 1, 60)

    assert (await limits.admit([wide, narrow], NOW)).wait is None
    refused = await limits.admit([wide, narrow], NOW)

    assert refused.wait == 60.0 and refused.ahead == 2.0  # where the wide limit stood before
    assert await waits(wide, 29) == [None] * 29  # the refused request took none of its 30


async def test_an_interval_that_does_not_divide_evenly_admits_exactly_the_count():
    assert await waits(Limit.of("odd", 7, 60), 8) == [None] * 7 + [pytest.approx(60 / 7, abs=1e-6)]
    assert await waits(Limit.of("fine", 10_000_000, 60), 3) == [None] * 3


async def test_keys_are_stored_hashed_and_swept_when_their_limit_has_recovered():
    await limits.admit([thirty_a_minute("a" * 500)], NOW)
    await limits.admit([Limit.of("recent", 30, 60)], NOW + 10 * SECOND)

    assert {len(state.key) for state in await RateLimitState.all()} == {64}
    assert await limits.sweep(NOW + 2 * SECOND + 1) == 1  # one request of 30/60 is forgotten after 2 s
    assert await RateLimitState.all().count() == 1
    assert await waits(thirty_a_minute("a" * 500), 30, NOW + 3 * SECOND) == [None] * 30
