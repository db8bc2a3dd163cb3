"""Group commit: many requests' writes in one database transaction, each request answered after it committed.

One commit per event would cap tracking near the database's round-trip rate. Instead every request hands its item
to a ``GroupCommitter`` and awaits a future; one background loop gathers what arrived within ``max_delay`` (up to
``max_size`` items), commits them together through ``commit`` and then resolves every future with its own result.
Whatever arrives while a batch commits forms the next batch, so under load batches grow by themselves with the
commit's duration (a few milliseconds) even with ``max_delay`` 0, and a lone request waits for no timer.
A request is therefore acknowledged only once its batch is durable: nothing acknowledged can be lost, and a batch
that fails fails every request in it (nothing of it was kept).
Each batch's size, its oldest item's wait and its commit's duration, and the queue's depth, go to adnet's metrics.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

from adnet.core import metrics
from adnet.core.errors import DomainError
from adnet.db.outage import is_outage

log = logging.getLogger(__name__)

Item = TypeVar("Item")
Result = TypeVar("Result")


class CommitterStopped(RuntimeError):
    """The committer is not running (the app is starting up or shutting down)."""


class GroupCommitter(Generic[Item, Result]):
    """Collects items and commits them in batches; ``commit`` returns one result per item, in order."""

    def __init__(self, commit: Callable[[list[Item]], Awaitable[list[Result]]], *, name: str,
                 max_delay: float = 0.0, max_size: int = 256) -> None:
        self._commit = commit
        self._name = name
        self._max_delay = max_delay
        self._max_size = max_size
        self._queue: deque[tuple[Item, asyncio.Future[Result], float]] = deque()  # item, its answer, queued at
        self._wake = asyncio.Event()
        self._stopping = False
        self._task: asyncio.Task[None] | None = None
        self._depth = metrics.QUEUE_DEPTH.labels(writer=name)

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done() and not self._stopping

    def start(self) -> None:
        """Start the writer loop on the running event loop."""
        if self._task is None or self._task.done():
            self._stopping = False
            self._task = asyncio.get_running_loop().create_task(self._run(), name=f"group-commit-{self._name}")

    async def stop(self) -> None:
        """Refuse new items, commit every item already queued, then end the loop."""
        task = self._task
        if task is None or self._stopping:
            return
        self._stopping = True
        self._wake.set()
        await task

    async def submit(self, item: Item) -> Result:
        """Queue ``item`` and return its result once the batch holding it has committed."""
        if not self.running:
            raise CommitterStopped(f"{self._name} writer is not running")
        future: asyncio.Future[Result] = asyncio.get_running_loop().create_future()
        self._queue.append((item, future, time.monotonic()))
        self._depth.set(len(self._queue))
        self._wake.set()
        return await future

    async def _run(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            if len(self._queue) < self._max_size and not self._stopping:
                await asyncio.sleep(self._max_delay)
            while self._queue:
                await self._commit_batch(self._take())
            if self._stopping:
                return

    def _take(self) -> list[tuple[Item, asyncio.Future[Result], float]]:
        size = min(len(self._queue), self._max_size)
        batch = [self._queue.popleft() for _ in range(size)]
        self._depth.set(len(self._queue))
        return batch

    async def _commit_batch(self, batch: list[tuple[Item, asyncio.Future[Result], float]]) -> None:
        began = time.monotonic()
        metrics.BATCH_SIZE.labels(writer=self._name).observe(len(batch))
        metrics.BATCH_WAIT_SECONDS.labels(writer=self._name).observe(began - batch[0][2])
        try:
            results = await self._commit([item for item, _, _ in batch])
        except Exception as exc:  # every waiting request learns its batch failed; the loop goes on
            # An outage is each request's to report, once per outage (adnet.db.outage); a domain error (such as a
            # full spool's 503) is the requests' answer, not a fault of the writer.
            if not is_outage(exc) and not isinstance(exc, DomainError):
                log.exception("batch commit failed writer=%s size=%d", self._name, len(batch))
            for _, future, _ in batch:
                if not future.done():
                    future.set_exception(exc)
            return
        finally:
            metrics.BATCH_COMMIT_SECONDS.labels(writer=self._name).observe(time.monotonic() - began)
        for (_, future, _), result in zip(batch, results, strict=True):
            if not future.done():
                future.set_result(result)
