"""The public routes are open to every page, in one place: every answer of theirs, refusals and preflights
included, carries ``Access-Control-Allow-Origin: *`` without credentials and exposes ``X-Request-ID`` and
``Retry-After``; an event may come as a beacon's text/plain; the signed-in routes stay closed to other origins."""

from __future__ import annotations

import json

import pytest

from tests.api.test_serve import app_context  # noqa: F401 - autouse: the app as the current app
from tests.api.test_tasks import visit_task
from tests.api.test_tasks_verifiers import sign_task
from tests.api.test_track import event_body, served_and_seen, setup_ad
from tests.factories import wallet_address

PAGE = {"Origin": "https://publisher.example"}
PUBLIC_REFUSALS = [
    ("GET", "/api/serve?siteId=site_unknownunknownunkn", None, 404),
    ("POST", "/api/track", {"type": "CLICK"}, 400),
    ("POST", "/api/tasks/complete", {"taskId": "task_x"}, 400),
    ("GET", "/api/tasks/status", None, 400),
    ("GET", "/api/tasks/task_unknownunknownunkn/message?wallet=0x" + "ab" * 20, None, 404),
    ("GET", "/api/tasks/task_unknownunknownunkn/visit?fingerprint=fp", None, 404),
    ("POST", "/api/interactions", {"taskId": "task_x"}, 400),
    ("POST", "/api/conversions/bind", {"clickId": "x.y"}, 400),
]


def assert_open(response) -> None:
    """Open to any page and kept by no cache, each header written once."""
    headers = response.headers
    assert headers.getlist("Access-Control-Allow-Origin") == ["*"]
    exposed = headers.getlist("Access-Control-Expose-Headers")
    assert len(exposed) == 1
    assert {name.strip().lower() for name in exposed[0].split(",")} == {"x-request-id", "retry-after"}
    assert "Access-Control-Allow-Credentials" not in headers
    assert headers.getlist("Cache-Control") == ["no-store"]


@pytest.mark.parametrize(("method", "path", "body", "status"), PUBLIC_REFUSALS)
async def test_every_public_refusal_is_readable_by_any_page(client, method, path, body, status):
    response = await client.open(path, method=method, json=body, headers=PAGE)
    assert response.status_code == status
    assert_open(response)
    assert (await response.get_json())["error"]


async def test_answers_that_must_not_be_kept_are_open_and_kept_by_no_cache(client, clock):
    """A visit's redirect, a signing message and a rewards sign-in message are what a cache must never give to
    another viewer: the public routes' one hook says so, once."""
    site, _, _ = await setup_ad()
    served = await client.get("/api/serve", query_string={"siteId": site.id}, headers=PAGE)
    visit = await visit_task()
    started = await client.get(f"/api/tasks/{visit.id}/visit", query_string={"fingerprint": "fp-0001"},
                               headers=PAGE)
    signing = await sign_task()
    message = await client.get(f"/api/tasks/{signing.id}/message", query_string={"wallet": wallet_address()},
                               headers=PAGE)
    rewards = await client.post("/api/rewards/message", json={"address": wallet_address()}, headers=PAGE)
    assert [served.status_code, started.status_code, message.status_code, rewards.status_code] == [
        200, 302, 200, 200]
    for response in (served, started, message, rewards):
        assert_open(response)


@pytest.mark.parametrize("path", ["/api/track", "/api/tasks/complete", "/api/interactions", "/api/conversions/bind"])
async def test_a_preflight_allows_a_json_post_from_any_page(client, path):
    response = await client.options(path, headers={**PAGE, "Access-Control-Request-Method": "POST",
                                                   "Access-Control-Request-Headers": "content-type"})
    assert response.status_code == 200
    assert response.headers["Access-Control-Allow-Origin"] == "*"
    assert "POST" in response.headers["Access-Control-Allow-Methods"]
    allowed = {name.strip().lower() for name in response.headers["Access-Control-Allow-Headers"].split(",")}
    assert allowed == {"content-type", "authorization"}  # the bearer token of a rewards session, never a cookie
    assert "Access-Control-Allow-Credentials" not in response.headers
    assert int(response.headers["Access-Control-Max-Age"]) > 0


async def test_refusals_made_before_the_route_are_open_too(client):
    too_big = await client.post("/api/track", data="x" * 70_000, headers={**PAGE, "Content-Type": "text/plain"})
    not_json = await client.post("/api/track", data="a=1",
                                 headers={**PAGE, "Content-Type": "application/x-www-form-urlencoded"})
    assert (too_big.status_code, not_json.status_code) == (413, 415)
    assert_open(too_big)
    assert_open(not_json)


async def test_an_event_sent_as_a_beacon_is_recorded(client, clock):
    site, _, _ = await setup_ad()
    ad = await served_and_seen(client, clock, site)
    response = await client.post("/api/track", data=json.dumps(event_body(ad, site)),
                                 headers={**PAGE, "Content-Type": "text/plain;charset=UTF-8"})
    assert response.status_code == 201 and (await response.get_json())["status"] == "recorded"
    assert_open(response)
    broken = await client.post("/api/track", data="{not json", headers={**PAGE, "Content-Type": "text/plain"})
    assert (broken.status_code, (await broken.get_json())["error"]) == (400, "bad_request")
    assert_open(broken)


async def test_signed_in_routes_are_not_opened_to_other_pages(client):
    for path in ("/api/advertisers/account", "/api/interactions/task_unknownunknownunkn/results", "/healthz"):
        response = await client.get(path, headers=PAGE)
        assert "Access-Control-Allow-Origin" not in response.headers, path
