"""The tracking spool (``adnet.delivery.spool``) without HTTP: events kept whole and in order, a dead worker's
file adopted by the next and never a live one's, the bounds, the disk probe; and the replay of a batch that was
already written (``write_batch(..., replayed=True)``) storing and billing each event once."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from functools import partial
from pathlib import Path

import pytest

from adnet.core.clock import FrozenClock
from adnet.db import sql
from adnet.delivery.batch import write_batch
from adnet.delivery.caps import Caps
from adnet.delivery.clients import Client
from adnet.delivery.commands import TrackEvent
from adnet.delivery.events import PendingEvent
from adnet.delivery.models import EventType, TrackingEvent
from adnet.delivery.spool import SUFFIX, Spool, SpoolFull, decode, encode
from adnet.delivery.tokens import TokenClaims
from adnet.money import ledger
from tests.factories import G, make_campaign, make_creative, make_site

BROWSER = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36"


def pending(clock: FrozenClock, number: int = 0, *, campaign_id: str = "cmp_spooled000001",
            ad_id: str = "ad_spooled0000001", site_id: str = "site_spooled00001", claims: bool = True,
            price: int = 2000) -> PendingEvent:
    reported = TrackEvent(type=EventType.IMPRESSION, campaign_id=campaign_id, ad_id=ad_id, site_id=site_id,
                          fingerprint=f"fp-spool-{number}", rendered=True, viewport_visible=True, render_time=35.5,
                          timestamp=1767225600000, page_url="https://news.example/article", user_agent=BROWSER,
                          tracking_token=None)
    token = TokenClaims(ad_id=ad_id, campaign_id=campaign_id, site_id=site_id, placement="top", size="300x250",
                        wallet="0x" + "ab" * 20, issued_at_ms=1, expires_at_ms=2, click_active=True, off_site=False,
                        client="c0ffee", viewer="viewer-1")
    client = Client(f"10.0.{number % 250}.1", BROWSER, origin="https://news.example")
    return PendingEvent(reported=reported, client=client, received_at=clock.now(), price=price, reason=None,
                        claims=token if claims else None, token_ref=f"ref-{number}", country="DE", device="desktop")


def spool_in(directory: Path, clock: FrozenClock, *, max_events: int = 1000, max_seconds: int = 3600) -> Spool:
    return Spool(directory, max_events=max_events, max_seconds=max_seconds, now=clock.now)


def test_an_event_comes_back_from_the_spool_as_it_went_in(clock):
    for event in (pending(clock), pending(clock, 2, claims=False)):
        assert decode(encode(event)) == event


async def test_events_are_taken_in_order_and_kept_until_removed(tmp_path, clock):
    spool = spool_in(tmp_path, clock)
    events = [pending(clock, number) for number in range(5)]
    await spool.append(events[:2])
    await spool.append(events[2:])
    assert spool.depth == 5 and spool.holds_own

    first = await spool.take(3)
    assert first is not None and [event.event_id for event in first.events] == [e.event_id for e in events[:3]]
    again = await spool.take(3)  # taken is not removed: a batch that fails is taken again
    assert again is not None and again.positions == first.positions
    await spool.remove(first)
    rest = await spool.take(10)
    assert rest is not None and [event.event_id for event in rest.events] == [e.event_id for e in events[3:]]
    await spool.remove(rest)
    assert spool.depth == 0 and not spool.holds_own and await spool.take(10) is None
    await spool.close()
    assert list(tmp_path.iterdir()) == []  # an empty spool leaves nothing behind


async def test_a_spool_left_with_events_is_adopted_by_the_next_worker_and_never_while_its_worker_lives(tmp_path,
                                                                                                     clock):
    ended, live, next_worker = spool_in(tmp_path, clock), spool_in(tmp_path, clock), spool_in(tmp_path, clock)
    await ended.append([pending(clock, 1), pending(clock, 2)])
    await live.append([pending(clock, 3)])
    await ended.close()  # its worker stops while the database is away: the file stays, unlocked

    await next_worker.adopt_orphans()
    assert next_worker.depth == 2 and not next_worker.holds_own  # the live worker's file is not taken
    batch = await next_worker.take(10)
    assert batch is not None and [event.reported.fingerprint for event in batch.events] == ["fp-spool-1",
                                                                                            "fp-spool-2"]
    await next_worker.remove(batch)
    assert next_worker.depth == 0
    assert len(list(tmp_path.glob(f"*{SUFFIX}"))) == 1  # the adopted file, written out, is deleted
    await next_worker.adopt_orphans()
    assert next_worker.depth == 0  # still not the live worker's
    await live.close()
    await next_worker.close()


async def test_the_spool_refuses_events_past_its_size_or_its_age(tmp_path, clock):
    spool = spool_in(tmp_path, clock, max_events=3, max_seconds=600)
    await spool.append([pending(clock, 1), pending(clock, 2)])
    with pytest.raises(SpoolFull):
        await spool.append([pending(clock, 3), pending(clock, 4)])
    assert spool.depth == 2 and not spool.full
    await spool.append([pending(clock, 3)])
    assert spool.full
    batch = await spool.take(1)
    assert batch is not None
    await spool.remove(batch)
    clock.advance(seconds=600)
    assert spool.full and spool.oldest_seconds == 600
    with pytest.raises(SpoolFull):
        await spool.append([pending(clock, 5)])
    assert spool.figures() == {"events": 2, "oldestSeconds": 600.0, "maxEvents": 3, "maxSeconds": 600}
    await spool.close()


async def test_the_probe_fails_where_the_directory_cannot_take_a_file(tmp_path, clock):
    writable = spool_in(tmp_path / "spool", clock)
    assert await writable.writable()
    (tmp_path / "file").write_text("not a directory")  # refused even to root, unlike permissions
    blocked = spool_in(tmp_path / "file" / "spool", clock)
    assert not await blocked.writable()
    with pytest.raises(OSError):
        await blocked.append([pending(clock)])
    assert blocked.depth == 0


async def test_a_replayed_batch_stores_and_bills_each_event_once(app, clock, settings):
    """A worker wrote a batch from the spool and died before removing it: the next writes it again, later than the
    deduplication window, and finds it stored."""
    site = await make_site()
    campaign = await make_campaign(cpm=2 * G)
    creative = await make_creative(campaign)
    events = [pending(clock, number, campaign_id=campaign.id, ad_id=creative.id, site_id=site.id, claims=False,
                      price=2 * G // 1000) for number in range(3)]
    caps = Caps.of(settings)

    async def write(batch: list[PendingEvent], *, replayed: bool):
        program = partial(write_batch, batch, clock.now(), settings.publisher_share_bps, caps, single_writer=True,
                          replayed=replayed)
        return await sql.transaction(program)

    first, _ = await write(events, replayed=True)  # nothing stored yet: written as any batch
    clock.advance(hours=2)
    fresh = replace(pending(clock, 9, campaign_id=campaign.id, ad_id=creative.id, site_id=site.id, claims=False,
                            price=2 * G // 1000), received_at=clock.now() - timedelta(seconds=1))
    again, spent = await write([*events, fresh], replayed=True)

    assert [result.event_id for result in first] == [event.event_id for event in events]
    assert [(result.status, result.event_id) for result in again] == [
        ("recorded", event.event_id) for event in (*events, fresh)]
    assert await TrackingEvent.all().count() == 4
    assert spent == {campaign.id: 2 * G // 1000}  # only the fresh event was billed by the replay
    assert await ledger.balance(ledger.campaign(campaign.id)) == 100 * G - 4 * (2 * G // 1000)
