"""The scheduler runs each job by itself, periodically and when woken, never overlapping it, and stops."""

import asyncio

from adnet.jobs.scheduler import Job, Scheduler


async def test_a_job_runs_periodically_and_when_woken_and_a_failure_does_not_stop_it():
    runs: list[str] = []
    wake = asyncio.Event()

    async def index() -> None:
        runs.append("index")

    async def failing() -> None:
        runs.append("failing")
        raise RuntimeError("the database is down")

    scheduler = Scheduler([Job("index", index, every=60, wake=wake), Job("failing", failing, every=0.01)])
    scheduler.start()
    await asyncio.sleep(0.05)
    assert runs.count("index") == 0 and runs.count("failing") >= 2
    wake.set()
    await asyncio.sleep(0.01)
    assert runs.count("index") == 1
    await scheduler.stop()


async def test_jobs_on_demand_run_only_when_asked():
    runs: list[int] = []

    async def settle() -> int:
        runs.append(1)
        return len(runs)

    scheduler = Scheduler([Job("settle", settle, every=0.001)], on_demand={"settle"})
    scheduler.start()
    await asyncio.sleep(0.02)
    assert runs == []
    assert await scheduler.run("settle") == 1
    await scheduler.stop()


async def test_stop_ends_a_loop_woken_at_the_same_moment():
    """A wake-up and the stop's cancellation in the same turn of the event loop must not keep the loop alive (with
    ``asyncio.wait_for`` on Python 3.11 the cancellation was swallowed and stop() waited for ever)."""
    wake = asyncio.Event()

    async def nothing() -> None:
        pass

    scheduler = Scheduler([Job("index", nothing, every=60, wake=wake)])
    scheduler.start()
    await asyncio.sleep(0)
    wake.set()
    async with asyncio.timeout(2):
        await scheduler.stop()
