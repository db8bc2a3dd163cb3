"""GET /api/serve honours campaigns' targeting rules: geo from a MaxMind-format database the suite writes (or a
trusted proxy's country header), device and operating system from real User-Agent strings, the schedule in the
campaign's time zone by the injected clock, and the page's keywords; all without a database query."""

import pytest

from adnet.campaigns.targeting import Targeting
from tests.conftest import make_settings, rebuild_index
from tests.factories import make_campaign, make_creative, make_site
from tests.geoip import BERLIN, CALIFORNIA, NEW_YORK, NOWHERE, write_database
from tests.sql import recorded_statements

IPHONE = ("Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
          "Version/17.0 Mobile/15E148 Safari/604.1")
ANDROID_PHONE = ("Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) "
                 "Chrome/120.0.0.0 Mobile Safari/537.36")
ANDROID_TABLET = ("Mozilla/5.0 (Linux; Android 14; SM-X710) AppleWebKit/537.36 (KHTML, like Gecko) "
                  "Chrome/120.0.0.0 Safari/537.36")
IPAD = ("Mozilla/5.0 (iPad; CPU OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 "
        "Mobile/15E148 Safari/604.1")
WINDOWS = ("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 "
           "Safari/537.36")
MAC = ("Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 "
       "Safari/605.1.15")
DRAWS = 40


@pytest.fixture
def settings(database_url, data_dir, request):
    """Settings with the suite's GeoIP database, behind one trusted proxy (so a test chooses the client's
    address with X-Forwarded-For); a test parametrized with ``indirect=["settings"]`` names its own."""
    overrides = getattr(request, "param", None)
    if overrides is None:
        overrides = {"ADNET_GEOIP_DATABASE": str(write_database(data_dir / "geo.mmdb")), "ADNET_TRUSTED_PROXIES": "1"}
    return make_settings(database_url, data_dir, **overrides)


async def targeted(name: str, **rules) -> str:
    """An approved, funded campaign with one creative and ``rules`` (validated as the API would)."""
    campaign = await make_campaign(name=name, targeting=Targeting(**rules).stored())
    await make_creative(campaign)
    return campaign.id


async def served(client, site_id: str, *, address: str = BERLIN, agent: str = WINDOWS, draws: int = DRAWS,
                 **params) -> set[str]:
    """The campaigns ``draws`` serves to one viewer picked (``NONE`` when a slot stayed empty)."""
    seen = set()
    for _ in range(draws):
        response = await client.get("/api/serve", query_string={"siteId": site_id, **params},
                                    headers={"X-Forwarded-For": address, "User-Agent": agent})
        assert response.status_code == 200
        body = await response.get_json()
        seen.add(body["ad"]["campaignId"] if body["kind"] == "BANNER" else "NONE")
    return seen


async def test_geo_rules_follow_the_address_in_the_geoip_database(app, client):
    site = await make_site()
    germany = await targeted("Germany", geo_include=["DE"])
    california = await targeted("California", geo_include=["US-CA"])
    not_us = await targeted("Not the US", geo_exclude=["US"])
    us_not_ny = await targeted("US but New York", geo_include=["US"], geo_exclude=["US-NY"])
    anywhere = await targeted("Anywhere")
    await rebuild_index(app)
    assert await served(client, site.id, address=BERLIN) == {germany, not_us, anywhere}
    assert await served(client, site.id, address=CALIFORNIA) == {california, us_not_ny, anywhere}
    assert await served(client, site.id, address=NEW_YORK) == {anywhere}
    # An address the database does not know has no location: no geo-targeted campaign, exclude-only included.
    assert await served(client, site.id, address=NOWHERE) == {anywhere}


@pytest.mark.parametrize(("settings", "header", "located"), [
    ({"ADNET_TRUSTED_PROXIES": "1"}, "DE", True),
    ({"ADNET_TRUSTED_PROXIES": "1"}, "FR", False),
    ({"ADNET_TRUSTED_PROXIES": "1"}, "XX", False),  # the proxy knows no country
    ({"ADNET_TRUSTED_PROXIES": "0"}, "DE", False),  # without a trusted proxy, the header is anyone's word
], indirect=["settings"])
async def test_without_a_database_a_trusted_proxys_country_header_locates(app, client, header, located):
    site = await make_site()
    germany = await targeted("Germany", geo_include=["DE"])
    await rebuild_index(app)
    seen = set()
    for _ in range(10):
        response = await client.get("/api/serve", query_string={"siteId": site.id},
                                    headers={"CF-IPCountry": header, "User-Agent": WINDOWS})
        body = await response.get_json()
        seen.add(body["ad"]["campaignId"] if body["kind"] == "BANNER" else "NONE")
    assert seen == ({germany} if located else {"NONE"})


async def test_device_and_system_rules_follow_the_user_agent(app, client):
    site = await make_site()
    mobile = await targeted("Phones", devices_include=["mobile"])
    no_tablets = await targeted("No tablets", devices_exclude=["tablet"])
    apple = await targeted("Apple", os_include=["ios", "macos"])
    not_windows = await targeted("Not Windows", os_exclude=["windows"])
    await rebuild_index(app)
    assert await served(client, site.id, agent=IPHONE) == {mobile, no_tablets, apple, not_windows}
    assert await served(client, site.id, agent=ANDROID_PHONE) == {mobile, no_tablets, not_windows}
    assert await served(client, site.id, agent=ANDROID_TABLET) == {not_windows}
    assert await served(client, site.id, agent=IPAD) == {apple, not_windows}
    assert await served(client, site.id, agent=WINDOWS) == {no_tablets}
    assert await served(client, site.id, agent=MAC) == {no_tablets, apple, not_windows}


async def test_the_schedule_is_read_in_the_campaigns_time_zone(app, client, clock):
    site = await make_site()
    # Office hours in New York: weekdays, 9:00 to 17:59 local time. The clock starts Thursday 2026-01-01 00:00 UTC,
    # which is Wednesday 19:00 in New York.
    office = await targeted("Office hours", days=["mon", "tue", "wed", "thu", "fri"], hours=list(range(9, 18)),
                            time_zone="America/New_York")
    weekend = await targeted("Weekend in Tokyo", days=["sat", "sun"], time_zone="Asia/Tokyo")
    await rebuild_index(app)
    assert await served(client, site.id, draws=5) == {"NONE"}
    clock.advance(hours=14)  # Thursday 09:00 in New York
    assert await served(client, site.id, draws=5) == {office}
    clock.advance(hours=9)  # Thursday 18:00 in New York
    assert await served(client, site.id, draws=5) == {"NONE"}
    clock.advance(hours=38)  # Saturday 2026-01-03 13:00 UTC: Saturday 22:00 in Tokyo
    assert await served(client, site.id, draws=5) == {weekend}
    clock.advance(days=1, hours=2)  # Monday 00:00 in Tokyo, Sunday 10:00 in New York
    assert await served(client, site.id, draws=5) == {"NONE"}
    clock.advance(hours=23)  # Monday 09:00 in New York
    assert await served(client, site.id, draws=5) == {office}


async def test_keywords_include_and_an_exclude_always_wins(app, client):
    site = await make_site()
    defi = await targeted("DeFi", keywords_include=["defi", "lending"])
    clean = await targeted("No gambling", keywords_exclude=["gambling"])
    both = await targeted("DeFi without gambling", keywords_include=["defi"], keywords_exclude=["gambling"])
    await rebuild_index(app)
    assert await served(client, site.id) == {clean}
    assert await served(client, site.id, keywords="DeFi,news") == {defi, clean, both}
    assert await served(client, site.id, keywords="lending") == {defi, clean}
    assert await served(client, site.id, keywords="defi,gambling") == {defi}


@pytest.mark.parametrize(("keywords", "code"), [
    ("defi,not a keyword", "invalid_keyword"),
    (",".join(f"k{number}" for number in range(21)), "invalid_keyword"),
    ("x" * 41, "invalid_keyword"),
])
async def test_bad_keywords_are_refused_by_name(app, client, keywords, code):
    site = await make_site()
    response = await client.get("/api/serve", query_string={"siteId": site.id, "keywords": keywords})
    assert response.status_code == 400
    body = await response.get_json()
    assert body["error"] == code and body["field"] == "keywords"


async def test_targeted_serving_performs_no_database_query(app, client):
    site = await make_site()
    await targeted("Everything", geo_include=["DE", "US-CA"], geo_exclude=["US-NY"], devices_include=["desktop"],
                   os_exclude=["ios"], days=["thu"], hours=[0, 1], time_zone="Europe/Berlin",
                   keywords_include=["defi"], keywords_exclude=["gambling"])
    await targeted("Phones", devices_include=["mobile"])
    await rebuild_index(app)
    await served(client, site.id, draws=1)  # warm-up outside the count
    with recorded_statements() as queries:
        for address in (BERLIN, CALIFORNIA, NEW_YORK, NOWHERE):
            for agent in (WINDOWS, IPHONE, IPAD):
                await served(client, site.id, address=address, agent=agent, draws=2, keywords="defi")
    assert queries == []
