"""Leases: one process, of all the workers and hosts on one database, leads a job that needs running only once at a
time (the chain watcher: every process polling the node repeats the same reads).

A lease is a row of ``job_lease``: its holder and until when it holds. ``Lease.hold`` renews the holder's own lease
or takes a lapsed one with one conditional update, or creates a missing one with an insert that the primary key
lets only one process make: the database decides who leads, on SQLite and PostgreSQL alike. The leader renews on
every run; the others stand by and take over at their first run after it lapsed, when the leader died or hung, or
at once when it stopped (``release``). Holders compare the expiry with their own clocks, so hosts whose clocks
differ take over early or late by as much: a job led this way must stay correct when two processes run it at once
(the watcher's bookings are idempotent). The lease saves repeated work; it guards no money.
"""

from __future__ import annotations

import logging
import os
import secrets
import socket
from collections.abc import Awaitable, Callable
from datetime import timedelta

from tortoise.exceptions import IntegrityError
from tortoise.expressions import Q

from adnet.core.clock import Clock
from adnet.jobs.models import JobLease

log = logging.getLogger(__name__)

LEASE_SECONDS = 10.0


class Lease:
    """This process's claim on the lease ``name``."""

    def __init__(self, name: str, *, clock: Clock, seconds: float = LEASE_SECONDS) -> None:
        self.name = name
        self.clock = clock
        self.seconds = seconds
        self.holder = f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"
        self.leading = False

    async def hold(self) -> bool:
        """Renew the lease when this process holds it, take it when it is missing or lapsed; whether this process
        leads now."""
        now = self.clock.now()
        until = now + timedelta(seconds=self.seconds)
        taken = await JobLease.filter(Q(holder=self.holder) | Q(expires_at__lte=now), name=self.name).update(
            holder=self.holder, expires_at=until)
        if not taken:
            try:
                await JobLease.create(name=self.name, holder=self.holder, expires_at=until)
                taken = 1
            except IntegrityError:  # another process holds it
                pass
        if bool(taken) != self.leading:
            log.info("lease %s lease=%s holder=%s", "taken" if taken else "lost", self.name, self.holder)
        self.leading = bool(taken)
        return self.leading

    async def run(self, job: Callable[[], Awaitable[object]]) -> object | None:
        """Run ``job`` when this process leads (taking or renewing the lease); None while another process does."""
        return await job() if await self.hold() else None

    async def release(self) -> None:
        """Let another process lead at its next run: this one stops."""
        if self.leading:
            await JobLease.filter(name=self.name, holder=self.holder).update(expires_at=self.clock.now())
            self.leading = False
