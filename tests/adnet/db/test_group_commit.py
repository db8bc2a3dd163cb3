"""Group commit's promise: each request is answered after the commit that holds it, a failed batch fails each of
its requests, and stopping commits what is queued."""

import asyncio

import pytest
from prometheus_client import REGISTRY

from adnet.db.group_commit import CommitterStopped, GroupCommitter


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


async def test_depth_sizes_and_waits_reach_the_metrics():
    release = asyncio.Event()

    async def commit(items: list[int]) -> list[int]:
        await release.wait()
        return items

    def sample(name: str) -> float | None:
        return REGISTRY.get_sample_value(name, {"writer": "observed"})

    committer: GroupCommitter[int, int] = GroupCommitter(commit, name="observed", max_size=2)
    committer.start()
    answers = [asyncio.create_task(committer.submit(n)) for n in range(5)]
    await asyncio.sleep(0.01)
    assert sample("adnet_batch_queue_depth") == 3  # two taken into the blocked commit, three waiting
    release.set()
    assert await asyncio.gather(*answers) == list(range(5))

    assert sample("adnet_batch_queue_depth") == 0
    assert (sample("adnet_batch_size_sum"), sample("adnet_batch_size_count")) == (5, 3)
    assert sample("adnet_batch_wait_seconds_count") == 3 and sample("adnet_batch_commit_seconds_sum") > 0
    await committer.stop()
