"""The reach section of the campaign report in headless Chromium, at 1280 px and 390 px: htmx loads it into the
demo advertiser's report, it shows the distinct viewers, the average frequency and the distribution (a bar chart
and its table), fits the screen, and axe-core finds nothing serious."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from adnet.delivery.models import ReachViewerDaily
from adnet.delivery.reach import viewer_key
from tests.browser.conftest import LiveServer, serious_violations, sideways_overflow, sign_in_to_portal

DEMO_ADVERTISER_INDEX = 1
# viewer id -> billed impressions today
VIEWERS = {"viewer-a": 1, "viewer-b": 4, "viewer-c": 12}


@pytest.fixture
def counted(server: LiveServer):
    """A day of per-viewer counts of the first demo campaign on the demo site, removed afterwards."""
    campaign_id = server.demo["campaignIds"][0]

    async def count() -> list[int]:
        created = [await ReachViewerDaily.create(
            day=server.clock.now().date(), campaign_id=campaign_id, creative_id="crv_reach",
            site_id=server.demo["siteId"], viewer_key=viewer_key(campaign_id, viewer), impressions=impressions)
            for viewer, impressions in VIEWERS.items()]
        return [row.id for row in created]

    ids = server.call(count)
    yield campaign_id
    server.call(lambda: ReachViewerDaily.filter(id__in=ids).delete())


@pytest.mark.parametrize("width", (1280, 390))
def test_the_report_loads_the_reach_section_and_fits(open_portal, server: LiveServer, counted: str, width: int
                                                      ) -> None:
    page, console = open_portal(DEMO_ADVERTISER_INDEX, viewport={"width": width, "height": 900})
    sign_in_to_portal(page)
    page.goto(f"{server.url}/portal/advertise/campaigns/{counted}/report")
    expect(page.get_by_role("heading", name="Reach and frequency")).to_be_visible()
    expect(page.locator("#reach-total")).to_have_text("3")
    expect(page.locator("#reach-average")).to_have_text("5.67")
    expect(page.locator("#reach svg.tally-chart")).to_be_visible()
    distribution = page.locator("#reach-distribution tbody tr")
    expect(distribution).to_have_count(6)
    expect(distribution.last).to_contain_text("1")
    assert sideways_overflow(page) == 0, f"the report with its reach is wider than {width} px"
    assert serious_violations(page, "#reach") == []  # the section; the report's own days table is not ours
    assert console.script_errors() == []
