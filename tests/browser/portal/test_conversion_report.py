"""The campaign report page's conversions in headless Chromium, at a desktop's 1280 px and a phone's 390 px: the
demo advertiser opens its campaign's report from the campaign page and sees the conversions chart (a bar per day,
named by its value), the conversions per day with their rate, value and ROAS, and the goal table; the page fits the
screen and axe-core finds no violation in the conversions' sections."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from playwright.sync_api import expect

from adnet.campaigns.models import ConversionGoal
from adnet.conversions.models import Conversion
from adnet.core.ids import new_id
from adnet.delivery.models import EventType, ReportDaily, TrafficDaily
from tests.browser.conftest import LiveServer, axe_violations, serious_violations, sideways_overflow, sign_in_to_portal

DEMO_ADVERTISER_INDEX = 1
G = 10**18


@pytest.fixture
def converted(server: LiveServer):
    """Today, 4 billed clicks of the first demo campaign on the demo site for 2 G$, a goal and two paid conversions
    of it worth 30 G$ together; all removed afterwards."""
    campaign_id, site_id = server.demo["campaignIds"][0], server.demo["siteId"]

    async def book() -> tuple[list[int], list[int], str]:
        now = server.clock.now()
        traffic = [await TrafficDaily.create(day=now.date(), site_id=site_id, campaign_id=campaign_id, type=kind,
                                             events=events, cost=G, publisher_amount=G * 7 // 10)
                   for kind, events in ((EventType.IMPRESSION, 100), (EventType.CLICK, 4))]
        report = await ReportDaily.create(day=now.date(), campaign_id=campaign_id, site_id=site_id, placement="top",
                                          impressions=100, clicks=4, cost=2 * G, publisher_amount=G * 14 // 10)
        goal_id = new_id("goal")
        goal = await ConversionGoal.create(id=goal_id, campaign_id=campaign_id, name="Purchase",
                                           event=f"purchase-{goal_id[-8:].lower()}", cpa=5 * G, created_at=now,
                                           updated_at=now)
        for order, value in (("browser-a", 20 * G), ("browser-b", 10 * G)):
            await Conversion.create(id=new_id("cv"), campaign_id=campaign_id, goal=goal, order_id=order,
                                    site_id=site_id, placement="top", value=Decimal(value), occurred_at=now,
                                    received_at=now, clicked_at=now - timedelta(minutes=1), attributed=True,
                                    paid=True, cost=Decimal(5 * G), publisher_amount=Decimal(35 * G // 10))
        return [row.id for row in traffic], [report.id], goal.id

    traffic_ids, report_ids, goal_id = server.call(book)
    yield

    async def remove() -> None:
        await Conversion.filter(goal_id=goal_id).delete()
        await ConversionGoal.filter(id=goal_id).delete()
        await TrafficDaily.filter(id__in=traffic_ids).delete()
        await ReportDaily.filter(id__in=report_ids).delete()

    server.call(remove)


@pytest.mark.parametrize("width", (1280, 390))
def test_the_report_shows_the_conversions_chart_and_tables(open_portal, server: LiveServer, converted,
                                                           width: int) -> None:
    page, console = open_portal(DEMO_ADVERTISER_INDEX, viewport={"width": width, "height": 900})
    sign_in_to_portal(page)
    campaign_id = server.demo["campaignIds"][0]
    page.goto(f"{server.url}/portal/advertise/campaigns/{campaign_id}")
    page.get_by_role("link", name="Report").first.click()
    expect(page.get_by_role("heading", name="Conversions per day")).to_be_visible()
    today = server.clock.now().date().isoformat()
    chart = page.locator("#conversions-heading + p + figure svg")
    expect(chart).to_be_visible()
    expect(chart.locator(f'[aria-label="{today}: 2 conversions"]')).to_have_count(1)
    # spend 2 G$ of traffic + 10 G$ of conversions; value 30 G$; 2 conversions of 4 billed clicks
    expect(page.locator("#total-conversions")).to_have_text("2")
    expect(page.locator("#total-roas")).to_have_text("2.50\u00d7")
    day = page.locator("#conversion-days tbody tr", has=page.get_by_role("rowheader", name=today))
    expect(day.locator("td")).to_have_text(["2", "50.00 %", "10", "6", "30", "2.50\u00d7"])
    goal = page.locator("#goal-table tbody tr")
    expect(goal).to_have_count(1)
    expect(goal.locator("th, td")).to_have_text(["Purchase", "2", "10", "5", "30", "3.00\u00d7"])
    assert sideways_overflow(page) == 0, f"the report is wider than {width} px"
    for section in ("#conversions-heading", "#goals-heading"):
        assert axe_violations(page, f"section:has({section})") == [], section
    assert serious_violations(page) == []
    assert console.script_errors() == []
