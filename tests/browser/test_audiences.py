"""Wallet audiences in Chromium, on a publisher's page of another origin than adnet: a campaign for G$ holders is not
served to the page's viewer until the viewer signs in to "My rewards" (which proves the wallet) and the audience job
evaluated it; then the embed's serve requests carry the audience pass and the campaign is served; the panel lists
the audience, and its switch turns wallet targeting off, after which the campaign is not served again."""

from __future__ import annotations

import json
from collections.abc import Iterator
from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.sync_api import Page, expect
from quart import current_app

from adnet.audiences.evaluation import AUDIENCE_LEASE
from adnet.campaigns.models import Campaign, CampaignStatus
from adnet.campaigns.targeting import Targeting
from tests.browser.conftest import LiveServer, PublisherSite, Visitor, publisher_page
from tests.browser.test_rewards import REWARDS_SLOT
from tests.browser.test_rewards import viewer as viewer  # the fixture: a profile whose wallet is an account given
from tests.conftest import rebuild_index
from tests.factories import make_campaign, make_creative

HOLDER = 1  # a development account holding G$ on the test chain


@pytest.fixture
def holders_campaign(server: LiveServer, live_campaigns) -> Iterator[str]:
    """The one servable campaign: for wallets holding G$ (the demo's campaigns paused meanwhile)."""
    live_campaigns()

    async def create() -> str:
        targeting = Targeting.model_validate({"audienceGroups": [[{
            "kind": "erc20", "contract": server.services.chain.gs_address, "minAmount": "1"}]]})
        campaign = await make_campaign(name="G$ holders", targeting=targeting.stored(), now=server.clock.now())
        await make_creative(campaign, banner_url=f"{server.url}/static/demo/banner-1-300x250.svg")
        await rebuild_index(current_app)
        return campaign.id

    campaign_id = server.call(create)
    yield campaign_id

    async def end() -> None:
        await Campaign.filter(id=campaign_id).update(status=CampaignStatus.ENDED)
        await rebuild_index(current_app)

    server.call(end)


def served(page: Page, server: LiveServer, slot_id: str) -> tuple[dict, dict]:
    """Render a new banner slot now: the serve request's query and its answer."""
    with page.expect_response(lambda response: response.url.startswith(f"{server.url}/api/serve")) as answered:
        page.evaluate("""(id) => {
          const slot = document.createElement("div");
          slot.id = id; slot.dataset.kind = "BANNER"; slot.dataset.size = "300x250";
          document.body.appendChild(slot);
          return window.adnet.render(slot, {lazy: false, house: false});
        }""", slot_id)
    response = answered.value
    return parse_qs(urlsplit(response.url).query), json.loads(response.body())


def evaluated(server: LiveServer) -> None:
    """One pass of the audience job on the server, and its serving index brought up to date."""
    async def run() -> None:
        services = server.services
        await services.jobs.run(AUDIENCE_LEASE)
        await services.serving.rebuild()

    server.call(run)


@pytest.mark.parametrize("viewer", [HOLDER], indirect=True)
def test_a_proven_holder_is_served_the_holders_campaign_until_it_switches_targeting_off(
        server: LiveServer, viewer: Visitor, publisher_site: PublisherSite, holders_campaign: str) -> None:
    page = publisher_page(viewer, server, publisher_site, REWARDS_SLOT)
    assert not page.url.startswith(server.url)  # another origin than adnet
    query, answer = served(page, server, "before")
    assert answer["kind"] == "NONE" and query.get("injectedWallet") == ["1"] and "audience" not in query

    panel = page.locator("#my-rewards")
    panel.get_by_role("button", name="My rewards").click()
    expect(panel.get_by_role("heading", name="Ads chosen by your wallet")).to_be_visible()
    evaluated(server)
    page.evaluate("window.adnet.rewards(document.getElementById('my-rewards')).reload()")
    expect(panel.get_by_text("holds at least 1 (smallest units) of the token", exact=False)).to_be_visible()

    query, answer = served(page, server, "proven")
    assert query.get("audience") and answer["kind"] == "BANNER" and answer["ad"]["campaignId"] == holders_campaign

    panel.get_by_role("button", name="Switch wallet targeting off").click()
    expect(panel.get_by_text("Wallet targeting is off", exact=False)).to_be_visible()
    _, answer = served(page, server, "switched-off")
    assert answer["kind"] == "NONE"

    panel.get_by_role("button", name="Switch wallet targeting on").click()  # left as other tests expect it
    expect(panel.get_by_role("button", name="Switch wallet targeting off")).to_be_visible()
    assert viewer.console.script_errors() == [] and viewer.console.page_errors == []


@pytest.mark.parametrize("viewer", [HOLDER], indirect=True)
def test_why_this_ad_leads_a_proven_holder_to_why_it_was_shown(
        server: LiveServer, viewer: Visitor, publisher_site: PublisherSite, holders_campaign: str) -> None:
    page = publisher_page(viewer, server, publisher_site, REWARDS_SLOT)
    assert not page.url.startswith(server.url)  # another origin than adnet
    panel = page.locator("#my-rewards")
    panel.get_by_role("button", name="My rewards").click()
    expect(panel.get_by_role("heading", name="Ads chosen by your wallet")).to_be_visible()
    evaluated(server)
    _, answer = served(page, server, "proven")
    assert answer["kind"] == "BANNER" and answer["ad"]["campaignId"] == holders_campaign

    why = page.locator("#proven").get_by_role("link", name="Why this ad?")
    expect(why).to_have_attribute("href", f"{server.url}/rewards#why={answer['ad']['trackingToken']}")
    with viewer.context.expect_page() as opened:
        why.click()
    rewards = opened.value
    rewards.wait_for_load_state()
    assert rewards.url.startswith(f"{server.url}/rewards#why=")
    rewards.locator("#rewards").get_by_role("button", name="My rewards").click()
    told = rewards.locator("[data-why]")
    expect(told).to_contain_text("Why you saw this ad: the advertiser chose wallets that holds at least 1")
    expect(told).to_contain_text("your wallet is one of them")
    assert told.get_attribute("data-why") == "1"
    assert viewer.console.script_errors() == [] and viewer.console.page_errors == []
