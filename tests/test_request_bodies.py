"""A JSON body that is not UTF-8 is a 400 in the SPEC shape that changes nothing, like malformed JSON (it was a
500: Quart decodes the body outside its JSON error handling)."""

from __future__ import annotations

import pytest

from adnet.delivery.models import TrackingEvent


@pytest.mark.parametrize("body", [b"\xc0", b'{"type": "IMPRESSION\xff"}', b"\x1f\xa8"])
async def test_a_body_that_is_not_utf8_is_refused_as_unreadable(client, body):
    before = await TrackingEvent.all().count()

    response = await client.post("/api/track", data=body, headers={"Content-Type": "application/json"})

    assert response.status_code == 400
    assert await response.get_json() == {"error": "bad_request", "message": "The body is not UTF-8 text."}
    assert await TrackingEvent.all().count() == before


async def test_malformed_json_is_refused_the_same_way(client):
    response = await client.post("/api/track", data=b"{x", headers={"Content-Type": "application/json"})

    assert response.status_code == 400
    assert (await response.get_json())["error"] == "bad_request"
