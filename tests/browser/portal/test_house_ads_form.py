"""The site page's house ads and floors in headless Chromium, at a desktop's 1280 px and a phone's 390 px: a
publisher sets a site floor and placement floors, adds a house ad after a refused one is explained beside its field,
and deletes it, each answer swapped in by htmx; the section fits the screen and axe-core finds nothing serious."""

from __future__ import annotations

import secrets

import pytest
from playwright.sync_api import expect

from adnet.accounts.models import Publisher, Site
from adnet.core.wallets import dev_accounts
from adnet.delivery.models import HouseAd
from tests.browser.conftest import LiveServer, retire_site, serious_violations, sideways_overflow, sign_in_to_portal
from tests.factories import make_site

DEMO_PUBLISHER_INDEX = 2  # the demo data's publisher, given a site of its own for each run
G = 10**18


@pytest.mark.parametrize("width", (1280, 390))
def test_a_publisher_sets_floors_and_house_ads(open_portal, server: LiveServer, width: int) -> None:
    async def new_site() -> Site:
        publisher = await Publisher.get(wallet=dev_accounts()[DEMO_PUBLISHER_INDEX].address.lower())
        return await make_site(publisher, domain=f"house-{secrets.token_hex(4)}.example", verified=False,
                               now=server.clock.now())

    site = server.call(new_site)
    try:
        page, console = open_portal(DEMO_PUBLISHER_INDEX, viewport={"width": width, "height": 900})
        sign_in_to_portal(page)
        page.goto(f"{server.url}/portal/sites/{site.id}/controls")
        section = page.locator("#house-ads")
        expect(section.get_by_role("heading", name="House ads and floors")).to_be_visible()

        section.get_by_label("Site floor, G$ per 1000 impressions (0 for none)").fill("1.5")
        section.get_by_label("Placement floors, one per line").fill("sidebar 0.25\ntop")
        section.get_by_role("button", name="Save floors").click()
        expect(page.locator("#floors-error")).to_contain_text("(top)")
        expect(page.locator("#placement-floors")).to_have_attribute("aria-invalid", "true")
        page.locator("#placement-floors").fill("sidebar 0.25\ntop 3")
        page.get_by_role("button", name="Save floors").click()
        expect(page.locator("#floors-done")).to_have_text("Floors saved.")
        expect(page.locator("#floors-error")).to_have_count(0)
        expect(page.locator("#floor-cpm")).to_have_value("1.5")
        stored = server.call(lambda: Site.get(id=site.id))
        assert (stored.floor_cpm, stored.placement_floors) == (3 * G // 2, {"sidebar": str(G // 4), "top": str(3 * G)})

        page.get_by_label("Image URL").fill("https://publisher.example/house.png")
        page.get_by_label("Link").fill("https://publisher.example/join")
        page.get_by_label("Alt text").fill("Join our newsletter")
        page.get_by_label("Size (width x height)").fill("300x250")
        page.get_by_label("Image URL").evaluate("input => input.type = 'text'")  # past the browser's own check
        page.get_by_label("Image URL").fill("javascript:alert(1)")
        page.get_by_role("button", name="Add house ad").click()
        expect(page.locator("#house-ad-error")).to_be_visible()
        expect(page.get_by_label("Image URL")).to_have_attribute("aria-invalid", "true")
        expect(page.get_by_label("Alt text")).to_have_value("Join our newsletter")
        page.get_by_label("Image URL").fill("https://publisher.example/house.png")
        page.get_by_role("button", name="Add house ad").click()
        row = page.locator("#house-ad-list tbody tr")
        expect(row).to_have_count(1)
        expect(row).to_contain_text("Join our newsletter")
        expect(row).to_contain_text("300x250")
        assert sideways_overflow(page) == 0, f"the site page is wider than {width} px"
        assert serious_violations(page) == []

        row.get_by_role("button", name="Delete Join our newsletter").click()
        expect(page.locator("#house-ad-list")).to_contain_text("No house ad yet")
        assert server.call(lambda: HouseAd.filter(site_id=site.id).count()) == 0
        assert console.script_errors() == []
    finally:
        server.call(lambda: retire_site(site.id))
