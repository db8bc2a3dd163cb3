"""The dashboard's earnings chart over a range of days the publisher picks, in headless Chromium at 1280 and 390 px:
the panel alone is swapped, and a range that is not one is refused beside its field."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, timedelta

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import Console, serious_violations, sideways_overflow, sign_in_to_portal

DEMO_PUBLISHER_INDEX = 2  # the demo data's publisher


@pytest.mark.parametrize("width", [1280, 390])
def test_the_earnings_chart_takes_a_range_of_days(open_portal: Callable[..., tuple[Page, Console]],
                                                 width: int) -> None:
    page, console = open_portal(DEMO_PUBLISHER_INDEX, viewport={"width": width, "height": 900})
    sign_in_to_portal(page)
    panel = page.locator("#earnings")
    first, last = panel.get_by_label("From", exact=True), panel.get_by_label("To", exact=True)
    today = date.fromisoformat(last.input_value())
    assert date.fromisoformat(first.input_value()) == today - timedelta(days=29)
    page.locator("h1").evaluate("(heading) => { heading.dataset.kept = 'yes'; }")  # gone if the page were replaced

    week = today - timedelta(days=6)
    first.fill(week.isoformat())
    panel.get_by_role("button", name="Show").click()
    expect(page.get_by_role("heading", name=f"Earnings, {week} to {today}")).to_be_visible()
    expect(page.locator("#earnings figcaption")).to_contain_text(f"{week:%b %d} to {today:%b %d}, ")
    expect(page.locator("h1")).to_have_attribute("data-kept", "yes")

    panel.get_by_label("To", exact=True).fill((week - timedelta(days=1)).isoformat())
    panel.get_by_role("button", name="Show").click()
    expect(page.locator("#earnings-error")).to_have_text("To: the last day is before the first.")
    to = page.locator("#earnings").get_by_label("To", exact=True)
    expect(to).to_have_attribute("aria-invalid", "true")
    expect(to).to_have_accessible_description("To: the last day is before the first.")
    expect(page.locator("#earnings").get_by_label("From", exact=True)).not_to_have_attribute("aria-invalid", "true")
    expect(page.locator("h1")).to_have_attribute("data-kept", "yes")
    assert serious_violations(page) == [] and sideways_overflow(page) == 0
    assert console.page_errors == [] and console.script_errors() == []
