"""A change made outside the serving processes is served within the documented time (docs/architecture.md,
"Several workers and hosts"): ``adnet operators approve``, a process of its own, approves a campaign in review,
and every worker of a real ``adnet serve --workers 2`` serves it within two seconds without Redis (through the
database's change log) and within a second with Redis, far sooner than their periodic rebuild of the whole index
(``REBUILD_SECONDS``)."""

from __future__ import annotations

import time
from collections.abc import Iterator

import httpx
import pytest

from adnet.campaigns.models import CampaignStatus, CreativeStatus
from adnet.delivery.index import REBUILD_SECONDS
from adnet.jobs.changelog import POLL_SECONDS
from tests.conftest import redis_for_tests
from tests.factories import make_campaign, make_creative
from tests.reliability.conftest import AdnetServer, books, browser_headers, run_coroutine, running_server

# Served by every worker within: the change log's poll and an index refresh without Redis, a second with it.
SERVED_WITHIN = {"changelog": POLL_SECONDS + 1.0, "redis": 1.0}
# A size no demo campaign has, so that only the approved campaign answers it.
SIZE = (160, 600)
# Fresh connections per check: the two workers share the listening socket and each takes some of them.
CONNECTIONS = 8


@pytest.fixture(scope="module", params=sorted(SERVED_WITHIN))
def travelling(request: pytest.FixtureRequest,
               tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, AdnetServer]]:
    """How changes travel ("changelog": no Redis; "redis": the test Redis), and a two-worker server so set up."""
    extra_env = {"ADNET_REDIS_URL": redis_for_tests()} if request.param == "redis" else {}
    with running_server(tmp_path_factory.mktemp(f"adnet-changes-{request.param}"), f"changes_{request.param}",
                        extra_env=extra_env) as running:
        yield request.param, running


def served_campaigns(server: AdnetServer, number: int) -> set[str | None]:
    """The campaigns ``CONNECTIONS`` serve requests for the rare size got, each on a connection of its own."""
    found: set[str | None] = set()
    for connection in range(CONNECTIONS):
        address = f"127.200.{number % 250}.{connection + 1}"
        with httpx.Client(base_url=server.url, timeout=10) as client:
            body = client.get("/api/serve", params={"siteId": server.site_id, "size": f"{SIZE[0]}x{SIZE[1]}"},
                              headers=browser_headers(address)).json()
        found.add((body.get("ad") or {}).get("campaignId"))
    return found


async def campaign_in_review(server: AdnetServer) -> str:
    """A funded campaign with one creative of the rare size, both in review, written to the server's database."""
    async with books(server):
        campaign = await make_campaign(status=CampaignStatus.REVIEW, sizes=[f"{SIZE[0]}x{SIZE[1]}"])
        await make_creative(campaign, width=SIZE[0], height=SIZE[1], status=CreativeStatus.REVIEW)
    return campaign.id


def test_a_campaign_approved_from_the_cli_is_served_by_every_worker_within_the_documented_time(
        travelling: tuple[str, AdnetServer]):
    kind, server = travelling
    campaign_id = run_coroutine(campaign_in_review(server))
    assert served_campaigns(server, 0) == {None}  # in review: served by no worker

    approved = server.run("operators", "approve", "campaign", campaign_id)
    approved_at = time.monotonic()
    assert approved.returncode == 0, approved.stderr
    checks = 1
    while served_campaigns(server, checks) != {campaign_id}:
        checks += 1
        assert time.monotonic() - approved_at < REBUILD_SECONDS, "never served"
        time.sleep(0.05)
    served_after = time.monotonic() - approved_at

    assert served_after < SERVED_WITHIN[kind], f"served by every worker after {served_after:.2f} s"
