"""The campaign form's estimate in headless Chromium, at a desktop's 1280 px and a phone's 390 px: as the advertiser
fills in the prices and the budget and narrows the countries, the estimate (HTMX) shows the matching requests a
day, the share won, the days the budget lasts and the wallet reach, changing with the form; the form fits the
screen and axe-core finds nothing serious in it."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from playwright.sync_api import expect

from adnet.accounts.models import Site
from adnet.delivery.models import RequestHour
from tests.browser.conftest import LiveServer, serious_violations, sideways_overflow, sign_in_to_portal

DEMO_ADVERTISER_INDEX = 1  # the demo's advertiser: the test only reads its form, creating nothing


@pytest.fixture(scope="module")
def recorded_requests(server: LiveServer) -> None:
    """A day of recorded requests on the demo's sites: 500 an hour from Germany, 3 from France, on desktops."""
    now = server.clock.now().replace(minute=0, second=0, microsecond=0)

    async def record() -> None:
        site_ids = await Site.filter(active=True).values_list("id", flat=True)
        await RequestHour.bulk_create([
            RequestHour(site_id=site_id, hour=now - timedelta(hours=hour), country=country, device="desktop",
                        requests=requests)
            for site_id in site_ids[:1] for hour in range(1, 25) for country, requests in (("DE", 500), ("FR", 3))],
            ignore_conflicts=True)
        await server.services.serving.rebuild()

    server.call(record)


@pytest.mark.parametrize("width", (1280, 390))
def test_the_estimate_follows_the_campaign_form(open_portal, server: LiveServer, recorded_requests,
                                                width: int) -> None:
    page, console = open_portal(DEMO_ADVERTISER_INDEX, viewport={"width": width, "height": 900})
    sign_in_to_portal(page)
    page.goto(f"{server.url}/portal/advertise/campaigns/new")
    estimate = page.locator("#campaign-estimate")
    expect(estimate).to_contain_text("To see an estimate")  # the form is empty: a hint, not an error
    page.get_by_label("CPM (G$ per 1000 billable impressions)").fill("50")
    page.get_by_label("CPC (G$ per billable click)").fill("0")
    page.get_by_label("Total budget (G$)").fill("100")
    figures = page.locator("#campaign-estimate-figures")
    expect(figures).to_contain_text("Matching requests a day")
    # 503 an hour over the day and the minutes of this hour recorded so far: about 12,000 a day, rounded down.
    expect(figures.locator("dd").first).to_have_text(re.compile(r"^1[12],\d00$"))

    page.get_by_label("Only in: countries").select_option(["FR"])
    expect(figures.locator("dd").first).to_have_text("fewer than 100")  # 72 a day: never told as a number
    expect(figures).to_contain_text("Proven wallets it reaches (30 days)")
    assert sideways_overflow(page) == 0, f"the campaign form is wider than {width} px"
    assert serious_violations(page) == []
    assert console.script_errors() == []
