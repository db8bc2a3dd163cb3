"""Reports per hour in headless Chromium, at a desktop's 1280 px and a phone's 390 px: the demo advertiser toggles
its campaign's report to "Per hour", picks a time zone, and reads the hours in that zone, named on the page (and
remembered on the next visit); the demo publisher does the same in its site's traffic section; the pages fit the
screen and axe-core finds no violation."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from zoneinfo import ZoneInfo

import pytest
from playwright.sync_api import expect

from adnet.campaigns.models import ConversionGoal
from adnet.conversions.models import Conversion
from adnet.core.ids import new_id
from tests.browser.conftest import (
    LiveServer,
    axe_violations,
    serious_violations,
    sideways_overflow,
    sign_in_to_portal,
)

DEMO_ADVERTISER_INDEX = 1
DEMO_PUBLISHER_INDEX = 2
G = 10**18


@pytest.fixture
def converted_this_hour(server: LiveServer):
    """A paid conversion of the first demo campaign now, for a click on the demo site; removed afterwards. Its UTC
    hour's start."""
    campaign_id, site_id = server.demo["campaignIds"][0], server.demo["siteId"]

    async def book() -> str:
        now = server.clock.now()
        goal_id = new_id("goal")
        goal = await ConversionGoal.create(id=goal_id, campaign_id=campaign_id, name="Hourly",
                                           event=f"hourly-{goal_id[-8:].lower()}", cpa=G, created_at=now,
                                           updated_at=now)
        await Conversion.create(id=new_id("cv"), campaign_id=campaign_id, goal=goal, order_id=f"hour-{goal_id}",
                                site_id=site_id, value=Decimal(2 * G), occurred_at=now, received_at=now,
                                attributed=True, paid=True, cost=Decimal(G), publisher_amount=Decimal(G * 7 // 10))
        return goal_id

    goal_id = server.call(book)
    yield server.clock.now().replace(minute=0, second=0, microsecond=0)

    async def remove() -> None:
        await Conversion.filter(goal_id=goal_id).delete()
        await ConversionGoal.filter(id=goal_id).delete()

    server.call(remove)


@pytest.mark.parametrize("width", (1280, 390))
def test_the_report_toggles_to_hours_in_the_zone_the_viewer_picks(open_portal, server: LiveServer,
                                                                  converted_this_hour, width: int) -> None:
    page, console = open_portal(DEMO_ADVERTISER_INDEX, viewport={"width": width, "height": 900})
    sign_in_to_portal(page)
    campaign_id = server.demo["campaignIds"][0]
    page.goto(f"{server.url}/portal/advertise/campaigns/{campaign_id}/report")
    expect(page.get_by_role("heading", name="Per day", exact=True)).to_be_visible()
    page.get_by_role("link", name="Per hour").click()
    expect(page.get_by_role("heading", name="Per hour", exact=True)).to_be_visible()
    expect(page.locator("#report-zone")).to_have_text("UTC")
    hour = converted_this_hour
    utc_hour = hour.strftime("%Y-%m-%dT%H:00:00Z")
    cell = page.locator(f'#conversion-days tbody th time[datetime="{utc_hour}"]')
    expect(cell).to_have_text(f"{hour:%Y-%m-%d %H:%M} (UTC)")

    page.get_by_label("Time zone").select_option("Asia/Kathmandu")
    page.get_by_role("button", name="Show").click()
    expect(page.locator("#report-zone")).to_have_text("Asia/Kathmandu")
    local = hour + timedelta(hours=5, minutes=45)
    expect(cell).to_have_text(f"{local:%Y-%m-%d %H:%M} (UTC+05:45)")
    expect(page.get_by_role("columnheader", name="Hour (Asia/Kathmandu)").first).to_be_visible()
    expect(page.get_by_role("link", name="Per hour")).to_have_attribute("aria-current", "page")
    assert sideways_overflow(page) == 0, f"the hourly report is wider than {width} px"
    assert serious_violations(page) == []
    assert axe_violations(page, "form#report-form") == []
    assert axe_violations(page, "section:has(#days-heading)") == []

    page.goto(f"{server.url}/portal/advertise/campaigns/{campaign_id}/report?granularity=hour")
    expect(page.locator("#report-zone")).to_have_text("Asia/Kathmandu")  # remembered
    assert console.script_errors() == []


@pytest.mark.parametrize("width", (1280, 390))
def test_a_sites_traffic_toggles_to_hours_in_the_zone_the_viewer_picks(open_portal, server: LiveServer,
                                                                       converted_this_hour, width: int) -> None:
    page, console = open_portal(DEMO_PUBLISHER_INDEX, viewport={"width": width, "height": 900})
    sign_in_to_portal(page)
    page.goto(f"{server.url}/portal/sites/{server.demo['siteId']}/traffic")
    expect(page.get_by_role("heading", name="Traffic quality, last 30 days")).to_be_visible()
    page.get_by_role("link", name="Per hour").click()
    expect(page.get_by_role("heading", name="Traffic quality, last 14 days per hour")).to_be_visible()
    page.get_by_label("Time zone").select_option("America/St_Johns")
    page.locator("#traffic-form").get_by_role("button", name="Show").click()
    expect(page.locator("#traffic-zone")).to_have_text("America/St_Johns")
    hour = converted_this_hour
    local = hour.astimezone(ZoneInfo("America/St_Johns"))  # UTC-03:30, or -02:30 in summer
    offset = "-02:30" if local.dst() else "-03:30"
    cell = page.locator(f'#conversion-days tbody th time[datetime="{hour:%Y-%m-%dT%H:00:00Z}"]')
    expect(cell).to_have_text(f"{local:%Y-%m-%d %H:%M} (UTC{offset})")
    assert sideways_overflow(page) == 0, f"the hourly traffic is wider than {width} px"
    assert axe_violations(page, "section:has(#traffic-heading)") == []
    assert serious_violations(page) == []
    assert console.script_errors() == []


@pytest.mark.parametrize("width", (1280, 390))
def test_the_earnings_chart_toggles_to_hours(open_portal, server: LiveServer, width: int) -> None:
    page, console = open_portal(DEMO_PUBLISHER_INDEX, viewport={"width": width, "height": 900})
    sign_in_to_portal(page)
    page.goto(f"{server.url}/portal")
    page.locator("#earnings").get_by_role("link", name="Per hour").click()
    expect(page.locator("#earnings-zone")).to_have_text("UTC")
    page.locator("#earnings").get_by_label("Time zone").select_option("Australia/Adelaide")
    page.locator("#earnings-form").get_by_role("button", name="Show").click()
    expect(page.locator("#earnings-zone")).to_have_text("Australia/Adelaide")
    expect(page.locator("#earnings figcaption")).to_contain_text("hours in Australia/Adelaide")
    assert sideways_overflow(page) == 0, f"the hourly chart is wider than {width} px"
    assert axe_violations(page, "#earnings") == []
    assert serious_violations(page) == []
    assert console.script_errors() == []
