"""One process leads a leased job at a time: the others stand by, and one takes over when the leader's lease lapses
or the leader lets it go; the app's chain watcher runs only in the process that leads."""

from __future__ import annotations

import asyncio

import pytest

from adnet.chain.watcher import WatchReport
from adnet.jobs.leases import LEASE_SECONDS, Lease
from adnet.jobs.models import JobLease
from adnet.jobs.periodic import WATCHER_LEASE

pytestmark = pytest.mark.usefixtures("app")  # the database, open and emptied


async def test_one_process_leads_and_renews_while_the_others_stand_by(clock):
    leader, standby = Lease("watch", clock=clock), Lease("watch", clock=clock)

    assert await leader.hold()
    assert not await standby.hold()
    clock.advance(seconds=LEASE_SECONDS - 1)
    assert await leader.hold()  # renewed for another LEASE_SECONDS
    clock.advance(seconds=LEASE_SECONDS - 1)
    assert not await standby.hold()
    assert (await JobLease.get(name="watch")).holder == leader.holder


async def test_another_process_takes_over_when_the_leaders_lease_lapses(clock):
    leader, standby = Lease("watch", clock=clock), Lease("watch", clock=clock)
    assert await leader.hold()

    clock.advance(seconds=LEASE_SECONDS)  # the leader died or hung: it renewed nothing
    assert await standby.hold()
    assert not await leader.hold()  # back, it stands by
    assert (leader.leading, standby.leading) == (False, True)


async def test_a_leader_that_stops_lets_another_lead_at_once(clock):
    leader, standby = Lease("watch", clock=clock), Lease("watch", clock=clock)
    assert await leader.hold()

    await leader.release()
    assert await standby.hold()


async def test_of_many_processes_asking_at_once_exactly_one_leads(clock):
    processes = [Lease("watch", clock=clock) for _ in range(20)]

    leading = await asyncio.gather(*(process.hold() for process in processes))

    assert leading.count(True) == 1


async def test_leases_of_different_jobs_are_apart(clock):
    assert await Lease("watch", clock=clock).hold()
    assert await Lease("retention", clock=clock).hold()


async def test_the_chain_watcher_runs_only_in_the_process_that_leads(services, clock):
    other_process = Lease(WATCHER_LEASE, clock=clock)
    assert await other_process.hold()

    assert await services.jobs.run("chain-watcher") is None
    clock.advance(seconds=LEASE_SECONDS)
    assert isinstance(await services.jobs.run("chain-watcher"), WatchReport)
    assert not await other_process.hold()
