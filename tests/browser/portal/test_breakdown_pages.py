"""The breakdown pages in headless Chromium, at a desktop's 1280 px and a phone's 390 px: the demo advertiser sees
its spend by site, switches the rows to countries (htmx swaps the table and the URL follows), and the demo
publisher sees its site's earnings by device; both pages fit the screen and axe-core finds nothing serious."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from adnet.delivery.models import ReportDaily
from tests.browser.conftest import LiveServer, serious_violations, sideways_overflow, sign_in_to_portal

DEMO_ADVERTISER_INDEX = 1
DEMO_PUBLISHER_INDEX = 2
G = 10**18
# (placement, country, device, impressions, clicks, cost)
ROWS = [("article", "DE", "desktop", 40, 2, 8 * G), ("sidebar", "FR", "mobile", 10, 1, 3 * G)]


@pytest.fixture
def billed(server: LiveServer):
    """A day of billed traffic of the first demo campaign on the demo site, removed afterwards."""
    async def book() -> list[int]:
        created = [await ReportDaily.create(
            day=server.clock.now().date(), campaign_id=server.demo["campaignIds"][0], site_id=server.demo["siteId"],
            placement=placement, country=country, device=device, impressions=impressions, clicks=clicks, cost=cost,
            publisher_amount=cost * 7 // 10) for placement, country, device, impressions, clicks, cost in ROWS]
        return [row.id for row in created]

    ids = server.call(book)
    yield
    server.call(lambda: ReportDaily.filter(id__in=ids).delete())


@pytest.mark.parametrize("width", (1280, 390))
def test_breakdowns_show_switch_and_fit(open_portal, server: LiveServer, billed, width: int) -> None:
    page, console = open_portal(DEMO_ADVERTISER_INDEX, viewport={"width": width, "height": 900})
    sign_in_to_portal(page)
    page.goto(f"{server.url}/portal/advertise")
    page.get_by_role("link", name="Spend by site, placement, country and device").click()
    expect(page.get_by_role("heading", name="Where your campaigns ran")).to_be_visible()
    total = page.locator("#breakdown-total")
    expect(total).to_contain_text("50")
    expect(total).to_contain_text("11")
    page.get_by_label("Rows").select_option("country")
    page.get_by_role("button", name="Show").click()
    expect(page.get_by_role("heading", name="By country")).to_be_visible()
    expect(page.locator("#breakdown-table tbody tr").first).to_contain_text("DE")
    assert "by=country" in page.url
    expect(page.locator("#breakdown-csv")).to_have_attribute("href", f"/portal/advertise/breakdown.csv?by=country"
                                                             f"&from={page.locator('#breakdown-from').input_value()}"
                                                             f"&to={page.locator('#breakdown-to').input_value()}")
    assert sideways_overflow(page) == 0, f"the advertiser's breakdown is wider than {width} px"
    assert serious_violations(page) == []
    assert console.script_errors() == []

    publisher, publisher_console = open_portal(DEMO_PUBLISHER_INDEX, viewport={"width": width, "height": 900})
    sign_in_to_portal(publisher)
    publisher.goto(f"{server.url}/portal/sites/{server.demo['siteId']}/traffic")
    publisher.get_by_role("link", name="Earnings and conversions by placement, country, device and day").click()
    publisher.get_by_label("Rows").select_option("device")
    publisher.get_by_role("button", name="Show").click()
    expect(publisher.get_by_role("heading", name="By device")).to_be_visible()
    rows = publisher.locator("#breakdown-table tbody tr")
    expect(rows).to_have_count(2)
    expect(rows.first).to_contain_text("desktop")
    expect(rows.first).to_contain_text("5.6")
    assert sideways_overflow(publisher) == 0, f"the site's breakdown is wider than {width} px"
    assert serious_violations(publisher) == []
    assert publisher_console.script_errors() == []
