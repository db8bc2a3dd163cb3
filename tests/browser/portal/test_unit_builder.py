"""The unit builder in headless Chromium, at a desktop's 1280 px and a phone's 390 px: the site page previews what
the slot would show now and rewrites the snippet as its fields change (a refused combination said in the preview),
creates the unit, and the unit's snippet pasted on a publisher's page of another origin than adnet is filled by the
embed; no page wider than the screen and no serious or critical axe-core violation."""

from __future__ import annotations

import secrets

import pytest
from playwright.sync_api import expect

from adnet.accounts.models import Publisher
from adnet.core.wallets import dev_accounts
from tests.browser.conftest import (
    LiveServer,
    PublisherSite,
    Visitor,
    publisher_page,
    serious_violations,
    sideways_overflow,
    sign_in_to_portal,
)
from tests.factories import make_publisher, make_site

BUILDER_INDEX = 9  # a funded development account whose other browser tests register other sites
WIDTHS = (1280, 390)


def own_site(server: LiveServer) -> str:
    """A verified site of the builder's wallet, on a domain of its own; its id."""
    wallet = dev_accounts()[BUILDER_INDEX].address.lower()

    async def create() -> str:
        publisher = await Publisher.get_or_none(wallet=wallet) or await make_publisher(wallet)
        return (await make_site(publisher, domain=f"units-{secrets.token_hex(4)}.example", now=server.clock.now())).id
    return server.call(create)


@pytest.mark.parametrize("width", WIDTHS)
def test_a_unit_is_built_with_a_live_preview_and_its_snippet_serves(open_portal, server: LiveServer, width: int,
                                                                      visitor: Visitor, publisher_site: PublisherSite):
    page, console = open_portal(BUILDER_INDEX, viewport={"width": width, "height": 900})
    sign_in_to_portal(page)
    site_id = own_site(server)
    page.goto(f"{server.url}/portal/sites/{site_id}/embed")
    builder = page.locator("#unit-builder")
    builder.scroll_into_view_if_needed()
    expect(builder.locator("#preview-banner")).to_be_visible()  # the default: a 300x250 banner, served now
    expect(builder.locator("#unit-snippet")).to_have_text(
        '<div data-adnet-slot data-kind="BANNER" data-size="300x250"></div>')

    builder.get_by_label("Banners", exact=True).uncheck()
    builder.get_by_label("Polls").check()
    expect(builder.locator("#unit-preview-error")).to_contain_text("only a unit that shows banners has a size")
    builder.get_by_label("Banner size").select_option("")
    expect(builder.locator("#preview-unit")).to_be_visible()  # a standalone poll of the demo data
    expect(builder.locator("#unit-snippet")).to_have_text('<div data-adnet-slot data-kind="POLL"></div>')

    builder.get_by_label("Polls").uncheck()
    builder.get_by_label("Banners", exact=True).check()
    builder.get_by_label("Banner size").select_option("300x250")
    builder.get_by_label("Banners show their attached tasks").check()
    builder.get_by_label("Placement label").fill("sidebar")
    snippet = ('<div data-adnet-slot data-kind="BANNER" data-size="300x250" data-placement="sidebar" '
               "data-tasks></div>")
    expect(builder.locator("#unit-snippet")).to_have_text(snippet)
    expect(builder.locator("#preview-banner")).to_be_visible()
    assert sideways_overflow(page) == 0
    assert serious_violations(page) == []

    builder.get_by_label("Name").fill("Sidebar")
    builder.get_by_role("button", name="Create unit").click()
    units = page.locator("#ad-units")
    expect(units.locator("#ad-units-done")).to_contain_text("Created Sidebar")
    row = units.locator("article.ad-unit", has_text="Sidebar")
    expect(row.locator("code")).to_have_text(snippet)
    assert sideways_overflow(page) == 0
    assert serious_violations(page) == []
    assert console.page_errors == [] and console.script_errors() == []

    article = publisher_page(visitor, server, publisher_site, row.locator("code").inner_text(), site_id=site_id)
    slot = article.locator("[data-adnet-slot]")
    slot.scroll_into_view_if_needed()
    article.wait_for_function("document.querySelector('[data-adnet-slot]').hasAttribute('data-adnet-ad')")
    assert (slot.get_attribute("data-adnet-ad") or "").startswith("ad_")
    assert visitor.console.errors() == [] and visitor.console.page_errors == []
