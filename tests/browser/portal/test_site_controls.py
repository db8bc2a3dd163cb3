"""A site's blocklist in headless Chromium: the publisher ticks a category on the site's page, and the embed on a
publisher's page of another origin than adnet never shows a campaign of that category again, while the others
still serve; no serious or critical axe-core violation in the section."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from playwright.sync_api import expect

from adnet.campaigns.models import Campaign, Category, Creative
from tests.browser.conftest import (
    LiveServer,
    PublisherSite,
    Visitor,
    publisher_page,
    serious_violations,
    sign_in_to_portal,
)
from tests.browser.portal.test_unit_builder import BUILDER_INDEX, own_site
from tests.conftest import rebuild_index

SLOTS = 6


def creatives_of(server: LiveServer, campaign_id: str) -> set[str]:
    async def read() -> set[str]:
        return set(await Creative.filter(campaign_id=campaign_id).values_list("id", flat=True))
    return server.call(read)


def file_under(server: LiveServer, campaign_id: str, category: Category) -> None:
    """What an operator's correction does: the campaign has ``category`` now, and serving knows it."""
    async def change() -> None:
        await Campaign.filter(id=campaign_id).update(category=category)
        await rebuild_index(server.app)
    server.call(change)


@pytest.fixture
def gambling_campaign(server: LiveServer, live_campaigns) -> Iterator[tuple[str, str]]:
    """Two demo campaigns left servable, the first filed under gambling (``other`` again afterwards)."""
    gambling, other = live_campaigns(0, 1)
    file_under(server, gambling, Category.GAMBLING)
    yield gambling, other
    file_under(server, gambling, Category.OTHER)


def blocks_gambling(server: LiveServer, site_id: str) -> bool:
    entry = server.services.serving.index.sites.get(site_id)
    return entry is not None and "gambling" in entry.controls.categories


def served_ads(visitor: Visitor, server: LiveServer, publisher_site: PublisherSite, site_id: str) -> list[str]:
    """The creatives a page with ``SLOTS`` banner slots of the site shows."""
    slots = "".join(f'<div data-adnet-slot data-kind="BANNER" data-size="300x250" id="slot-{n}"></div>'
                    for n in range(SLOTS))
    page = publisher_page(visitor, server, publisher_site, slots, site_id=site_id)
    shown = []
    for n in range(SLOTS):
        slot = page.locator(f"#slot-{n}")
        slot.scroll_into_view_if_needed()
        page.wait_for_function(f"document.getElementById('slot-{n}').hasAttribute('data-adnet-ad')")
        shown.append(slot.get_attribute("data-adnet-ad") or "")
    return shown


def test_a_blocked_category_is_never_shown_on_the_site(open_portal, server: LiveServer, visitor: Visitor,
                                                       publisher_site: PublisherSite, gambling_campaign):
    gambling, other = gambling_campaign
    site_id = own_site(server)
    page, console = open_portal(BUILDER_INDEX)
    sign_in_to_portal(page)
    page.goto(f"{server.url}/portal/sites/{site_id}/controls")
    controls = page.locator("#site-controls")
    controls.get_by_label("Gambling").check()
    controls.get_by_role("button", name="Save").click()
    expect(controls.locator("#controls-done")).to_be_visible()
    expect(controls.get_by_label("Gambling")).to_be_checked()
    assert serious_violations(page) == []
    assert console.page_errors == [] and console.script_errors() == []

    deadline = time.monotonic() + 10  # the portal announced the change; the server's index job applies it
    while not blocks_gambling(server, site_id):
        assert time.monotonic() < deadline, "serving never heard of the site's controls"
        time.sleep(0.05)
    shown = served_ads(visitor, server, publisher_site, site_id)
    assert len(shown) == SLOTS and set(shown) <= creatives_of(server, other)
    assert not set(shown) & creatives_of(server, gambling)
    assert visitor.console.errors() == [] and visitor.console.page_errors == []
