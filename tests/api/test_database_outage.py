"""A database outage through HTTP (``tests.outage``: the app's database stops answering the ORM and the tracking
writer as a stopped server or a vanished file does): tracking and completions answer 503 ``database_unavailable``
with ``Retry-After`` and change nothing; the outage is logged once, not per request."""

from __future__ import annotations

import logging

from adnet.delivery.models import TrackingEvent
from adnet.tasks.models import Completion, TaskKind
from tests.api.test_serve import app_context  # noqa: F401 - autouse: the app as the current app
from tests.api.test_track import event_body, post, served_and_seen, setup_ad
from tests.factories import make_task, wallet_address
from tests.outage import database_outage


def lines(caplog, text: str) -> list[logging.LogRecord]:
    return [record for record in caplog.records if text in record.getMessage()]


async def test_tracking_during_an_outage_answers_503_with_retry_after(client, clock, services, caplog):
    site, _, _ = await setup_ad()
    ads = [await served_and_seen(client, clock, site) for _ in range(3)]
    with caplog.at_level(logging.INFO):
        async with database_outage(services):
            answers = [await post(client, event_body(ad, site, fingerprint=f"fp-{n}")) for n, ad in enumerate(ads)]
    assert [(response.status_code, body["error"]) for response, body in answers] == [
        (503, "database_unavailable")] * 3
    assert all(int(response.headers["Retry-After"]) > 0 for response, _ in answers)
    assert not await TrackingEvent.all().exists()
    assert len(lines(caplog, "database unreachable")) == 1
    assert not [record for record in caplog.records if record.exc_info]  # no traceback


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
