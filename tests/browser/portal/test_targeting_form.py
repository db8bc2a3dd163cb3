"""The campaign form's targeting controls in headless Chromium: an advertiser picks countries, types a region,
ticks devices, weekdays and hours, chooses a time zone, lists keywords and sets a frequency cap; a bad region is
explained beside its field without losing what was ticked; once corrected, the draft is stored with every rule
and its page shows them chosen again."""

from __future__ import annotations

from datetime import UTC, timedelta

from playwright.sync_api import expect

from adnet.campaigns.models import Campaign
from tests.browser.conftest import LiveServer, sign_in_to_portal

ADVERTISER_INDEX = 9  # a funded development account no other browser test signs in with


def test_an_advertiser_sets_targeting_rules_with_plain_controls(open_portal, server: LiveServer) -> None:
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
    page.get_by_role("group", name="Days").get_by_label("Sat").check()
    page.get_by_role("group", name="Days").get_by_label("Sun").check()
    page.get_by_label("Hours", exact=True).fill("18-19")
    page.get_by_label("Time zone of these days and hours").select_option("Europe/Berlin")
    page.get_by_label("Never on pages with one of these keywords").fill("gambling, casino")
    page.get_by_label("At most this many billed impressions per viewer").fill("3")

    page.get_by_role("button", name="Create draft").click()
    expect(page.locator("#settings-error")).to_contain_text("Countries and regions, item 4: a country code such as DE")
    expect(page.get_by_label("Only in: regions")).to_have_attribute("aria-invalid", "true")
    expect(page.get_by_role("group", name="Days").get_by_label("Sun")).to_be_checked()
    page.get_by_label("Only in: regions").fill("US-CA")
    page.get_by_role("button", name="Create draft").click()
    expect(page.get_by_role("heading", name="Targeted sale", level=1)).to_be_visible()

    campaign_id = page.url.rsplit("/", 1)[1]
    stored = server.call(lambda: Campaign.get(id=campaign_id))
    assert stored.targeting["geo_include"] == ["FR", "DE", "US-CA"]  # the picker lists countries by name
    assert stored.targeting["devices_include"] == ["mobile", "tablet"]
    assert (stored.targeting["days"], stored.targeting["hours"]) == (["sat", "sun"], [18])
    assert stored.targeting["time_zone"] == "Europe/Berlin"
    assert stored.targeting["keywords_exclude"] == ["gambling", "casino"]
    assert stored.frequency_cap == 3
    page.get_by_role("link", name="Targeting").click()
    expect(page.get_by_role("group", name="Only on these devices").get_by_label("Tablet")).to_be_checked()
    expect(page.get_by_label("Only in: regions")).to_have_value("US-CA")
    assert console.script_errors() == []
