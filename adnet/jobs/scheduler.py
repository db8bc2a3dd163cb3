"""The scheduler: every periodic task of a serving process, each in its own loop, none inside a request.

A ``Job`` runs every ``every`` seconds, or as soon as its ``wake`` event is set (the serving index, when a change
is announced). A job never overlaps itself; a failure is logged and the job runs again at its next turn, except a
database outage, which the process's ``DatabaseLink`` reports once for all (``adnet.db.outage``). ``run``
runs one job now and waits for it; jobs named ``on_demand`` run only that way (in tests, which decide when time
has passed). Each run's duration goes to adnet's metrics (``adnet_job_duration_seconds``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Collection, Sequence
from dataclasses import dataclass

from adnet.core import metrics
from adnet.db.outage import DatabaseLink, is_outage

log = logging.getLogger(__name__)
TASK_PREFIX = "job-"  # each job's loop runs in a task named after it: job-fill-counts


@dataclass(frozen=True)
class Job:
    """A named coroutine run periodically."""

    name: str
    run: Callable[[], Awaitable[object]]
    every: float
    wake: asyncio.Event | None = None


class Scheduler:
    """Runs its jobs in the background from ``start`` to ``stop``."""

    def __init__(self, jobs: Sequence[Job], *, on_demand: Collection[str] = (),
                 database: DatabaseLink | None = None) -> None:
        self.jobs = {job.name: job for job in jobs}
        self.on_demand = frozenset(on_demand)
        self.database = database
        self._tasks: list[asyncio.Task[None]] = []

    def start(self) -> None:
        """Start the loop of every job not run on demand, on the running event loop."""
        if not self._tasks:
            self._tasks = [asyncio.create_task(self._loop(job, self.database), name=f"{TASK_PREFIX}{job.name}")
                           for job in self.jobs.values() if job.name not in self.on_demand]

    async def stop(self) -> None:
        """Stop every loop; a job in the middle of a run is cancelled (each job's writes are transactions)."""
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks = []

    async def run(self, name: str) -> object:
        """Run the job ``name`` now and return what it returned."""
        return await self.jobs[name].run()

    @staticmethod
    async def _loop(job: Job, database: DatabaseLink | None) -> None:
        while True:
            if job.wake is None:
                await asyncio.sleep(job.every)
            else:
                # asyncio.timeout, not wait_for: on Python 3.11 wait_for can swallow the cancellation that stops the
                # loop when the event is set at the same moment, and stop() would then wait for ever.
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(job.every):
                        await job.wake.wait()
                job.wake.clear()
            began = time.monotonic()
            try:
                await job.run()
            except Exception as error:  # the job runs again at its next turn
                if database is not None and is_outage(error):
                    database.failed(error)
                else:
                    log.exception("job failed job=%s", job.name)
            finally:
                metrics.JOB_SECONDS.labels(job=job.name).observe(time.monotonic() - began)
