"""Targeting, frequency caps, rotation and creative weights through the advertiser API: written with a campaign,
shown back, replaced whole by an edit (which the serving index picks up at once), refused field by field with
adnet's codes, and described in the OpenAPI document."""

from __future__ import annotations

from datetime import UTC

import pytest

from adnet.campaigns.models import Campaign
from adnet.campaigns.targeting import WEEKDAYS, Targeting
from tests.api.test_advertisers import CREATIVE, advertiser_api, approved_campaign, draft, serve
from tests.api.test_advertisers import settings as settings  # with the operator wallet that approves
from tests.conftest import rebuild_index
from tests.factories import make_site

pytestmark = pytest.mark.usefixtures("banner_cdn")  # its creatives' banners are fetched

RULES = {"geoInclude": ["de", "US-CA"], "geoExclude": ["US-NY"], "devicesInclude": ["mobile", "tablet"],
         "osExclude": ["windows"], "days": ["sat", "sun"], "hours": [18, 19, 20], "timeZone": "Europe/Berlin",
         "keywordsInclude": ["DeFi", "nft"], "keywordsExclude": ["gambling"]}
NONE = {"geoInclude": [], "geoExclude": [], "devicesInclude": [], "devicesExclude": [], "osInclude": [],
        "osExclude": [], "days": [], "hours": [], "timeZone": "UTC", "keywordsInclude": [], "keywordsExclude": [],
        "weekHours": {}, "audienceGroups": [], "audienceExclude": []}


async def test_targeting_is_stored_shown_and_replaced_whole(client, clock):
    api = await advertiser_api(client)
    created = await draft(api, clock, targeting=RULES)
    expected = {**NONE, **RULES, "geoInclude": ["DE", "US-CA"], "keywordsInclude": ["defi", "nft"]}
    assert created["targeting"] == expected
    status, shown = await api.call("GET", f"/advertisers/campaigns/{created['id']}")
    assert (status, shown["targeting"]) == (200, expected)
    status, edited = await api.call("PATCH", f"/advertisers/campaigns/{created['id']}",
                                    targeting={"keywordsExclude": ["casino"]})
    assert status == 200
    assert edited["targeting"] == {**NONE, "keywordsExclude": ["casino"]}
    status, renamed = await api.call("PATCH", f"/advertisers/campaigns/{created['id']}", name="Renamed")
    assert (status, renamed["targeting"]) == (200, edited["targeting"])  # an edit without it keeps it
    assert (await draft(api, clock))["targeting"] == NONE


async def test_an_edit_of_the_targeting_reaches_serving_at_once(client, clock):
    site = await make_site()
    api, campaign, _ = await approved_campaign(client, clock, targeting={"keywordsInclude": ["defi"]})
    await rebuild_index(client.app)
    assert (await serve(client, site, keywords="defi"))["kind"] == "BANNER"
    assert (await serve(client, site, keywords="news"))["kind"] == "NONE"
    status, _ = await api.call("PATCH", f"/advertisers/campaigns/{campaign['id']}",
                               targeting={"keywordsExclude": ["defi"]})
    assert status == 200
    await rebuild_index(client.app)  # what the announced change triggers
    assert (await serve(client, site, keywords="defi"))["kind"] == "NONE"
    assert (await serve(client, site, keywords="news"))["kind"] == "BANNER"


async def test_hours_that_differ_by_day_are_stored_and_served_by_the_hour(client, clock):
    site = await make_site()
    now = clock.now().astimezone(UTC)
    today, other_day = WEEKDAYS[now.weekday()], WEEKDAYS[(now.weekday() + 1) % 7]
    week = {today: [now.hour], other_day: [(now.hour + 1) % 24]}
    api, campaign, _ = await approved_campaign(client, clock, targeting={"weekHours": week})
    assert campaign["targeting"]["weekHours"] == week
    await rebuild_index(client.app)
    assert (await serve(client, site))["kind"] == "BANNER"  # this hour of this day
    status, _ = await api.call("PATCH", f"/advertisers/campaigns/{campaign['id']}",
                               targeting={"weekHours": {today: [(now.hour + 1) % 24], other_day: [now.hour]}})
    assert status == 200
    await rebuild_index(client.app)
    assert (await serve(client, site))["kind"] == "NONE"  # the same hour, on another day only


@pytest.mark.parametrize(("targeting", "code", "field"), [
    ({"geoInclude": ["ZZ"]}, "invalid_geo", "targeting.geoInclude.0"),
    ({"geoExclude": ["DE", "US-XX"]}, "invalid_geo", "targeting.geoExclude.1"),
    ({"devicesInclude": ["phone"]}, "invalid_field", "targeting.devicesInclude.0"),
    ({"osExclude": ["beos"]}, "invalid_field", "targeting.osExclude.0"),
    ({"days": ["monday"]}, "invalid_field", "targeting.days.0"),
    ({"hours": [24]}, "invalid_field", "targeting.hours.0"),
    ({"weekHours": {"monday": [9]}}, "invalid_field", "targeting.weekHours.monday.[key]"),
    ({"weekHours": {"mon": [24]}}, "invalid_field", "targeting.weekHours.mon.0"),
    ({"weekHours": {"mon": []}}, "invalid_field", "targeting.weekHours.mon"),
    ({"timeZone": "Mars/Olympus"}, "invalid_time_zone", "targeting.timeZone"),
    ({"keywordsInclude": ["two words"]}, "invalid_keyword", "targeting.keywordsInclude.0"),
    ({"keywordsExclude": ["x" * 41]}, "invalid_keyword", "targeting.keywordsExclude.0"),
    ({"countries": ["DE"]}, "invalid_field", "targeting.countries"),
])
async def test_bad_targeting_is_refused_by_field_and_changes_nothing(client, clock, targeting, code, field):
    api = await advertiser_api(client)
    status, body = await api.call("POST", "/advertisers/campaigns", name="Bad", startsAt=clock.now().isoformat(),
                                  cpm="2", cpc="0", budget="10", targeting=targeting)
    assert (status, body["error"], body["field"]) == (400, code, field), body
    created = await draft(api, clock)
    status, body = await api.call("PATCH", f"/advertisers/campaigns/{created['id']}", targeting=targeting)
    assert (status, body["error"], body["field"]) == (400, code, field)
    assert (await Campaign.get(id=created["id"])).targeting == Targeting.model_validate({}).stored()


async def test_a_frequency_cap_is_set_changed_and_removed(client, clock):
    api = await advertiser_api(client)
    created = await draft(api, clock)
    assert (created["frequencyCap"], created["frequencyHours"]) == (None, 24)
    capped = await draft(api, clock, frequencyCap=3, frequencyHours=6)
    assert (capped["frequencyCap"], capped["frequencyHours"]) == (3, 6)
    status, edited = await api.call("PATCH", f"/advertisers/campaigns/{capped['id']}", frequencyHours=12)
    assert (status, edited["frequencyCap"], edited["frequencyHours"]) == (200, 3, 12)
    status, removed = await api.call("PATCH", f"/advertisers/campaigns/{capped['id']}", frequencyCap=None)
    assert (status, removed["frequencyCap"]) == (200, None)
    for refused, field in (({"frequencyCap": 0}, "frequencyCap"), ({"frequencyHours": 25}, "frequencyHours"),
                           ({"frequencyHours": None}, "frequencyHours")):
        status, body = await api.call("PATCH", f"/advertisers/campaigns/{capped['id']}", **refused)
        assert (status, body["error"], body["field"]) == (400, "invalid_field", field)
    assert (await Campaign.get(id=capped["id"])).frequency_hours == 12


async def test_rotation_and_weights_are_set_and_a_weight_alone_keeps_the_creatives_review(client, clock):
    api, campaign, creative = await approved_campaign(client, clock, rotation="weighted")
    assert campaign["rotation"] == "weighted" and creative["weight"] == 1
    status, body = await api.call("PATCH", f"/advertisers/creatives/{creative['id']}", weight=5)
    assert (status, body["weight"], body["status"]) == (200, 5, "approved")
    # The portal's form sends every field again: unchanged content keeps the review too.
    status, body = await api.call("PATCH", f"/advertisers/creatives/{creative['id']}", **CREATIVE, weight=6)
    assert (status, body["weight"], body["status"]) == (200, 6, "approved")
    status, body = await api.call("PATCH", f"/advertisers/creatives/{creative['id']}", description="New words")
    assert (status, body["weight"], body["status"]) == (200, 6, "review")
    status, body = await api.call("PATCH", f"/advertisers/campaigns/{campaign['id']}", rotation="best_ctr")
    assert (status, body["rotation"]) == (200, "best_ctr")
    for path, refused, field in ((f"/advertisers/campaigns/{campaign['id']}", {"rotation": "random"}, "rotation"),
                                 (f"/advertisers/creatives/{creative['id']}", {"weight": 0}, "weight"),
                                 (f"/advertisers/creatives/{creative['id']}", {"weight": 101}, "weight")):
        status, body = await api.call("PATCH", path, **refused)
        assert (status, body["error"], body["field"]) == (400, "invalid_field", field)


async def test_the_openapi_document_describes_targeting(client):
    document = await (await client.get("/openapi.json")).get_json()
    targeting = document["components"]["schemas"]["Targeting"]["properties"]
    assert set(targeting) == set(NONE)
    assert targeting["devicesInclude"]["items"]["enum"] == ["desktop", "mobile", "tablet"]
    serve_parameters = {parameter["name"] for parameter in document["paths"]["/api/serve"]["get"]["parameters"]}
    assert {"keywords", "viewer"} <= serve_parameters
    campaign = document["components"]["schemas"]["CampaignOut"]["properties"]
    assert {"targeting", "frequencyCap", "frequencyHours", "rotation"} <= set(campaign)
    assert "weight" in document["components"]["schemas"]["CreativeOut"]["properties"]
