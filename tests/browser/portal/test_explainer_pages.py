"""The decision explainer's portal sections in headless Chromium, at a desktop's 1280 px and a phone's 390 px: the
demo advertiser asks why its campaign does or does not serve on the demo site, and the demo publisher why a slot of
its site answers NONE; the answers are in the catalogue's words, the pages fit the screen and axe-core finds
nothing serious."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from adnet.accounts.models import Site
from tests.browser.conftest import LiveServer, serious_violations, sideways_overflow, sign_in_to_portal
from web.labels import DECISION_WORDS

DEMO_ADVERTISER_INDEX = 1
DEMO_PUBLISHER_INDEX = 2


@pytest.mark.parametrize("width", (1280, 390))
def test_advertiser_and_publisher_ask_why(open_portal, server: LiveServer, live_campaigns, width: int) -> None:
    # Every demo campaign approved and served, whatever earlier tests of the shared server left them as.
    campaign_id = live_campaigns(*range(len(server.demo["campaignIds"])))[0]
    domain = server.call(lambda: Site.get(id=server.demo["siteId"]).values_list("domain", flat=True))
    page, console = open_portal(DEMO_ADVERTISER_INDEX, viewport={"width": width, "height": 900})
    sign_in_to_portal(page)
    page.goto(f"{server.url}/portal/advertise/campaigns/{campaign_id}")
    page.locator("#campaign-tab-delivery").click()
    expect(page.get_by_role("heading", name="Why it serves, or not")).to_be_visible()
    page.get_by_label("Site (domain)").fill(domain)
    page.get_by_label("Size", exact=True).fill("123x45")
    page.get_by_role("button", name="Explain").click()
    row = page.locator(f"#explain-table tr[data-campaign='{campaign_id}']")
    expect(row).to_contain_text(DECISION_WORDS["no_creative_of_size"])
    assert "explain=1" in page.url
    page.get_by_label("Site (domain)").fill("nowhere.example")
    page.get_by_role("button", name="Explain").click()
    expect(page.locator("#explain-error")).to_contain_text("no site is registered")
    assert sideways_overflow(page) == 0, f"the campaign's explainer is wider than {width} px"
    assert serious_violations(page) == []
    assert console.script_errors() == []

    publisher, publisher_console = open_portal(DEMO_PUBLISHER_INDEX, viewport={"width": width, "height": 900})
    sign_in_to_portal(publisher)
    publisher.goto(f"{server.url}/portal/sites/{server.demo['siteId']}/traffic")
    expect(publisher.get_by_role("heading", name="Why a slot answered NONE")).to_be_visible()
    publisher.get_by_label("Size", exact=True).fill("123x45")
    publisher.get_by_label("When", exact=True).select_option("")
    publisher.get_by_role("button", name="Explain").click()
    rows = publisher.locator("#explain-table tbody tr")
    expect(rows.first).to_contain_text(DECISION_WORDS["no_creative_of_size"])
    expect(publisher.locator(f"#explain-table tr[data-campaign='{campaign_id}']")).to_have_count(1)
    publisher.get_by_label("When", exact=True).select_option("24")
    publisher.get_by_role("button", name="Explain").click()
    expect(publisher.locator("#explain-summary")).to_contain_text("sampled decision")
    assert sideways_overflow(publisher) == 0, f"the site's explainer is wider than {width} px"
    assert serious_violations(publisher) == []
    assert publisher_console.script_errors() == []
