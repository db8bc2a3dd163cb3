"""Issue 9's whole path in headless Chromium, against the live server of ``tests/browser/conftest.py``, with the
injected EIP-1193 test wallet: an advertiser signs in, opens its account, deposits G$ from its wallet into the vault,
creates a campaign with a creative and a task, funds the budget and the task's pool, and submits it; an operator
(the live server's ``ADNET_OPERATORS``) signs in in another browser profile, sees the banner previewed at its size
and approves it; ``GET /api/serve`` then serves it; an impression tracked through ``/api/track`` shows in the
advertiser's report page, and its CSV.

The demo campaigns are paused meanwhile (``live_campaigns``), so the new campaign is the only one that can serve.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from datetime import UTC, timedelta

import pytest
from playwright.sync_api import Page, expect
from quart import current_app

from adnet.campaigns.models import Campaign, CampaignStatus, Creative
from tests.browser.conftest import OPERATOR_INDEX, Console, LiveServer, sign_in_to_portal
from tests.conftest import rebuild_index

ADVERTISER_INDEX = 7  # a funded development account no other browser test signs in with
BROWSER_AGENT = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36"
CAMPAIGN_NAME = "Browser sale"


@pytest.fixture
def signed_in(open_portal: Callable[..., tuple[Page, Console]]) -> Callable[[int], tuple[Page, Console]]:
    """``signed_in(index)``: a fresh browser profile whose wallet is development account ``index``, signed in to
    the portal."""

    def open_signed_in(index: int) -> tuple[Page, Console]:
        page, console = open_portal(index)
        sign_in_to_portal(page)
        return page, console

    return open_signed_in


@pytest.fixture
def ends_what_it_creates(server: LiveServer) -> Iterator[None]:
    """Whatever campaign the test leaves approved is ended afterwards, so it never serves in another test."""
    yield
    server.call(_end_flow_campaigns)


async def _end_flow_campaigns() -> None:
    await Campaign.filter(name=CAMPAIGN_NAME).exclude(status=CampaignStatus.ENDED).update(status=CampaignStatus.ENDED)
    await rebuild_index(current_app)


def test_an_advertiser_funds_and_submits_a_campaign_an_operator_approves_it_and_it_serves(
        signed_in, server, live_campaigns, ends_what_it_creates):
    live_campaigns()  # no demo campaign serves while this test runs
    page, console = signed_in(ADVERTISER_INDEX)

    # The account: opened from the page, then funded by a deposit the wallet sends (approve, deposit).
    page.get_by_role("navigation", name="Portal").get_by_role("link", name="Advertise").click()
    page.get_by_role("button", name="Open the account").click()
    expect(page.locator("#balance-available")).to_have_text("0 G$")
    page.locator("#deposit-amount").fill("40")
    page.get_by_role("button", name="Deposit").click()
    expect(page.locator("#topup-status")).to_have_attribute("data-state", "credited")
    expect(page.locator("#topup-status")).to_contain_text("Credited: 40 G$ added to your balance.")
    expect(page.locator("#balance-available")).to_have_text("40 G$")

    # A draft campaign from the form; a wrong field is explained beside it first.
    page.get_by_role("link", name="New campaign").click()
    start = (server.clock.now() - timedelta(minutes=5)).astimezone(UTC)
    page.get_by_label("Name").fill(CAMPAIGN_NAME)
    page.get_by_label("Starts (UTC)").fill(start.strftime("%Y-%m-%dT%H:%M"))
    page.get_by_label("Ends (UTC)").fill((start + timedelta(days=7)).strftime("%Y-%m-%dT%H:%M"))
    page.get_by_label("CPM (G$ per 1000 billable impressions)").fill("2")
    page.get_by_label("CPC (G$ per billable click)").fill("0.1")
    page.get_by_label("Total budget (G$)").fill("abc")
    page.get_by_label("Banner sizes").fill("300x250")
    page.get_by_role("button", name="Create draft").click()
    budget = page.get_by_label("Total budget (G$)")
    expect(budget).to_have_attribute("aria-invalid", "true")
    expect(budget).to_have_accessible_description(re.compile(r"^A G\$ amount more than 0, such as 2.5"))
    expect(page.locator("#settings-budget-error")).to_have_text(
        "A G$ amount more than 0, such as 2.5: digits, at most 18 decimals, no sign.")
    page.get_by_label("Total budget (G$)").fill("30")
    page.get_by_role("button", name="Create draft").click()
    expect(page.get_by_role("heading", name=CAMPAIGN_NAME, level=1)).to_be_visible()
    expect(page.locator("#campaign")).to_have_attribute("data-status", "draft")
    campaign_id = page.url.rsplit("/", 1)[1]

    # A creative (a banner adnet itself serves, so the preview loads) and a quiz task with a G$ reward, in the
    # page's Creatives and tasks section.
    sections = page.get_by_role("navigation", name=f"Sections of {CAMPAIGN_NAME}")
    sections.get_by_role("link", name="Creatives and tasks").click()
    expect(page).to_have_url(f"{server.url}/portal/advertise/campaigns/{campaign_id}/creatives")
    banner_url = f"{server.url}/static/demo/banner-1-300x250.svg"
    page.get_by_label("Banner URL (image or video)").fill(banner_url)
    page.get_by_label("Target URL").fill("https://example.com/spring")
    page.locator("#creative-form").get_by_label("Description").fill("Spring sale banner")
    page.get_by_role("button", name="Add creative").click()
    expect(page.locator("#campaign-done")).to_have_text("Creative added; it waits for review.")
    expect(page.locator(".creative [data-creative-status]")).to_have_text("review")
    quiz = page.locator("#new-QUIZ")
    quiz.locator("summary").click()
    quiz.get_by_label("Title").fill("Quick quiz")
    quiz.get_by_label("Question").fill("Which token pays adnet rewards?")
    quiz.get_by_label("Accepted answers").fill("G$\nGoodDollar")
    quiz.get_by_label("Reward per completion (G$)").fill("0.5")
    quiz.get_by_role("button", name="Add “Quiz”").click()
    expect(page.locator("#campaign-done")).to_have_text(
        "Quiz task Quick quiz added; it is reviewed with the campaign.")
    task_row = page.locator("table.tasks tbody tr", has_text="Quick quiz")
    expect(task_row).to_contain_text("Quiz")

    # Funding: the budget (its own section), then the task's pool, each from the deposited balance.
    sections.get_by_role("link", name="Budget").click()
    page.locator("#allocate-form").get_by_label("Amount (G$)").fill("25")
    page.get_by_role("button", name="Allocate").click()
    expect(page.locator("#campaign-remaining")).to_have_text("25 G$")
    sections.get_by_role("link", name="Creatives and tasks").click()
    task_row.get_by_label("G$ for the pool of Quick quiz").fill("5")
    task_row.get_by_role("button", name="Fund pool").click()
    expect(page.locator("table.tasks [data-pool]")).to_have_text("5 G$")
    sections.get_by_role("link", name="Budget").click()
    expect(page.locator("#campaign-available")).to_have_text("10 G$")

    # The campaign page fits a phone: nothing but its tables scrolls sideways.
    page.set_viewport_size({"width": 375, "height": 740})
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 375, f"the campaign page scrolls sideways on a phone ({width}px)"
    page.set_viewport_size({"width": 1280, "height": 900})

    sections.get_by_role("link", name="Overview").click()
    page.get_by_role("button", name="Submit for review").click()
    expect(page.locator("#campaign")).to_have_attribute("data-status", "review")
    expect(page.locator("#campaign-state")).to_have_text("review")

    # The operator: the banner previewed at its size, then approved.
    operator_page, operator_console = signed_in(OPERATOR_INDEX)
    operator_page.get_by_role("navigation", name="Portal").get_by_role("link", name="Operator").click()
    review = operator_page.locator(f"#review-{campaign_id}")
    expect(review).to_contain_text(CAMPAIGN_NAME)
    preview = review.locator(".creative-box img")
    creative_id = server.call(lambda: Creative.get(campaign_id=campaign_id).values_list("id", flat=True))
    expect(preview).to_have_attribute("src", f"/portal/operator/creatives/{creative_id}/banner")  # served by adnet
    operator_page.wait_for_function("image => image.complete && image.naturalWidth > 0", arg=preview.element_handle())
    box = preview.bounding_box()
    assert box is not None and (round(box["width"]), round(box["height"])) == (300, 250)
    expect(review.locator(".tasks-in-words")).to_contain_text(
        "Quiz: “Which token pays adnet rewards?” — answer G$ or GoodDollar, typed.")
    review.get_by_role("button", name="Approve campaign").click()
    expect(operator_page.locator("#review-done")).to_have_text(f"Approved {CAMPAIGN_NAME}.")
    expect(operator_page.locator(f"#review-{campaign_id}")).to_have_count(0)

    # Served: the new campaign's creative, with its task attached, to a page of the demo site (adnet's own host).
    page_of_demo_site = {"User-Agent": BROWSER_AGENT, "Origin": server.url}
    server.call(lambda: rebuild_index(server.app))
    served = page.request.get(f"{server.url}/api/serve", headers=page_of_demo_site, params={
        "siteId": server.demo["siteId"], "size": "300x250", "attached": "1"}).json()
    assert served["kind"] == "BANNER" and served["ad"]["campaignId"] == campaign_id, served
    assert served["ad"]["bannerUrl"] == banner_url and served["ad"]["description"] == "Spring sale banner"
    assert [task["title"] for task in served["attachedTasks"]] == ["Quick quiz"]

    # A tracked impression, then the advertiser's report.
    server.clock.advance(seconds=2)
    tracked = page.request.post(f"{server.url}/api/track", headers=page_of_demo_site, data={
        "type": "IMPRESSION", "campaignId": campaign_id, "adId": served["ad"]["id"],
        "siteId": server.demo["siteId"], "fingerprint": "advertiser-flow-1", "rendered": True,
        "viewportVisible": True, "renderTime": 25, "timestamp": int(server.clock.now().timestamp() * 1000),
        "pageUrl": f"{server.url}/article", "userAgent": BROWSER_AGENT,
        "trackingToken": served["ad"]["trackingToken"]})
    assert tracked.status == 201 and tracked.json()["status"] == "recorded", tracked.text()

    page.get_by_role("link", name="Report", exact=True).click()
    expect(page.get_by_role("heading", name="Report: Browser sale")).to_be_visible()
    expect(page.locator("#total-impressions")).to_have_text("1")
    expect(page.locator("#total-billable")).to_have_text("1")
    expect(page.locator("#total-spend")).to_have_text("0.002 G$")
    today = server.clock.now().astimezone(UTC).date().isoformat()
    expect(page.locator("#report-days tbody tr", has_text=today).locator("td").first).to_have_text("1")
    csv_link = page.locator("#report-csv")
    csv_text = page.request.get(server.url + csv_link.get_attribute("href")).text()
    assert re.search(r"^total,1,1,0,0,0\.000000,0\.002,2,0,0", csv_text, re.M), csv_text

    # Another range: a refused one is said beside its field; yesterday alone has nothing.
    yesterday = (server.clock.now().astimezone(UTC).date() - timedelta(days=1)).isoformat()
    page.get_by_label("From", exact=True).fill(today)
    page.get_by_label("To", exact=True).fill(yesterday)
    page.get_by_role("button", name="Show").click()
    to = page.get_by_label("To", exact=True)
    expect(to).to_have_attribute("aria-invalid", "true")
    expect(to).to_have_accessible_description("To: the last day is before the first.")
    page.get_by_label("From", exact=True).fill(yesterday)
    page.get_by_role("button", name="Show").click()
    expect(page.locator("#total-impressions")).to_have_text("0")
    expect(page.get_by_label("To", exact=True)).not_to_have_attribute("aria-invalid", "true")

    # Ended by its owner, it serves no more (and leaves the other browser tests' serving as it found it).
    page.get_by_role("link", name=CAMPAIGN_NAME).click()
    page.get_by_role("button", name="End campaign").click()
    expect(page.locator("#campaign")).to_have_attribute("data-status", "ended")
    expect(page.locator("#campaign-available")).to_have_text("39.998 G$")  # 40 less the impression it paid for
    server.call(lambda: rebuild_index(server.app))
    after = page.request.get(f"{server.url}/api/serve", params={"siteId": server.demo["siteId"], "size": "300x250"})
    assert after.json()["kind"] == "NONE"
    for errors in (console, operator_console):
        assert errors.page_errors == [] and errors.script_errors() == []
