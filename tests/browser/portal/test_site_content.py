"""A site's content categories in headless Chromium: the publisher chooses IAB Content Taxonomy entries in the
Settings section, saves them in place and finds them chosen on the next visit; choosing more than ten is refused in
the section, which keeps the choice as made, marks the list invalid and changes nothing; no serious or critical
axe-core violation in either state."""

from __future__ import annotations

from playwright.sync_api import expect

from adnet.accounts.models import Site
from tests.browser.conftest import LiveServer, serious_violations, sign_in_to_portal
from tests.browser.portal.test_unit_builder import BUILDER_INDEX, own_site

COMPUTING = ["596", "599"]  # Technology & Computing, and its Computing


def stored_categories(server: LiveServer, site_id: str) -> list[str]:
    async def read() -> list[str]:
        return (await Site.get(id=site_id)).content_categories
    return server.call(read)


def chosen(page) -> list[str]:
    return page.locator("#site-content-categories").evaluate(
        "select => [...select.selectedOptions].map(option => option.value)")


def test_content_categories_are_chosen_saved_and_refused_beyond_ten(open_portal, server: LiveServer):
    page, console = open_portal(BUILDER_INDEX, viewport={"width": 1280, "height": 900})
    sign_in_to_portal(page)
    site_id = own_site(server)
    page.goto(f"{server.url}/portal/sites/{site_id}/settings")
    categories = page.get_by_label("Content categories (IAB Content Taxonomy")
    categories.select_option(COMPUTING)
    page.evaluate("window.__sameDocument = true")
    page.get_by_role("button", name="Save content categories").click()
    expect(page.get_by_role("status")).to_have_text("Content categories saved.")
    assert page.evaluate("window.__sameDocument") is True  # the section was swapped in place
    assert stored_categories(server, site_id) == COMPUTING
    assert serious_violations(page) == []

    page.reload()
    assert chosen(page) == COMPUTING

    eleven = page.locator("#site-content-categories option").evaluate_all(
        "options => options.slice(0, 11).map(option => option.value)")
    categories.select_option(eleven)
    page.get_by_role("button", name="Save content categories").click()
    alert = page.locator("#settings-error")
    expect(alert).to_be_visible()
    expect(alert).to_contain_text("10")
    expect(categories).to_have_attribute("aria-invalid", "true")
    expect(categories).to_have_attribute("aria-describedby", "site-content-hint settings-error")
    assert chosen(page) == eleven  # the choice as made, to correct
    assert stored_categories(server, site_id) == COMPUTING
    assert serious_violations(page) == []
    assert console.page_errors == [] and console.script_errors() == []
