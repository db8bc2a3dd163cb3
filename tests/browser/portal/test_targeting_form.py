"""The campaign form's targeting controls in headless Chromium: an advertiser picks countries, types a region,
ticks devices, chooses hours on the week grid (a drag with the mouse, arrow keys and Space, a shortcut), chooses
a time zone, lists keywords and sets a frequency cap; a bad region is explained beside its field without losing what
was chosen; once corrected, the draft is stored with every rule and its page shows them chosen again. The grid is
axe-clean and, on a phone, scrolls inside its card while the page does not scroll sideways."""

from __future__ import annotations

import os
from datetime import UTC, timedelta
from pathlib import Path

from playwright.sync_api import Locator, Page, expect

from adnet.campaigns.models import Campaign
from tests.browser.conftest import LiveServer, serious_violations, sideways_overflow, sign_in_to_portal

ADVERTISER_INDEX = 9  # a funded development account no other browser test signs in with
PHONE = {"width": 390, "height": 844}
# The picture of docs/advertisers.md, rewritten only by ``make screenshots``.
SCREENSHOT = Path(__file__).resolve().parents[3] / "docs" / "screenshots" / "targeting-week.png"
UPDATE_SCREENSHOTS = os.environ.get("ADNET_UPDATE_SCREENSHOTS") == "1"


def cell(page: Page, name: str) -> Locator:
    return page.get_by_role("checkbox", name=name, exact=True)


def test_an_advertiser_sets_targeting_rules_with_plain_controls(open_portal, server: LiveServer, tmp_path) -> None:
    page, console = open_portal(ADVERTISER_INDEX)
    sign_in_to_portal(page)
    page.get_by_role("navigation", name="Portal").get_by_role("link", name="Advertise").click()
    page.get_by_role("button", name="Open the account").click()
    page.get_by_role("link", name="New campaign").click()

    start = server.clock.now().astimezone(UTC)
    page.get_by_label("Name", exact=True).fill("Targeted sale")
    page.get_by_label("Starts (UTC)").fill(start.strftime("%Y-%m-%dT%H:%M"))
    page.get_by_label("Ends (UTC)").fill((start + timedelta(days=7)).strftime("%Y-%m-%dT%H:%M"))
    page.get_by_label("CPM (G$ per 1000 billable impressions)").fill("2")
    page.get_by_label("CPC (G$ per billable click)").fill("0")
    page.get_by_label("Total budget (G$)").fill("10")
    page.get_by_label("Only in: countries").select_option(["DE", "FR"])
    page.get_by_label("Only in: regions").fill("US-CA, US-XX")
    devices = page.get_by_role("group", name="Only on these devices")
    devices.get_by_label("Mobile").check()
    devices.get_by_label("Tablet").check()
    # A drag across Monday 09:00 to 12:00 with the mouse.
    cell(page, "Monday 09:00 to 10:00").hover()
    page.mouse.down()
    cell(page, "Monday 10:00 to 11:00").hover()
    cell(page, "Monday 11:00 to 12:00").hover()
    page.mouse.up()
    # The keyboard: one tab stop for the grid, arrows to move, Space to choose, Shift with an arrow to carry on.
    cell(page, "Monday 11:00 to 12:00").focus()
    for _ in range(5):
        page.keyboard.press("ArrowDown")
    for _ in range(7):
        page.keyboard.press("ArrowRight")
    expect(cell(page, "Saturday 18:00 to 19:00")).to_be_focused()
    page.keyboard.press("Space")
    page.keyboard.press("Shift+ArrowDown")
    expect(cell(page, "Sunday 18:00 to 19:00")).to_be_checked()
    assert page.eval_on_selector_all("[data-week] input[tabindex='0']", "cells => cells.length") == 1
    assert serious_violations(page, ".week-scroll") == []
    page.get_by_label("Time zone of these days and hours").select_option("Europe/Berlin")
    page.get_by_label("Never on pages with one of these keywords").fill("gambling, casino")
    page.get_by_label("At most this many billed impressions per viewer").fill("3")

    page.get_by_role("button", name="Create draft").click()
    expect(page.locator("#settings-error")).to_contain_text("Countries and regions, item 4: a country code such as DE")
    expect(page.get_by_label("Only in: regions")).to_have_attribute("aria-invalid", "true")
    expect(cell(page, "Sunday 18:00 to 19:00")).to_be_checked()
    expect(cell(page, "Monday 10:00 to 11:00")).to_be_checked()
    page.get_by_label("Only in: regions").fill("US-CA")
    page.get_by_role("button", name="Create draft").click()
    expect(page.get_by_role("heading", name="Targeted sale", level=1)).to_be_visible()

    campaign_id = page.url.rsplit("/", 1)[1]
    stored = server.call(lambda: Campaign.get(id=campaign_id))
    assert stored.targeting["geo_include"] == ["FR", "DE", "US-CA"]  # the picker lists countries by name
    assert stored.targeting["devices_include"] == ["mobile", "tablet"]
    assert stored.targeting["week_hours"] == {"mon": [9, 10, 11], "sat": [18], "sun": [18]}
    assert stored.targeting["time_zone"] == "Europe/Berlin"
    assert stored.targeting["keywords_exclude"] == ["gambling", "casino"]
    assert stored.frequency_cap == 3
    page.get_by_role("link", name="Targeting").click()
    expect(page.get_by_role("group", name="Only on these devices").get_by_label("Tablet")).to_be_checked()
    expect(page.get_by_label("Only in: regions")).to_have_value("US-CA")
    expect(cell(page, "Saturday 18:00 to 19:00")).to_be_checked()
    expect(cell(page, "Monday 12:00 to 13:00")).not_to_be_checked()
    assert console.script_errors() == []
    # Last: Playwright's screenshot styles the page inline, which the CSP reports.
    screenshot = SCREENSHOT if UPDATE_SCREENSHOTS else tmp_path / SCREENSHOT.name
    page.locator("fieldset:has(> legend:text-is('Schedule'))").screenshot(path=str(screenshot))
    assert screenshot.stat().st_size > 5_000  # a rendered grid, not a blank box


def test_the_week_grid_works_on_a_phone_without_widening_the_page(open_portal, server: LiveServer) -> None:
    page, console = open_portal(ADVERTISER_INDEX, viewport=PHONE)
    sign_in_to_portal(page)
    page.goto(f"{server.url}/portal/advertise")
    if page.get_by_role("button", name="Open the account").count():  # when this test runs first
        page.get_by_role("button", name="Open the account").click()
    page.get_by_role("link", name="New campaign").click()
    grid = page.locator(".week-scroll")
    grid.scroll_into_view_if_needed()
    assert sideways_overflow(page) == 0
    assert grid.evaluate("box => box.scrollWidth > box.clientWidth")  # the grid scrolls inside its card
    page.get_by_role("button", name="Weekdays 9 to 17").click()
    expect(cell(page, "Friday 16:00 to 17:00")).to_be_checked()
    expect(cell(page, "Friday 17:00 to 18:00")).not_to_be_checked()
    cell(page, "Sunday 23:00 to 00:00").click()
    expect(cell(page, "Sunday 23:00 to 00:00")).to_be_checked()
    assert sideways_overflow(page) == 0
    assert serious_violations(page) == []
    assert console.errors() == []
