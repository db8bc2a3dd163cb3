"""Every portal page of every role on a phone (390 px), walked as a person would: the navigation's links swapped by
htmx (a boosted click), every other page the walk reaches opened directly. On each, the page is no wider than the
screen (``document.scrollWidth <= innerWidth``), and across the walk the console stays clean (no error, no warning,
no CSP violation from an htmx swap) and no request fails. The API documentation page passes axe. The country picker
filters as one types and picks a region's countries at once, and a phone's Copy button says "Copied"."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Page, expect

from adnet.campaigns.models import Campaign
from tests.browser.conftest import OPERATOR_INDEX, LiveServer, serious_violations, sign_in_to_portal

PHONE = {"width": 390, "height": 844}
DEMO_ADVERTISER_INDEX, DEMO_PUBLISHER_INDEX = 1, 2
# Links the walk does not follow: downloads, signing out, and the embed script.
NOT_WALKED = (".csv", "/portal/signout", "/portal/sdk")
MOST_PAGES = 40


def _watch_requests(page: Page) -> list[str]:
    """Requests that failed or were answered with an error. A request the browser aborts because the page navigates
    on (``net::ERR_ABORTED``: a favicon still loading when the walk opens the next page) is not a failure."""
    failed: list[str] = []
    page.on("requestfailed", lambda request: failed.append(f"{request.method} {request.url} {request.failure}")
            if request.failure != "net::ERR_ABORTED" else None)
    page.on("response", lambda response: failed.append(f"{response.status} {response.url}")
            if response.status >= 400 else None)
    return failed


def _links(page: Page, origin: str) -> list[str]:
    hrefs = page.eval_on_selector_all("a[href^='/portal'], a[href^='" + origin + "/portal']",
                                      "links => links.map((link) => link.getAttribute('href'))")
    paths = [urlsplit(href).path for href in hrefs]
    return [path for path in paths if not any(part in path for part in NOT_WALKED)]


def _fits(page: Page) -> None:
    widths = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    assert widths[0] <= widths[1], f"{page.url} is {widths[0]} px wide on a {widths[1]} px screen"


@pytest.mark.parametrize("index", [DEMO_PUBLISHER_INDEX, DEMO_ADVERTISER_INDEX, OPERATOR_INDEX])
def test_every_page_of_every_role_fits_a_phone_with_a_clean_console(open_portal, server: LiveServer, index):
    page, console = open_portal(index, viewport=PHONE)
    failed = _watch_requests(page)
    sign_in_to_portal(page)
    _fits(page)
    nav = page.get_by_role("navigation", name="Portal")
    for name in ("Advertise", "API keys", "Webhooks", "Members", "Dashboard"):  # htmx swaps the page's body
        nav.get_by_role("link", name=name).click()
        page.wait_for_load_state("networkidle")
        _fits(page)
    if index == DEMO_ADVERTISER_INDEX:
        opened = page.get_by_role("button", name="Open the account")
        if opened.count():
            opened.click()
            page.wait_for_load_state("networkidle")

    seen: set[str] = set()
    queue = ["/portal", "/portal/advertise", "/portal/operator" if index == OPERATOR_INDEX else "/portal/keys"]
    while queue and len(seen) < MOST_PAGES:
        path = queue.pop(0)
        if path in seen:
            continue
        seen.add(path)
        page.goto(f"{server.url}{path}")
        page.wait_for_load_state("networkidle")
        _fits(page)
        queue += [link for link in _links(page, server.url) if link not in seen]

    assert len(seen) >= 4
    assert failed == []
    assert console.page_errors == [] and console.errors() == []


def test_a_secret_issued_on_a_phone_wraps_and_is_copied(open_portal, server: LiveServer):
    page, console = open_portal(DEMO_ADVERTISER_INDEX, viewport=PHONE)
    sign_in_to_portal(page)
    page.get_by_role("navigation", name="Portal").get_by_role("link", name="API keys").click()
    page.get_by_label("Name").fill("phone script")
    scope = page.get_by_label("reports:read")
    box = scope.bounding_box()
    assert box is not None and box["width"] < 30 and box["height"] < 30  # a checkbox, not a full-width box
    scope.check()
    page.get_by_role("button", name="Issue key").click()
    expect(page.locator("#issued-token")).to_contain_text("key_")
    _fits(page)
    copy = page.get_by_role("button", name="Copy the key's token")
    copy.click()
    expect(copy).to_have_text("Copied")
    assert console.page_errors == [] and console.errors() == []


def test_a_reversed_export_range_is_refused_in_place(open_portal, server: LiveServer):
    page, console = open_portal(DEMO_PUBLISHER_INDEX, viewport=PHONE)
    sign_in_to_portal(page)
    site_page = f"{server.url}/portal/sites/{server.demo['siteId']}/traffic"
    page.goto(site_page)
    page.locator("#export-from").fill("2026-03-10")
    page.locator("#export-to").fill("2026-03-01")
    page.get_by_role("button", name="Download CSV").click()
    assert page.url == site_page  # nothing was sent: the page stays, the field says why
    said = page.eval_on_selector("#export-to", "field => field.validationMessage")
    assert said == "The last day is before the first."
    page.locator("#export-to").fill("2026-03-10")
    assert page.eval_on_selector("#export-to", "field => field.validity.valid")
    assert console.page_errors == []


def test_the_api_documentation_passes_axe(open_portal, server: LiveServer):
    page, console = open_portal(DEMO_PUBLISHER_INDEX)
    page.goto(f"{server.url}/docs")
    expect(page.locator(".swagger-ui .opblock").first).to_be_visible()
    page.locator(".swagger-ui .opblock-summary").first.click()
    assert serious_violations(page) == []
    assert console.page_errors == []


def test_the_country_picker_filters_and_picks_a_region(open_portal, server: LiveServer):
    page, console = open_portal(DEMO_ADVERTISER_INDEX, viewport=PHONE)
    sign_in_to_portal(page)
    campaign_id = server.demo["campaignIds"][0]
    server.call(lambda: Campaign.filter(id=campaign_id).update(status="draft"))
    page.goto(f"{server.url}/portal/advertise/campaigns/{campaign_id}/targeting")
    picker = page.locator("#settings-geoInclude-picker")
    picker.get_by_label("Search countries").fill("germ")
    expect(page.locator("#settings-geoInclude option:not([hidden])")).to_have_count(1)
    picker.get_by_role("button", name="DACH").click()
    chosen = page.eval_on_selector("#settings-geoInclude",
                                   "select => Array.from(select.selectedOptions).map((option) => option.value)")
    assert sorted(chosen) == ["AT", "CH", "DE"]
    expect(picker.locator("[data-picker-chosen]")).to_contain_text("Austria")
    _fits(page)
    assert console.page_errors == [] and console.errors() == []
