"""What changes serving through the API is served by the app that made the change within a second, by its own
index job woken by the change's announcement (nothing here rebuilds the index): an approval, a pause, a resume, a
creative edited back into review and its approval."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from tests.api.test_advertisers import (
    approved_campaign,
    operator_api,
    serve,
    settings,  # noqa: F401 - the fixture: settings with the operator
)
from tests.factories import make_site

WITHIN_SECONDS = 1.0


async def served_within(client, site, wanted: Callable[[dict], bool]) -> float:
    """How long until the site's serve answer is ``wanted``; fails after ``WITHIN_SECONDS``."""
    began = time.monotonic()
    while not wanted(await serve(client, site)):
        assert time.monotonic() - began < WITHIN_SECONDS, "not served within a second"
        await asyncio.sleep(0.01)
    return time.monotonic() - began


def banner(body: dict) -> bool:
    return body["kind"] == "BANNER"


def nothing(body: dict) -> bool:
    return body["kind"] == "NONE"


async def test_changes_made_through_the_api_are_served_by_the_same_app_within_a_second(client, clock,
                                                                                       banner_cdn):
    site = await make_site()
    api, campaign, creative = await approved_campaign(client, clock)  # approved by an operator through the API
    cid = campaign["campaignId"]
    operator = await operator_api(client)

    await served_within(client, site, banner)
    assert (await api.call("POST", f"/advertisers/campaigns/{cid}/pause"))[0] == 200
    await served_within(client, site, nothing)
    assert (await api.call("POST", f"/advertisers/campaigns/{cid}/resume"))[0] == 200
    await served_within(client, site, banner)

    status, edited = await api.call("PATCH", f"/advertisers/creatives/{creative['id']}",
                                    targetUrl="https://shop.example/spring")
    assert (status, edited["status"]) == (200, "review")
    await served_within(client, site, nothing)  # its one creative waits for review
    assert (await operator.call("POST", f"/operators/creatives/{creative['id']}/approve"))[0] == 200
    await served_within(client, site, banner)
    assert (await serve(client, site))["ad"]["id"] == creative["id"]
