"""Reading a JSON body: whole at once, in parts, or never finished (408 once ``BODY_TIMEOUT`` has passed, with
nothing recorded); the private Quart interface that lets a body already arrived be read without a timer; and a
query string read as werkzeug reads it, whether it is split as it stands or decoded."""

from __future__ import annotations

import asyncio
import inspect
import json

import pytest
from quart import Request, Response, request
from quart.wrappers.request import Body
from werkzeug.datastructures import Headers

from adnet.delivery.models import TrackingEvent
from api.http import query_values
from tests.api.test_serve import app_context  # noqa: F401 - autouse: the app as the current app
from tests.api.test_track import event_body, page, served_and_seen, setup_ad


async def test_a_body_sent_in_parts_is_read_whole(app, client, clock):
    site, _, _ = await setup_ad()
    ad = await served_and_seen(client, clock, site)
    payload = json.dumps(event_body(ad, site)).encode()
    async with client.request("/api/track", method="POST",
                              headers={**page(site), "Content-Type": "application/json"}) as connection:
        await connection.send(payload[:40])
        await asyncio.sleep(0.01)
        await connection.send(payload[40:])
        await connection.send_complete()
    response = await connection.as_response()
    assert response.status_code == 201, await response.get_data()
    assert await TrackingEvent.filter(id=(await response.get_json())["eventId"]).exists()


async def test_a_body_that_never_finishes_is_a_timeout_and_records_nothing(app, client, clock):
    site, _, _ = await setup_ad()
    ad = await served_and_seen(client, clock, site)
    payload = json.dumps(event_body(ad, site)).encode()
    async def send_a_part() -> Response:
        async with client.request("/api/track", method="POST",
                                  headers={**page(site), "Content-Type": "application/json"}) as connection:
            await connection.send(payload[:40])
        return await connection.as_response()

    configured, app.config["BODY_TIMEOUT"] = app.config["BODY_TIMEOUT"], 0.2
    try:
        response = await asyncio.wait_for(send_a_part(), timeout=5)
    finally:
        app.config["BODY_TIMEOUT"] = configured
    assert response.status_code == 408
    assert await TrackingEvent.all().count() == 0


def test_quarts_body_still_says_when_it_has_arrived():
    """``api.http.json_body`` reads ``Body._complete`` (an ``asyncio.Event`` set once the last part arrived) to skip
    the timer; awaiting a body must still be waiting for that event."""
    body = Body(None, None)
    assert isinstance(body._complete, asyncio.Event) and not body._complete.is_set(), "Quart's Body._complete changed"
    body.set_complete()
    assert body._complete.is_set(), "Quart's Body.set_complete no longer sets _complete"
    assert "self._complete.wait()" in inspect.getsource(Body.__await__), "Quart's Body no longer awaits _complete"


@pytest.mark.parametrize("query", [
    b"", b"siteId=site_a&size=300x250&placement=bench", b"siteId=first&siteId=second", b"attached&house=&&kind=POLL",
    b"=orphan&a==b&c=d=e", b"placement=side%20bar&keywords=defi%2Cwallets", b"placement=side+bar",
    b"placement=caf%C3%A9", b"placement=%FF%FE", "placement=café".encode(), b"a=%&b=%zz",
])
async def test_a_query_string_reads_as_werkzeug_reads_it(app, query):
    asked = Request("GET", "http", "/api/serve", query, Headers(), "", "1.1", scope={"type": "http"},
                    send_push_promise=None)
    async with app.request_context(asked):
        assert query_values() == request.args.to_dict()
