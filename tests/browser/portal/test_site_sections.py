"""The site page in sections and the review queue that shows the ad, in headless Chromium at a desktop's 1280 px and
a phone's 390 px against the live server: each tab swaps its section in place, marks itself current, puts the
section's own URL in the address bar (which opens the same section on a reload), and every section fits the screen
with no serious or critical axe-core violation; the operator sees a creative's http banner (served from the
advertiser's host, which the portal's CSP would block) through adnet, and rejects it with a reason."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from adnet.campaigns.models import CampaignStatus, CreativeStatus
from tests.browser.conftest import OPERATOR_INDEX, LiveServer, serious_violations, sideways_overflow, sign_in_to_portal
from tests.factories import make_advertiser, make_campaign, make_creative
from tests.site_server import Answer, serve_site

WIDTHS = (1280, 390)
DEMO_PUBLISHER_INDEX = 2
SECTIONS = [("Overview", ""), ("Money", "/money"), ("Embed and units", "/embed"),
            ("Traffic and reports", "/traffic"), ("Controls", "/controls"), ("Settings", "/settings")]
BANNER = ('<svg xmlns="http://www.w3.org/2000/svg" width="300" height="250" viewBox="0 0 300 250">'
          '<rect width="300" height="250" fill="#0b5fff"/><text x="20" y="130" fill="#fff">Spring sale</text></svg>')


def fits_and_passes_axe(page, width: int) -> None:
    assert sideways_overflow(page) == 0, f"{page.url} is wider than {width} px"
    assert serious_violations(page) == [], page.url


@pytest.mark.parametrize("width", WIDTHS)
def test_each_section_is_a_tab_with_its_own_url(open_portal, server: LiveServer, width: int):
    page, console = open_portal(DEMO_PUBLISHER_INDEX, viewport={"width": width, "height": 900})
    sign_in_to_portal(page)
    site_id = server.demo["siteId"]
    base = f"{server.url}/portal/sites/{site_id}"
    page.goto(base)
    page.evaluate("window.__sameDocument = true")
    tabs = page.get_by_role("navigation", name="Sections of ")
    for title, path in SECTIONS:
        tabs.get_by_role("link", name=title, exact=True).click()
        expect(page).to_have_url(base + path)
        expect(tabs.get_by_role("link", name=title, exact=True)).to_have_attribute("aria-current", "page")
        expect(tabs.locator('[aria-current="page"]')).to_have_count(1)
        expect(page).to_have_title(f"{title} · {page.locator('h1').inner_text()} · adnet portal")
        fits_and_passes_axe(page, width)
    assert page.evaluate("window.__sameDocument") is True  # swapped in place, no page load
    danger = page.locator("#danger-zone")
    expect(danger.get_by_role("button", name="Delete site")).to_have_class("danger")
    border = danger.get_by_role("button", name="Delete site").evaluate("b => getComputedStyle(b).borderColor")
    ordinary = page.get_by_role("button", name="Rename").evaluate("b => getComputedStyle(b).borderColor")
    assert border != ordinary
    page.reload()  # the pushed URL opens the same section
    expect(tabs.get_by_role("link", name="Settings")).to_have_attribute("aria-current", "page")
    page.go_back()
    expect(page).to_have_url(base + "/controls")
    expect(page.locator("#site-controls")).to_be_visible()
    assert console.page_errors == [] and console.script_errors() == []


@pytest.mark.parametrize("width", WIDTHS)
def test_the_queue_shows_an_http_banner_through_adnet(open_portal, server: LiveServer, width: int):
    with serve_site() as host:
        host.pages["/spring.svg"] = Answer(body=BANNER, headers={"Content-Type": "image/svg+xml"})
        banner_url = host.url("/spring.svg")

        async def in_review() -> tuple[str, str]:
            owner = await make_advertiser(now=server.clock.now())
            campaign = await make_campaign(owner, status=CampaignStatus.REVIEW, name=f"Spring {width}",
                                           now=server.clock.now())
            creative = await make_creative(campaign, status=CreativeStatus.REVIEW, banner_url=banner_url,
                                           now=server.clock.now(), description=f"Spring banner {width}")
            return campaign.id, creative.id

        campaign_id, creative_id = server.call(in_review)
        page, console = open_portal(OPERATOR_INDEX, viewport={"width": width, "height": 900})
        sign_in_to_portal(page)
        page.goto(f"{server.url}/portal/operator")
        item = page.locator(f"#review-{creative_id}")
        image = item.get_by_role("img", name=f"Spring banner {width}")
        image.scroll_into_view_if_needed()
        expect(image).to_have_attribute("src", f"/portal/operator/creatives/{creative_id}/banner")
        page.wait_for_function("image => image.complete && image.naturalWidth > 0", arg=image.element_handle())
        assert image.evaluate("image => [image.naturalWidth, image.naturalHeight]") == [300, 250]
        assert host.requested == ["/spring.svg"]
        expect(item).to_contain_text(banner_url)
        fits_and_passes_axe(page, width)

        item.get_by_label("Reason for rejecting").fill("The banner promises a guaranteed return.")
        item.get_by_role("button", name="Reject creative").click()
        expect(page.locator("#review-done")).to_contain_text(f"Rejected the 300x250 creative of Spring {width}.")
        expect(page.locator(f"#review-{creative_id} .review-state")).to_have_text(
            "Rejected: The banner promises a guaranteed return.")
        campaign = page.locator(f"#review-{campaign_id}")
        campaign.locator(f"#decide-{campaign_id}-reason").fill("Nothing left to show.")
        campaign.get_by_role("button", name="Reject campaign").click()
        expect(page.locator(f"#review-{campaign_id}")).to_have_count(0)
        fits_and_passes_axe(page, width)
        assert console.page_errors == [] and console.script_errors() == []
