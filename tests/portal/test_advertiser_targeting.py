"""The campaign form's targeting controls through the Quart test client: country pickers and region fields,
device, system, weekday and hour checkboxes, the time zone and keyword lists post as the browser sends them
(several fields of one name), are stored as typed, shown chosen again, replaced by an edit, and refused beside the
offending control without creating anything."""

from __future__ import annotations

import re
from urllib.parse import urlencode

import pytest

from adnet.campaigns.models import Campaign, CampaignStatus, Creative
from adnet.campaigns.targeting import Targeting
from tests.factories import make_campaign
from tests.portal.conftest import Publisher, portal_sign_in
from tests.portal.test_advertiser_pages import CREATIVE, OPERATOR, advertiser, campaign_form, settings, text

__all__ = ["advertiser", "settings"]  # the fixtures these tests use
pytestmark = pytest.mark.usefixtures("banner_cdn")  # its creatives' banners are fetched

TARGETING = [
    ("targeting.geoInclude", "DE"), ("targeting.geoInclude", "FR"), ("targeting.geoInclude", "US-CA, us-ny"),
    ("targeting.geoExclude", ""), ("targeting.devicesInclude", "mobile"), ("targeting.devicesInclude", "tablet"),
    ("targeting.osExclude", "windows"), ("schedule", "sat-9"), ("schedule", "sat-10"), ("schedule", "sun-9"),
    ("schedule", "sun-10"), ("targeting.timeZone", "Europe/Berlin"),
    ("targeting.keywordsInclude", "DeFi, nft"), ("targeting.keywordsExclude", "gambling"),
]


async def post_form(advertiser: Publisher, path: str, pairs: list[tuple[str, str]], *, htmx: bool = False):
    """POST ``pairs`` form-encoded as a browser does, repeated names included, with the session's CSRF token."""
    headers = {"Content-Type": "application/x-www-form-urlencoded"}
    if htmx:
        headers.update({"HX-Request": "true", "X-CSRF-Token": advertiser.csrf})
    else:
        pairs = [*pairs, ("csrf_token", advertiser.csrf)]
    return await advertiser.client.post(path, data=urlencode(pairs).encode(), headers=headers)


async def test_targeting_from_the_form_is_stored_shown_and_replaced(advertiser, clock):
    response = await post_form(advertiser, "/portal/advertise/campaigns",
                               [*campaign_form(clock).items(), *TARGETING, ("frequencyCap", "3"),
                                ("frequencyHours", "12")])
    assert response.status_code == 303, await text(response)
    campaign = await Campaign.get(id=response.headers["Location"].rsplit("/", 1)[1])
    assert campaign.targeting == {
        "geo_include": ["DE", "FR", "US-CA", "US-NY"], "geo_exclude": [], "devices_include": ["mobile", "tablet"],
        "devices_exclude": [], "os_include": [], "os_exclude": ["windows"], "days": ["sat", "sun"],
        "hours": [9, 10], "time_zone": "Europe/Berlin", "keywords_include": ["defi", "nft"],
        "keywords_exclude": ["gambling"], "week_hours": {}, "audience_groups": [], "audience_exclude": []}
    assert (campaign.frequency_cap, campaign.frequency_hours) == (3, 12)
    page = await text(await advertiser.get(f"/portal/advertise/campaigns/{campaign.id}/targeting"))
    assert 'name="frequencyCap" value="3"' in page and 'name="frequencyHours" value="12"' in page
    assert re.search(r'<option value="DE" selected>Germany \(DE\)</option>', page)
    assert 'name="targeting.geoInclude" value="US-CA, US-NY"' in page
    assert re.search(r'name="schedule" value="sat-9" aria-label="Saturday 09:00 to 10:00" checked', page)
    assert not re.search(r'name="schedule" value="sat-11"[^>]* checked', page)
    assert not re.search(r'name="schedule" value="mon-9"[^>]* checked', page)
    assert re.search(r'name="targeting.osExclude" value="windows" checked', page)
    assert "<option selected>Europe/Berlin</option>" in page
    assert 'name="targeting.keywordsInclude" value="defi, nft"' in page

    # The edit form sends every control; boxes left unticked clear their rule.
    edited = await post_form(advertiser, f"/portal/advertise/campaigns/{campaign.id}",
                             [*campaign_form(clock).items(), ("targeting.timeZone", "UTC"),
                              ("targeting.keywordsInclude", ""), ("targeting.keywordsExclude", "casino"),
                              ("frequencyCap", ""), ("frequencyHours", "24")])
    assert edited.status_code == 303
    await campaign.refresh_from_db()
    assert campaign.targeting["keywords_exclude"] == ["casino"]
    assert campaign.targeting["days"] == [] and campaign.targeting["geo_include"] == []
    assert (campaign.frequency_cap, campaign.frequency_hours) == (None, 24)  # an empty cap removes it


async def test_a_refused_frequency_cap_is_shown_beside_its_field(advertiser, clock):
    fragment = await post_form(advertiser, "/portal/advertise/campaigns",
                               [*campaign_form(clock).items(), ("frequencyCap", "0"), ("frequencyHours", "6")],
                               htmx=True)
    html = await text(fragment)
    assert "Impressions per viewer: at least 1" in html
    assert re.search(r'name="frequencyCap" value="0"[^>]*aria-invalid="true"', html)
    assert 'name="frequencyHours" value="6"' in html
    assert await Campaign.all().count() == 0


async def test_a_refused_rule_is_shown_beside_its_control_with_what_was_sent(advertiser, clock):
    sent = [*campaign_form(clock).items(), *TARGETING, ("targeting.geoExclude", "US-XX")]
    fragment = await post_form(advertiser, "/portal/advertise/campaigns", sent, htmx=True)
    assert fragment.headers["HX-Retarget"] == "#campaign-form"
    html = await text(fragment)
    assert ("Countries and regions to leave out, item 1: a country code such as DE or a region code such as "
            "US-CA") in html
    assert re.search(r'name="targeting.geoExclude" value="US-XX"[^>]*aria-invalid="true"', html)
    assert re.search(r'name="schedule" value="sun-10"[^>]* checked', html)  # what was ticked stays ticked
    full = await post_form(advertiser, "/portal/advertise/campaigns", sent)
    assert full.status_code == 400 and "<h1>New campaign</h1>" in await text(full)
    assert await Campaign.all().count() == 0


async def test_the_week_grid_writes_days_and_hours_or_hours_by_day(advertiser, clock):
    # The same hours on each chosen day are the days and hours the API has always taken.
    sent = [*campaign_form(clock).items(), *(("schedule", f"{day}-{hour}") for day in ("mon", "fri")
                                             for hour in (9, 10, 22))]
    created = await post_form(advertiser, "/portal/advertise/campaigns", sent)
    assert created.status_code == 303, await text(created)
    campaign = await Campaign.get(id=created.headers["Location"].rsplit("/", 1)[1])
    assert (campaign.targeting["days"], campaign.targeting["hours"]) == (["mon", "fri"], [9, 10, 22])
    assert campaign.targeting["week_hours"] == {}

    # Hours that differ by day are written day by day, and shown on the grid again.
    edited = await post_form(advertiser, f"/portal/advertise/campaigns/{campaign.id}",
                             [*campaign_form(clock).items(), ("schedule", "tue-9"), ("schedule", "tue-10"),
                              ("schedule", "sat-20"), ("targeting.timeZone", "Europe/Berlin")])
    assert edited.status_code == 303, await text(edited)
    await campaign.refresh_from_db()
    assert (campaign.targeting["days"], campaign.targeting["hours"]) == ([], [])
    assert campaign.targeting["week_hours"] == {"tue": [9, 10], "sat": [20]}
    page = await text(await advertiser.get(f"/portal/advertise/campaigns/{campaign.id}/targeting"))
    assert re.findall(r'name="schedule" value="([a-z]+-\d+)"[^>]* checked', page) == ["tue-9", "tue-10", "sat-20"]
    assert len(re.findall(r'<input type="checkbox" name="schedule"', page)) == 7 * 24
    assert 'type="checkbox" name="targeting.hours"' not in page and 'name="targeting.hours"' not in page

    # No cell chosen: every hour of every day.
    cleared = await post_form(advertiser, f"/portal/advertise/campaigns/{campaign.id}",
                              [*campaign_form(clock).items(), ("targeting.timeZone", "UTC")])
    assert cleared.status_code == 303
    await campaign.refresh_from_db()
    assert (campaign.targeting["days"], campaign.targeting["hours"], campaign.targeting["week_hours"]) == \
        ([], [], {})


async def test_hours_by_day_are_summed_up_where_they_cannot_be_edited(advertiser, clock):
    created = await post_form(advertiser, "/portal/advertise/campaigns",
                              [*campaign_form(clock).items(), ("schedule", "tue-9"), ("schedule", "tue-10"),
                               ("schedule", "sat-20"), ("targeting.timeZone", "Asia/Tokyo")])
    campaign_id = created.headers["Location"].rsplit("/", 1)[1]
    await Campaign.filter(id=campaign_id).update(status="ended")
    page = await text(await advertiser.get(f"/portal/advertise/campaigns/{campaign_id}/targeting"))
    assert ('<span class="targeting-summary">hours by day: tue 9, 10 · sat 20; time zone Asia/Tokyo</span>'
            in page)
    assert 'name="schedule"' not in page  # no grid once ended


async def test_a_bad_cell_of_the_week_grid_is_refused_beside_the_grid(advertiser, clock):
    refused = await post_form(advertiser, "/portal/advertise/campaigns",
                              [*campaign_form(clock).items(), ("schedule", "mon-9"), ("schedule", "mon-24")],
                              htmx=True)
    html = await text(refused)
    assert refused.status_code == 400 and "Schedule: a day and an hour of the week grid, such as mon-9." in html
    assert re.search(r'<table class="week"[^>]*aria-invalid="true"', html)
    assert re.search(r'name="schedule" value="mon-9"[^>]* checked', html)  # what was chosen stays chosen
    assert await Campaign.all().count() == 0


async def test_a_schedule_of_days_and_hours_shows_on_the_grid(advertiser, clock):
    created = await post_form(advertiser, "/portal/advertise/campaigns",
                              [*campaign_form(clock).items(), ("targeting.days", "sat"), ("targeting.hours", "8 9")])
    assert created.status_code == 303, await text(created)
    page = await text(await advertiser.get(f"{created.headers['Location']}/targeting"))
    assert re.findall(r'name="schedule" value="([a-z]+-\d+)"[^>]* checked', page) == ["sat-8", "sat-9"]


async def test_the_rules_are_summed_up_where_they_cannot_be_edited(advertiser, clock):
    response = await post_form(advertiser, "/portal/advertise/campaigns",
                               [*campaign_form(clock).items(), ("targeting.geoExclude", "US-NY"),
                                ("targeting.keywordsExclude", "<b>casino</b>"), ("targeting.timeZone", "UTC"),
                                ("frequencyCap", "2"), ("frequencyHours", "6")])
    assert response.status_code == 400  # a keyword is letters, digits, - and _ only
    response = await post_form(advertiser, "/portal/advertise/campaigns",
                               [*campaign_form(clock).items(), ("targeting.geoExclude", "US-NY"),
                                ("targeting.days", "sat"), ("targeting.timeZone", "Asia/Tokyo"),
                                ("frequencyCap", "2"), ("frequencyHours", "6")])
    campaign_id = response.headers["Location"].rsplit("/", 1)[1]
    await Campaign.filter(id=campaign_id).update(status="ended")
    page = await text(await advertiser.get(f"/portal/advertise/campaigns/{campaign_id}/targeting"))
    assert ('<span class="targeting-summary">never in US-NY; days sat; time zone Asia/Tokyo; '
            "at most 2 per viewer every 6 h</span>") in page
    assert 'name="targeting.days"' not in page  # no form once ended


async def test_operators_review_the_rules_with_the_campaign(app, clock):
    await make_campaign(status=CampaignStatus.REVIEW, frequency_cap=1,
                        targeting=Targeting.model_validate({
                            "devicesInclude": ["mobile"], "keywordsInclude": ["defi"],
                            "audienceGroups": [[{"kind": "erc721", "contract": "0x" + "2" * 40},
                                                {"kind": "txCount", "min": 3}], [{"kind": "injectedWallet"}]],
                            "audienceExclude": [{"kind": "erc20", "contract": "0x" + "3" * 40, "minAmount": "7"}],
                        }).stored())
    operator = await portal_sign_in(app.test_client(), OPERATOR)
    html = await text(await operator.get("/portal/operator"))
    assert re.search(r'targeting:\s*<span class="targeting-summary">on mobile; pages about defi; '
                     r"a wallet that holds a token of the collection 0x2{40} and sent at least 3 transactions or "
                     r"has a wallet extension in the browser; never a wallet that holds at least 7 \(smallest units\) "
                     r"of the token 0x3{40}; at most 1 per viewer every 24 h</span>", html)


async def test_rotation_and_a_creatives_weight_from_the_forms(advertiser, clock):
    response = await post_form(advertiser, "/portal/advertise/campaigns",
                               [*campaign_form(clock).items(), ("rotation", "weighted")])
    campaign = await Campaign.get(id=response.headers["Location"].rsplit("/", 1)[1])
    assert campaign.rotation == "weighted"
    added = await post_form(advertiser, f"/portal/advertise/campaigns/{campaign.id}/creatives",
                            [*CREATIVE.items(), ("weight", "3")])
    assert added.status_code == 303
    creative = await Creative.get(campaign_id=campaign.id)
    assert creative.weight == 3
    page = await text(await advertiser.get(f"/portal/advertise/campaigns/{campaign.id}/targeting"))
    assert '<option value="weighted" selected>' in page
    page = await text(await advertiser.get(f"/portal/advertise/campaigns/{campaign.id}/creatives"))
    assert f'id="creative-{creative.id}-weight" name="weight" type="text" value="3"' in page


AUDIENCE_GROUPS = '[[{"kind": "erc20", "contract": "0x1111111111111111111111111111111111111111", "minAmount": "5"}]]'


async def test_wallet_audiences_from_the_form_are_stored_shown_and_refused_by_field(advertiser, clock):
    response = await post_form(advertiser, "/portal/advertise/campaigns",
                               [*campaign_form(clock).items(), ("targeting.audienceGroups", AUDIENCE_GROUPS),
                                ("targeting.audienceExclude", '[{"kind": "txCount", "min": 2}]')])
    assert response.status_code == 303, await text(response)
    campaign = await Campaign.get(id=response.headers["Location"].rsplit("/", 1)[1])
    targeting = Targeting.model_validate(campaign.targeting)
    assert [[rule.kind for rule in group] for group in targeting.audience_groups] == [["erc20"]]
    assert targeting.audience_groups[0][0].min_amount == 5 and targeting.audience_exclude[0].min == 2
    page = await text(await advertiser.get(f"/portal/advertise/campaigns/{campaign.id}/targeting"))
    assert "&#34;minAmount&#34;: &#34;5&#34;" in page and "&#34;kind&#34;: &#34;txCount&#34;" in page

    refused = await post_form(advertiser, "/portal/advertise/campaigns",
                              [*campaign_form(clock).items(), ("targeting.audienceGroups", AUDIENCE_GROUPS.replace(
                                  '"5"', '"0"'))], htmx=True)
    html = await text(refused)
    assert "Minimum amount: enter an amount" in html and "audienceGroups.0" not in html  # in the field's words
    assert re.search(r'name="targeting.audienceGroups"[^>]*aria-invalid="true"', html)
    assert "&#34;minAmount&#34;: &#34;0&#34;" in html  # what was sent stays in the field
    assert await Campaign.all().count() == 1
