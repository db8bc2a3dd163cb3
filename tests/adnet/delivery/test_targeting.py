"""Targeting rules without HTTP: the device and system of real User-Agent strings, locations from the suite's GeoIP
database and from a proxy's header, each rule's include and exclude (an exclude always wins), the schedule across
a daylight-saving change, that a viewer is worked out only as far as a rule asks, and that the index leaves out a
campaign whose stored rules no longer validate."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from adnet.campaigns.targeting import Targeting
from adnet.delivery.clients import Client
from adnet.delivery.index import build_index
from adnet.delivery.targeting import NO_RULES, Location, Locator, Viewer, compile_rules, device_of
from tests.api.test_serve_targeting import ANDROID_PHONE, ANDROID_TABLET, IPAD, IPHONE, MAC, WINDOWS
from tests.factories import make_campaign, make_creative
from tests.geoip import BERLIN, CALIFORNIA, NOWHERE, write_database

CHROMEBOOK = ("Mozilla/5.0 (X11; CrOS x86_64 14541.0.0) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 "
              "Safari/537.36")
UBUNTU_FIREFOX = "Mozilla/5.0 (X11; Ubuntu; Linux x86_64; rv:120.0) Gecko/20100101 Firefox/120.0"
THURSDAY_NOON = datetime(2026, 1, 1, 12, tzinfo=UTC)


@pytest.mark.parametrize(("user_agent", "expected"), [
    (IPHONE, ("mobile", "ios")),
    (ANDROID_PHONE, ("mobile", "android")),
    (ANDROID_TABLET, ("tablet", "android")),
    (IPAD, ("tablet", "ios")),
    (WINDOWS, ("desktop", "windows")),
    (MAC, ("desktop", "macos")),
    (CHROMEBOOK, ("desktop", "chromeos")),
    (UBUNTU_FIREFOX, ("desktop", "linux")),
    ("", ("desktop", "other")),
])
def test_device_and_system_of_real_user_agents(user_agent, expected):
    assert device_of(user_agent) == expected


def test_locations_come_from_the_database_or_else_a_proxys_header(tmp_path):
    located = Locator(write_database(tmp_path / "geo.mmdb"))
    try:
        assert located.locate(Client(BERLIN, "", country="FR")) == Location("DE", "DE-BE")  # the database wins
        assert located.locate(Client(CALIFORNIA, "")).codes == frozenset({"US", "US-CA"})
        assert located.locate(Client(NOWHERE, "")) is None
        assert located.locate(Client("not an address", "")) is None
    finally:
        located.close()
    header_only = Locator()
    assert header_only.locate(Client(BERLIN, "", country="fr")) == Location("FR")
    assert header_only.locate(Client(BERLIN, "", country="XX")) is None
    assert header_only.locate(Client(BERLIN, "", country="T1")) is None
    assert header_only.locate(Client(BERLIN, "")) is None


def viewer(*, agent: str = WINDOWS, keywords: frozenset[str] = frozenset(), country: str | None = "DE") -> Viewer:
    return Viewer(Client(BERLIN, agent, country=country), keywords, Locator())


def rules(**written) -> object:
    return compile_rules(Targeting(**written).stored())


def test_no_rules_allow_everyone_and_are_shared():
    assert compile_rules({}) is NO_RULES and compile_rules(None) is NO_RULES
    assert NO_RULES.allows(viewer(country=None, agent=""), THURSDAY_NOON)


def test_an_exclude_always_wins_over_an_include():
    assert not rules(keywords_include=["defi"], keywords_exclude=["defi"]).allows(
        viewer(keywords=frozenset({"defi"})), THURSDAY_NOON)
    assert not rules(geo_include=["DE"], geo_exclude=["DE"]).allows(viewer(), THURSDAY_NOON)
    assert not rules(devices_include=["desktop"], devices_exclude=["desktop"]).allows(viewer(), THURSDAY_NOON)
    assert not rules(os_include=["windows"], os_exclude=["windows"]).allows(viewer(), THURSDAY_NOON)


def test_a_geo_rule_needs_a_known_location_even_when_it_only_excludes():
    excluding = rules(geo_exclude=["FR"])
    assert excluding.allows(viewer(country="DE"), THURSDAY_NOON)
    assert not excluding.allows(viewer(country=None), THURSDAY_NOON)
    assert not rules(geo_include=["US-CA"]).allows(viewer(country="US"), THURSDAY_NOON)  # a header has no region


def test_the_schedule_follows_the_time_zone_across_daylight_saving():
    # Berlin moves from UTC+1 to UTC+2 on 2026-03-29 at 01:00 UTC.
    nine_in_berlin = rules(hours=[9], time_zone="Europe/Berlin")
    assert nine_in_berlin.allows(viewer(), datetime(2026, 3, 28, 8, tzinfo=UTC))
    assert not nine_in_berlin.allows(viewer(), datetime(2026, 3, 30, 8, tzinfo=UTC))
    assert nine_in_berlin.allows(viewer(), datetime(2026, 3, 30, 7, tzinfo=UTC))
    weekdays = rules(days=["mon", "tue", "wed", "thu", "fri"], time_zone="Pacific/Kiritimati")  # UTC+14
    assert not weekdays.allows(viewer(), datetime(2026, 1, 2, 12, tzinfo=UTC))  # Saturday there already


def test_week_hours_run_a_campaign_in_hours_that_differ_by_day():
    # Weekday mornings in Berlin and Saturday evening; Sunday, a day it does not name, never.
    week = rules(week_hours={"mon": [9, 10], "tue": [9, 10], "sat": [20]}, time_zone="Europe/Berlin")
    monday = datetime(2026, 1, 5, 8, tzinfo=UTC)  # 09:00 in Berlin
    assert week.allows(viewer(), monday)
    assert not week.allows(viewer(), monday + timedelta(hours=2))  # 11:00
    assert not week.allows(viewer(), monday + timedelta(days=5))  # Saturday 09:00
    assert week.allows(viewer(), monday + timedelta(days=5, hours=11))  # Saturday 20:00
    assert not week.allows(viewer(), monday + timedelta(days=6, hours=11))  # Sunday 20:00
    narrowed = rules(week_hours={"mon": [9, 10]}, hours=[10], time_zone="Europe/Berlin")  # every rule applies
    assert not narrowed.allows(viewer(), monday) and narrowed.allows(viewer(), monday + timedelta(hours=1))


def test_a_viewer_is_worked_out_only_as_far_as_a_rule_asks():
    class CountingLocator(Locator):
        asked = 0

        def locate(self, client):
            self.asked += 1
            return super().locate(client)

    locator = CountingLocator()
    seen = Viewer(Client(BERLIN, WINDOWS, country="DE"), frozenset(), locator)
    assert rules(keywords_exclude=["casino"]).allows(seen, THURSDAY_NOON)
    assert locator.asked == 0
    for _ in range(3):
        assert rules(geo_include=["DE"]).allows(seen, THURSDAY_NOON)
    assert locator.asked == 1


def test_stored_rules_are_written_snake_case_and_compile_back():
    written = Targeting.model_validate({"geoInclude": ["us-ca"], "hours": [23], "timeZone": "Asia/Tokyo",
                                        "keywordsExclude": ["Casino"]})
    stored = written.stored()
    assert stored["geo_include"] == ["US-CA"] and stored["keywords_exclude"] == ["casino"]
    compiled = compile_rules(stored)
    assert compiled.geo_include == frozenset({"US-CA"}) and compiled.hours == frozenset({23})
    assert str(compiled.zone) == "Asia/Tokyo"


async def test_the_index_leaves_out_a_campaign_whose_stored_rules_no_longer_validate(app):
    kept = await make_campaign(targeting=Targeting(keywords_exclude=["casino"]).stored())
    broken = await make_campaign(targeting={**Targeting().stored(), "time_zone": "Gone/Zone"})
    for campaign in (kept, broken):
        await make_creative(campaign)
    index = await build_index(THURSDAY_NOON)
    assert kept.id in index.campaigns and broken.id not in index.campaigns
    assert index.campaigns[kept.id].targeting.keywords_exclude == frozenset({"casino"})
