"""Tracking rules without HTTP: the dedup write under concurrent transactions, the group committer's promise,
bot detection, and the per-minute windows."""

import asyncio
from datetime import UTC, datetime, timedelta

import pytest
from tortoise.transactions import in_transaction

from adnet import statements
from adnet.batching import CommitterStopped, GroupCommitter
from adnet.models import DedupKey
from adnet.tracking import DEDUP_WINDOW, MinuteWindow, claim_keys, is_bot

KEY = ("fp-1", "cmp_1", "IMPRESSION")


async def claim(key: tuple[str, str, str], now: datetime) -> bool:
    return key in await statements.transaction(lambda dialect: claim_keys(dialect, [key], now))


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
    async with in_transaction() as connection:
        written = await statements.run(connection, claim_keys(statements.dialect_of(connection), [KEY, other, KEY],
                                                              clock.now()))
    assert written == {KEY, other}
    assert await DedupKey.all().count() == 2


async def test_a_rolled_back_claim_leaves_the_key_free(app, clock):
    with pytest.raises(RuntimeError):
        async with in_transaction() as connection:
            assert await statements.run(connection, claim_keys(statements.dialect_of(connection), [KEY],
                                                               clock.now())) == {KEY}
            raise RuntimeError("the batch failed later")
    assert await claim(KEY, clock.now())


async def test_group_commit_answers_after_the_commit_and_groups_requests():
    committed: list[list[int]] = []

    async def commit(items: list[int]) -> list[int]:
        await asyncio.sleep(0.01)
        committed.append(items)
        return [item * 10 for item in items]

    committer: GroupCommitter[int, int] = GroupCommitter(commit, name="test", max_delay=0.005, max_size=50)
    committer.start()
    results = await asyncio.gather(*(committer.submit(n) for n in range(120)))
    assert results == [n * 10 for n in range(120)]
    assert sorted(item for batch in committed for item in batch) == list(range(120))
    assert len(committed) < 10 and max(len(batch) for batch in committed) == 50
    await committer.stop()
    with pytest.raises(CommitterStopped):
        await committer.submit(1)


async def test_a_failed_batch_fails_each_of_its_requests_and_the_writer_goes_on():
    async def commit(items: list[int]) -> list[int]:
        if 13 in items:
            raise ValueError("constraint")
        return items

    committer: GroupCommitter[int, int] = GroupCommitter(commit, name="test", max_delay=0.005)
    committer.start()
    results = await asyncio.gather(committer.submit(13), committer.submit(14), return_exceptions=True)
    assert all(isinstance(result, ValueError) for result in results)
    assert await committer.submit(15) == 15
    await committer.stop()


async def test_stop_commits_what_is_queued():
    seen: list[int] = []

    async def commit(items: list[int]) -> list[int]:
        seen.extend(items)
        return items

    committer: GroupCommitter[int, int] = GroupCommitter(commit, name="test", max_delay=0.05)
    committer.start()
    pending = [asyncio.ensure_future(committer.submit(n)) for n in range(5)]
    await asyncio.sleep(0)
    await committer.stop()
    assert [await future for future in pending] == list(range(5)) and seen == list(range(5))


@pytest.mark.parametrize(("user_agent", "bot"), [
    ("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 Chrome/131.0 Safari/537.36", False),
    ("Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) Version/17.0 Mobile/15E148 Safari/604.1", False),
    ("Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", True),
    ("Mozilla/5.0 (X11; Linux x86_64) HeadlessChrome/120.0.0.0 Safari/537.36", True),
    ("curl/8.5.0", True),
    ("python-requests/2.32.3", True),
    ("", True),
    ("   ", True),
])
def test_bot_user_agents(user_agent, bot):
    assert is_bot(user_agent) is bot


def test_minute_window_counts_per_key_and_resets():
    window = MinuteWindow(2)
    now = datetime(2026, 1, 1, 12, 0, 5, tzinfo=UTC)
    assert [window.over_limit("a", now) for _ in range(3)] == [False, False, True]
    assert window.over_limit("b", now) is False
    assert window.over_limit("a", now + timedelta(minutes=1)) is False
