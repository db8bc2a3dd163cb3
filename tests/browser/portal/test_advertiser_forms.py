"""The advertiser's forms and answers in Chromium, at a desktop's 1280 px and a phone's 390 px: a task added from
its kind's plain fields with a refusal said next to its field, the answers to the demo's poll charted, a draft
deleted from its button, and axe-core finding no serious or critical violation on these pages."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, timedelta

import pytest
from playwright.sync_api import Page, expect

from adnet.campaigns.models import Campaign
from tests.browser.conftest import Console, LiveServer, serious_violations, sideways_overflow, sign_in_to_portal

DEMO_ADVERTISER_INDEX = 1  # the demo's advertiser wallet: it owns the demo's units


@pytest.mark.parametrize("width", [1280, 390])
def test_task_forms_answers_and_deletion(open_portal: Callable[..., tuple[Page, Console]], server: LiveServer,
                                         width: int) -> None:
    page, console = open_portal(DEMO_ADVERTISER_INDEX, viewport={"width": width, "height": 900})
    sign_in_to_portal(page)

    # A draft, then a visit task refused for its dwell, said next to the field, then added.
    page.goto(f"{server.url}/portal/advertise/campaigns/new")
    start = (server.clock.now() + timedelta(days=1)).astimezone(UTC)
    page.get_by_label("Name").fill(f"Forms at {width}")
    page.get_by_label("Starts (UTC)").fill(start.strftime("%Y-%m-%dT%H:%M"))
    page.get_by_label("CPM (G$ per 1000 billable impressions)").fill("-1")
    page.get_by_label("CPC (G$ per billable click)").fill("0.1")
    page.get_by_label("Total budget (G$)").fill("10")
    page.get_by_role("button", name="Create draft").click()
    expect(page.locator("#settings-cpm-error")).to_have_text(
        "A G$ amount of 0 or more, such as 2.5: digits, at most 18 decimals, no sign.")
    page.get_by_label("CPM (G$ per 1000 billable impressions)").fill("2")
    page.get_by_role("button", name="Create draft").click()
    expect(page.locator("#campaign")).to_have_attribute("data-status", "draft")
    campaign_id = page.url.rsplit("/", 1)[1]
    page.get_by_role("link", name="Creatives and tasks").click()

    visit = page.locator("#new-VISIT_URL")
    visit.locator("summary").click()
    visit.get_by_label("Title").fill("See the shop")
    visit.get_by_label("Page to visit").fill("https://example.com/shop")
    visit.get_by_label("Seconds on the page").fill("7200")
    visit.get_by_role("button", name="Add “Visit a page”").click()
    dwell = page.locator("#new-VISIT_URL").get_by_label("Seconds on the page")
    expect(dwell).to_have_attribute("aria-invalid", "true")
    expect(dwell).to_have_accessible_description("Whole seconds from 1 to 3600.")
    for kind in ("SIGN_MESSAGE", "ONCHAIN_EVENT", "QUIZ", "POLL", "FEEDBACK", "SURVEY"):
        page.locator(f"#new-{kind} summary").click()  # every form open for axe
    assert serious_violations(page) == [] and sideways_overflow(page) == 0
    dwell.fill("8")
    page.locator("#new-VISIT_URL").get_by_role("button", name="Add “Visit a page”").click()
    expect(page.locator("#campaign-done")).to_have_text("Visit a page task See the shop added; it is reviewed with "
                                                        "the campaign.")
    expect(page.locator("table.tasks")).to_contain_text("See the shop")

    # The demo poll's answers, charted.
    (poll_id,) = server.demo["taskIds"]["POLL"]
    page.goto(f"{server.url}/portal/advertise/units/{poll_id}/results")
    expect(page.get_by_role("heading", level=1)).to_contain_text("Answers: ")
    expect(page.get_by_role("img", name="Votes: Which chain do you use most?")).to_be_visible()
    expect(page.get_by_role("link", name="Download every answer as CSV")).to_have_attribute(
        "href", f"/portal/advertise/units/{poll_id}/results.csv")
    assert serious_violations(page) == [] and sideways_overflow(page) == 0

    # The draft is deleted from the danger zone, once its name is typed (the server checks); the account page says so.
    page.goto(f"{server.url}/portal/advertise/campaigns/{campaign_id}")
    danger = page.get_by_role("region", name="Danger zone")
    danger.get_by_label(f"Type Forms at {width} to confirm").fill("Forms")
    danger.get_by_role("button", name="Delete this draft").click()
    expect(danger.get_by_role("alert")).to_have_text(f"Type Forms at {width} to confirm that the draft is deleted.")
    expect(danger.get_by_label(f"Type Forms at {width} to confirm")).to_have_attribute("aria-invalid", "true")
    assert serious_violations(page) == [] and sideways_overflow(page) == 0
    danger.get_by_label(f"Type Forms at {width} to confirm").fill(f"Forms at {width}")
    danger.get_by_role("button", name="Delete this draft").click()
    expect(page).to_have_url(f"{server.url}/portal/advertise")
    expect(page.get_by_role("status").first).to_contain_text(f"Deleted the draft Forms at {width}.")
    assert not server.call(lambda: Campaign.exists(id=campaign_id))
    assert console.page_errors == []
