"""A database outage through HTTP (``tests.outage``: the app's database stops answering the ORM and the tracking
writer as a stopped server or a vanished file does): tracking answers 201 from the host's spool and writes every
event once when the database is back; without a spool, or with a full one, it answers 503 ``database_unavailable``;
a completion answers 503 ``database_unavailable`` with ``Retry-After`` and changes nothing; the outage is logged
once, not per request; readiness (``GET /readyz``) fails only when the event can be kept nowhere."""

from __future__ import annotations

import asyncio
import logging
import shutil
import time
from pathlib import Path

import pytest

from adnet.delivery.models import TrackingEvent
from adnet.money import ledger
from adnet.tasks.models import Completion, TaskKind
from tests.api.test_serve import app_context  # noqa: F401 - autouse: the app as the current app
from tests.api.test_track import CPM, event_body, post, served_and_seen, setup_ad
from tests.conftest import make_settings
from tests.factories import G, make_task, wallet_address
from tests.outage import database_outage

WAIT_SECONDS = 15.0
SPOOL_OFF = {"ADNET_SPOOL_MAX_EVENTS": "0"}


async def written(services, count: int) -> None:
    """Wait until the spool is empty and ``count`` events are stored."""
    deadline = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < deadline:
        if services.tracker.spool.depth == 0 and await TrackingEvent.all().count() == count:
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"spool not written: {services.tracker.spool.depth} left")


@pytest.fixture
def settings(request, database_url, tmp_path):
    """The test settings, with the ``ADNET_*`` overrides a test passes (``indirect`` parametrization)."""
    return make_settings(database_url, tmp_path, **getattr(request, "param", {}))


async def readiness(client) -> tuple[int, list[str]]:
    response = await client.get("/readyz")
    return response.status_code, (await response.get_json())["reasons"]


def lines(caplog, text: str) -> list[logging.LogRecord]:
    return [record for record in caplog.records if text in record.getMessage()]


async def test_tracking_answers_201_during_an_outage_and_writes_each_event_once_after(client, clock, services,
                                                                                      caplog, tmp_path: Path):
    site, campaign, _ = await setup_ad()
    ads = [await served_and_seen(client, clock, site) for _ in range(6)]
    first, first_body = await post(client, event_body(ads[0], site, fingerprint="fp-before"))
    assert first.status_code == 201

    with caplog.at_level(logging.INFO):
        async with database_outage(services):
            answers = [await post(client, event_body(ad, site, fingerprint=f"fp-during-{n}"))
                       for n, ad in enumerate(ads[1:])]
            repeat, repeat_body = await post(client, event_body(ads[1], site, fingerprint="fp-during-0"))
            assert services.tracker.spool.depth == 6
            during = await readiness(client)
        await written(services, 6)

    assert [response.status_code for response, _ in answers] == [201] * 5
    assert repeat.status_code == 201  # a duplicate is told only once the database decides
    ids = [body["eventId"] for _, body in answers]
    stored = await TrackingEvent.filter(id__in=ids).values_list("id", "billable")
    assert sorted(stored) == sorted((event_id, True) for event_id in ids)  # each once, under the id its 201 gave
    assert not await TrackingEvent.filter(id=repeat_body["eventId"]).exists()  # the duplicate was dropped
    assert await ledger.balance(ledger.campaign(campaign.id)) == 100 * G - 6 * (CPM // 1000)
    assert len(lines(caplog, "database unreachable")) == 1
    assert len(lines(caplog, "database reachable again")) == 1
    assert not [record for record in caplog.records if record.exc_info]  # no traceback
    assert first_body["eventId"] not in ids
    assert during == (200, [])  # the spool keeps what the host serves: it stays in rotation


@pytest.mark.parametrize("settings", [SPOOL_OFF, {"ADNET_SPOOL_MAX_EVENTS": "2"}], indirect=True)
async def test_without_a_spool_or_with_a_full_one_tracking_answers_503_with_retry_after(client, clock, services,
                                                                                       settings, caplog):
    site, _, _ = await setup_ad()
    ads = [await served_and_seen(client, clock, site) for _ in range(3)]
    with caplog.at_level(logging.INFO):
        async with database_outage(services):
            answers = [await post(client, event_body(ad, site, fingerprint=f"fp-{n}")) for n, ad in enumerate(ads)]
            during = await readiness(client)
        if services.tracker.spool is not None:
            await written(services, 2)
    kept = settings.spool_max_events
    assert [response.status_code for response, _ in answers] == [201] * kept + [503] * (3 - kept)
    refused = [(response, body) for response, body in answers if response.status_code == 503]
    assert {body["error"] for _, body in refused} == {"database_unavailable"}
    assert all(int(response.headers["Retry-After"]) > 0 for response, _ in refused)
    assert await TrackingEvent.all().count() == kept
    assert during == (503, ["database_unreachable"] + (["spool_full"] if kept else []))
    assert await readiness(client) == (200, [])
    assert len(lines(caplog, "database unreachable")) == 1
    assert not [record for record in caplog.records if record.exc_info]  # no traceback


async def test_an_event_kept_nowhere_answers_503_and_takes_the_host_out_of_rotation(client, clock, services,
                                                                                    caplog):
    """The database away and the spool's disk refusing a write (a full disk): nothing can keep the event."""
    site, _, _ = await setup_ad()
    ad = await served_and_seen(client, clock, site)
    blocked = services.tracker.spool.directory
    shutil.rmtree(blocked, ignore_errors=True)  # the data directory's: empty, no spool holds a file in it
    blocked.write_text("not a directory: the spool cannot make its file here")
    with caplog.at_level(logging.INFO):
        async with database_outage(services):
            response, body = await post(client, event_body(ad, site))
            during = await readiness(client)
    blocked.unlink()

    assert response.status_code == 503 and body["error"] == "database_unavailable"
    assert int(response.headers["Retry-After"]) > 0
    assert during == (503, ["database_unreachable", "disk_unwritable", "tracking_failing"])
    assert not await TrackingEvent.all().exists()
    assert len(lines(caplog, "tracking cannot keep events")) == 1


async def test_a_completion_during_an_outage_answers_503_with_retry_after_and_changes_nothing(client, services,
                                                                                            caplog):
    task = await make_task(kind=TaskKind.QUIZ, config={"question": "Q?", "answers": ["a"]})
    wallet = wallet_address()
    with caplog.at_level(logging.INFO):
        async with database_outage(services):
            response = await client.post("/api/tasks/complete", json={
                "taskId": task.id, "wallet": wallet, "fingerprint": "fp-0001", "proof": {"answer": "a"}})
            again = await client.post("/api/tasks/complete", json={
                "taskId": task.id, "wallet": wallet, "fingerprint": "fp-0001", "proof": {"answer": "a"}})

    body = await response.get_json()
    assert response.status_code == 503 and again.status_code == 503
    assert body["error"] == "database_unavailable" and body["retryAfter"] == int(response.headers["Retry-After"]) > 0
    assert "sqlite" not in str(body).lower() and "nonexistent" not in str(body)
    assert not await Completion.filter(task_id=task.id).exists()
    assert len(lines(caplog, "database unreachable")) == 1
    assert not [record for record in caplog.records if record.exc_info]
    done = await client.post("/api/tasks/complete", json={
        "taskId": task.id, "wallet": wallet, "fingerprint": "fp-0001", "proof": {"answer": "a"}})
    assert done.status_code == 201  # nothing of the refused ones was kept: the wallet's one completion is free
