"""What changes serving through the API is served by the app that made the change as soon as its own index job has
run, woken by the change's announcement: an approval, a pause, a resume, a creative edited back into review and
its approval. Nothing here rebuilds the index, and the index is never rebuilt whole meanwhile (its periodic
rebuild is put off): each change is read alone. How soon a change is served across real processes, in seconds,
is tests/reliability/test_changes.py's."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from adnet.delivery import serving
from tests.api.test_advertisers import (
    approved_campaign,
    operator_api,
    serve,
    settings,  # noqa: F401 - the fixture: settings with the operator
)
from tests.factories import make_site

# The index job runs at once (typically in milliseconds); this bound only ends a test that never sees the change,
# on a machine the suite shares with other work.
NEVER_SECONDS = 5.0


async def served(client, site, wanted: Callable[[dict], bool]) -> None:
    """Wait until the site's serve answer is ``wanted``; fail after ``NEVER_SECONDS``."""
    began = time.monotonic()
    while not wanted(await serve(client, site)):
        assert time.monotonic() - began < NEVER_SECONDS, "the change is not served"
        await asyncio.sleep(0.02)


def banner(body: dict) -> bool:
    return body["kind"] == "BANNER"


def nothing(body: dict) -> bool:
    return body["kind"] == "NONE"


async def test_changes_made_through_the_api_are_served_by_the_same_app_once_its_index_job_ran(client, clock,
                                                                                              banner_cdn, services,
                                                                                              monkeypatch):
    monkeypatch.setattr(serving, "REBUILD_SECONDS", 3600.0)  # no periodic whole rebuild during the test
    site = await make_site()
    built_at = services.serving.index.built_at
    api, campaign, creative = await approved_campaign(client, clock)  # approved by an operator through the API
    cid = campaign["campaignId"]
    operator = await operator_api(client)

    await served(client, site, banner)
    assert (await api.call("POST", f"/advertisers/campaigns/{cid}/pause"))[0] == 200
    await served(client, site, nothing)
    assert (await api.call("POST", f"/advertisers/campaigns/{cid}/resume"))[0] == 200
    await served(client, site, banner)

    status, edited = await api.call("PATCH", f"/advertisers/creatives/{creative['id']}",
                                    targetUrl="https://shop.example/spring")
    assert (status, edited["status"]) == (200, "review")
    await served(client, site, nothing)  # its one creative waits for review
    assert (await operator.call("POST", f"/operators/creatives/{creative['id']}/approve"))[0] == 200
    await served(client, site, banner)
    assert (await serve(client, site))["ad"]["id"] == creative["id"]
    assert services.serving.index.built_at == built_at  # each change was read alone, never the whole index
