"""The campaign report's figures per audience group in headless Chromium, at a desktop's 1280 px and a phone's
390 px: the demo advertiser's report shows a group of 120 viewers with its figures, pools two groups of a few viewers
each and withholds their figures, links the CSV; the page fits the screen and axe-core finds no violation there."""

from __future__ import annotations

import re
from decimal import Decimal

import pytest
from playwright.sync_api import expect

from adnet.campaigns.models import Creative
from adnet.core.ids import new_ordered_id
from adnet.delivery.models import EventType, TrackingEvent
from tests.browser.conftest import LiveServer, axe_violations, serious_violations, sideways_overflow, sign_in_to_portal

DEMO_ADVERTISER_INDEX = 1
G = 10**18


@pytest.fixture
def by_group(server: LiveServer):
    """Today, billed impressions of the first demo campaign: 120 viewers through group 1 (a tenth of them clicked,
    1 G$ each event), 3 and 2 viewers through groups 2 and 3; removed afterwards."""
    campaign_id, site_id = server.demo["campaignIds"][0], server.demo["siteId"]

    async def book() -> list[str]:
        now = server.clock.now()
        creative = await Creative.filter(campaign_id=campaign_id).first()
        assert creative is not None
        events = [TrackingEvent(id=new_ordered_id("ev"), type=kind, campaign_id=campaign_id, creative_id=creative.id,
                                site_id=site_id, fingerprint=f"fp-audience-{group}-{number}", rendered=True,
                                viewport_visible=True, billable=True, cost=Decimal(G), publisher_amount=Decimal(0),
                                received_at=now, audience_group=group)
                  for group, viewers in ((1, 120), (2, 3), (3, 2)) for number in range(viewers)
                  for kind in ((EventType.IMPRESSION, EventType.CLICK) if number % 10 == 0 else
                               (EventType.IMPRESSION,))]
        await TrackingEvent.bulk_create(events)
        return [event.id for event in events]

    event_ids = server.call(book)
    yield

    async def remove() -> None:
        await TrackingEvent.filter(id__in=event_ids).delete()

    server.call(remove)


@pytest.mark.parametrize("width", (1280, 390))
def test_the_report_shows_figures_per_audience_group_and_none_of_small_ones(open_portal, server: LiveServer,
                                                                           by_group, width: int) -> None:
    page, console = open_portal(DEMO_ADVERTISER_INDEX, viewport={"width": width, "height": 900})
    sign_in_to_portal(page)
    campaign_id = server.demo["campaignIds"][0]
    page.goto(f"{server.url}/portal/advertise/campaigns/{campaign_id}/report")
    expect(page.get_by_role("heading", name="By audience group")).to_be_visible()
    rows = page.locator("#audience-table tbody tr")
    expect(rows).to_have_count(2)
    expect(rows.nth(0).locator("td")).to_have_text(["100+", "120", "12", "0", "132"])
    expect(rows.nth(1)).to_contain_text("Groups 2, 3 (each fewer than 100 viewers)")
    expect(rows.nth(1)).to_contain_text("Not shown: fewer than 100 viewers")
    csv_link = page.locator("#audience-csv")
    expect(csv_link).to_have_attribute("href", re.compile(
        rf"^/portal/advertise/campaigns/{campaign_id}/report/audiences\.csv\?from=\d{{4}}-\d\d-\d\d&to="))
    assert sideways_overflow(page) == 0, f"the report is wider than {width} px"
    assert axe_violations(page, "#audience-report") == []
    assert serious_violations(page) == []
    assert console.script_errors() == []
