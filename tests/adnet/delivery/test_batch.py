"""The tracking batch's deduplication without HTTP: the one conditional write per key, under concurrent
transactions, inside a batch and rolled back."""

import asyncio
from datetime import datetime, timedelta

import pytest
from tortoise.transactions import in_transaction

from adnet.db import sql
from adnet.delivery.batch import DEDUP_WINDOW, claim_keys
from adnet.delivery.models import DedupKey

KEY = ("fp-1", "cmp_1", "IMPRESSION")


async def claim(key: tuple[str, str, str], now: datetime) -> bool:
    return key in await sql.transaction(lambda: claim_keys([key], now))


async def test_dedup_window_is_one_hour(app, clock):
    start = clock.now()
    assert await claim(KEY, start)
    assert not await claim(KEY, start + timedelta(minutes=59))
    assert await claim(KEY, start + timedelta(minutes=61))
    assert not await claim(KEY, start + timedelta(minutes=61, seconds=1))
    row = await DedupKey.get(fingerprint="fp-1")
    assert row.last_accepted_at == start + timedelta(minutes=61)


async def test_exactly_the_window_has_passed(app, clock):
    assert await claim(KEY, clock.now())
    assert await claim(KEY, clock.now() + DEDUP_WINDOW)


async def test_concurrent_transactions_claim_a_key_once(app, clock):
    """Separate transactions (separate connections on PostgreSQL) racing for one key: one wins."""
    results = await asyncio.gather(*(claim(KEY, clock.now()) for _ in range(30)), return_exceptions=True)
    assert [result for result in results if result is True] == [True]
    assert all(result is False or result is True for result in results)
    assert await DedupKey.all().count() == 1


async def test_a_key_named_twice_in_one_write_is_written_once(app, clock):
    other = ("fp-2", "cmp_1", "IMPRESSION")
    async with in_transaction():
        written = await sql.run(claim_keys([KEY, other, KEY], clock.now()))
    assert written == {KEY, other}
    assert await DedupKey.all().count() == 2


async def test_a_rolled_back_claim_leaves_the_key_free(app, clock):
    with pytest.raises(RuntimeError):
        async with in_transaction():
            assert await sql.run(claim_keys([KEY], clock.now())) == {KEY}
            raise RuntimeError("the batch failed later")
    assert await claim(KEY, clock.now())
