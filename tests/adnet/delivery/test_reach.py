"""The reach job (``adnet.delivery.reach.count_new``): it counts each billed impression with a viewer into the
per-viewer daily rows once, whatever runs it again, restarts it, pages it or runs it twice at once; it waits
``SETTLE`` for a batch to commit and counts nothing else (refused events, clicks, impressions without a viewer)."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta

import pytest
from tortoise.exceptions import OperationalError

from adnet.db import sql
from adnet.delivery import reach
from adnet.delivery.models import ReachCursor, ReachViewerDaily, TrackingEvent
from adnet.delivery.reach import SETTLE, count_new, viewer_key
from tests.factories import make_campaign, make_creative, make_site


class Events:
    """Tracking events of one campaign, creative and site, as a batch writes them."""

    def __init__(self, campaign, creative, site) -> None:
        self.campaign, self.creative, self.site = campaign, creative, site
        self.made = 0

    async def add(self, viewer: str | None, recorded_at: datetime, *, received_at: datetime | None = None,
                  billable: bool = True, kind: str = "IMPRESSION") -> None:
        self.made += 1
        await TrackingEvent.create(
            id=f"ev_{recorded_at.timestamp():.0f}_{self.made:06d}", type=kind, campaign=self.campaign,
            creative=self.creative, site=self.site, fingerprint=f"fp_{self.made}", rendered=True,
            viewport_visible=True, billable=billable, refusal_reason=None if billable else "not_viewable",
            received_at=received_at or recorded_at, recorded_at=recorded_at,
            viewer_key=viewer_key(self.campaign.id, viewer) if viewer else None)


@pytest.fixture
async def events(app) -> Events:
    site, campaign = await make_site(), await make_campaign()
    return Events(campaign, await make_creative(campaign), site)


async def counted() -> dict[tuple[str, str], int]:
    rows = await ReachViewerDaily.all().values_list("day", "viewer_key", "impressions")
    return {(day.isoformat(), key): impressions for day, key, impressions in rows}


async def test_billed_impressions_with_a_viewer_are_counted_once_each(events, clock):
    now = clock.now()
    for viewer in ("a", "a", "b"):
        await events.add(viewer, now)
    await events.add(None, now)  # Do-Not-Track: no viewer
    await events.add("a", now, billable=False)
    await events.add("a", now, kind="CLICK")

    assert await count_new(now) == 0  # still settling: a batch of that moment may not have committed yet
    clock.advance(seconds=SETTLE.total_seconds() + 1)
    assert await count_new(clock.now()) == 3
    day = now.date().isoformat()
    assert await counted() == {(day, viewer_key(events.campaign.id, "a")): 2,
                               (day, viewer_key(events.campaign.id, "b")): 1}

    assert await count_new(clock.now()) == 0  # run again: nothing twice
    await events.add("b", clock.now())
    clock.advance(seconds=SETTLE.total_seconds() + 1)
    assert await count_new(clock.now()) == 1
    assert (await counted())[(day, viewer_key(events.campaign.id, "b"))] == 2


async def test_the_day_is_the_day_the_impression_was_received(events, clock):
    received = clock.now().replace(hour=23, minute=59, second=50)
    await events.add("a", received + timedelta(seconds=20), received_at=received)  # written after midnight
    await count_new(received + timedelta(days=1))
    assert await counted() == {(received.date().isoformat(), viewer_key(events.campaign.id, "a")): 1}


async def test_pages_of_one_moment_are_each_counted_once(events, clock):
    now = clock.now()
    for number in range(10):
        await events.add(f"viewer-{number % 4}", now)  # one batch: ten events of one moment
    assert await count_new(now + SETTLE * 2, events_per_pass=3) == 10
    assert sum((await counted()).values()) == 10
    assert await count_new(now + SETTLE * 3, events_per_pass=3) == 0


async def test_a_restart_goes_on_from_the_cursor(events, clock):
    now = clock.now()
    await events.add("a", now)
    await count_new(now + SETTLE * 2)
    cursor = (await ReachCursor.get(name=reach.REACH_LEASE)).recorded_at
    await events.add("a", now + SETTLE * 3)
    # A new process: nothing in memory, only the cursor.
    assert await count_new(now + SETTLE * 5) == 1
    assert (await ReachCursor.get(name=reach.REACH_LEASE)).recorded_at > cursor
    assert list((await counted()).values()) == [2]


async def test_a_pass_that_fails_changes_nothing(events, clock, monkeypatch):
    now = clock.now()
    for viewer in ("a", "b"):
        await events.add(viewer, now)
    original = reach._ADD_REACH
    monkeypatch.setattr(reach, "_ADD_REACH", original.replace("reach_viewer_daily (", "no_such_table ("))
    with pytest.raises(OperationalError):
        await count_new(now + SETTLE * 2)
    assert await counted() == {}
    monkeypatch.setattr(reach, "_ADD_REACH", original)
    assert await count_new(now + SETTLE * 2) == 2
    assert sum((await counted()).values()) == 2


async def test_two_passes_at_once_count_each_event_once(events, clock):
    now = clock.now()
    for number in range(40):
        await events.add(f"viewer-{number % 7}", now + timedelta(milliseconds=number))
    done = await asyncio.gather(*(count_new(now + SETTLE * 2, events_per_pass=5) for _ in range(4)))
    assert sum(done) == 40
    assert sum((await counted()).values()) == 40


async def test_the_cursor_never_moves_back(events, clock):
    now = clock.now()
    await events.add("a", now)
    await count_new(now + SETTLE * 2)
    await count_new(now - timedelta(hours=1))  # a clock that stepped back
    assert await count_new(now + SETTLE * 2) == 0
    assert list((await counted()).values()) == [1]


async def test_no_raw_viewer_id_is_stored(events, clock):
    await events.add("viewer-raw-id", clock.now())
    await count_new(clock.now() + SETTLE * 2)
    stored = await sql.fetch("SELECT viewer_key FROM tracking_event UNION ALL SELECT viewer_key FROM "
                             "reach_viewer_daily")
    assert stored and not any("viewer-raw-id" in str(row["viewer_key"]) for row in stored)
