"""POST /api/bid through HTTP: Prebid.js's adnet bidder gets the banner /api/serve would show, priced net in the
configured currency, with markup whose impression is billed once through /api/track; floors, validation, CORS, and
no database on the request path."""

import json
import re
from decimal import Decimal

import pytest
from quart import current_app

from adnet.campaigns.models import CampaignStatus, Category
from adnet.delivery.bidding import gross_floor, net_cpm
from adnet.delivery.models import RequestHour, TrackingEvent
from adnet.delivery.sdk import sdk_integrity, sdk_version
from adnet.delivery.tokens import verify_token
from adnet.money import ledger
from tests.adnet.delivery.test_consent import PURPOSE_1_GIVEN, PURPOSE_1_REFUSED, USNAT_OPTED_OUT
from tests.api.test_serve import app_context  # noqa: F401 - autouse: the app as the current app
from tests.api.test_track import BROWSER, from_address, setup_ad
from tests.conftest import rebuild_index
from tests.factories import G, make_campaign, make_creative, make_site
from tests.sql import recorded_statements

ADDRESS = "10.200.1.1"
OPTIONS = re.compile(r"adnet\.render\(document\.getElementById\(\"adnet-bid\"\),(\{.*\})\);\}\);</script>")



def bid_body(site, **overrides) -> dict:
    return {"siteId": site.id, "pageUrl": f"https://{site.domain}/article", "viewer": "fp_viewer_1",
            "gdpr": 1, "gdprConsent": PURPOSE_1_GIVEN, "gpp": f"DBABMA~{PURPOSE_1_GIVEN}", "gppSid": "2",
            "bids": [{"bidId": "b1", "adUnitCode": "div-top", "sizes": ["728x90", "300x250"]}], **overrides}


async def post_bid(client, site, body: dict, **headers: str):
    response = await client.post("/api/bid", json=body, headers={
        "User-Agent": BROWSER, "Origin": f"https://{site.domain}", **headers}, **from_address(ADDRESS))
    return response, await response.get_json()


def served_options(markup: str) -> dict:
    found = OPTIONS.search(markup)
    assert found, markup
    return json.loads(found.group(1))


async def test_a_bid_is_the_served_banner_priced_net_with_markup_and_token(client, settings, clock):
    site, campaign, creative = await setup_ad()
    response, body = await post_bid(client, site, bid_body(site))
    assert response.status_code == 200
    assert response.headers["Access-Control-Allow-Origin"] == "*"
    assert response.headers["Cache-Control"] == "no-store"
    [bid] = body["bids"]
    # eCPM: 2 G$ per 1000 impressions and 0.1 G$ a click at 0.2 % click-through, of which the publisher earns 70 %.
    assert {key: value for key, value in bid.items() if key != "ad"} == {
        "requestId": "b1", "cpm": 1.54, "currency": "G$", "width": 300, "height": 250, "ttl": 300,
        "creativeId": creative.id, "netRevenue": True, "mediaType": "banner",
        "meta": {"advertiserDomains": ["advertiser.example"]}}
    markup = bid["ad"]
    assert (f'src="{settings.public_url}/sdk/{sdk_version()}/sdk.js" integrity="{sdk_integrity()}" '
            f'crossorigin="anonymous" data-site-id="{site.id}"') in markup
    options = served_options(markup)
    assert options["viewer"] == "fp_viewer_1" and options["pageUrl"] == f"https://{site.domain}/article"
    ad = options["served"]["ad"]
    assert (ad["id"], ad["campaignId"], ad["bannerUrl"]) == (creative.id, campaign.id, creative.banner_url)
    claims = verify_token(ad["trackingToken"], secrets=(settings.tracking_secret,), now=clock.now())
    assert (claims.ad_id, claims.campaign_id, claims.site_id, claims.size, claims.viewer, claims.off_site) == (
        creative.id, campaign.id, site.id, "300x250", "fp_viewer_1", False)


@pytest.mark.parametrize("consent", [
    {"gdprConsent": PURPOSE_1_REFUSED, "gpp": None, "gppSid": None},
    {"gdprConsent": None, "gpp": None, "gppSid": None},  # GDPR applies, and no string says what was given
    {"gdpr": None, "gdprConsent": None, "gpp": USNAT_OPTED_OUT, "gppSid": "7"},
], ids=["purpose 1 refused", "no TC string", "GPP opt-out"])
async def test_a_consent_limited_bid_reads_no_frequency_and_signs_no_viewer(client, clock, settings, consent):
    site, campaign, creative = await setup_ad(frequency_cap=1, frequency_hours=1)
    _, body = await post_bid(client, site, bid_body(site))
    clock.advance(seconds=2)
    response = await client.post("/api/track", json={
        "type": "IMPRESSION", "campaignId": campaign.id, "adId": creative.id, "siteId": site.id,
        "fingerprint": "fp_viewer_1", "rendered": True, "viewportVisible": True, "renderTime": 20,
        "pageUrl": f"https://{site.domain}/article", "gdpr": 1, "gdprConsent": PURPOSE_1_GIVEN,
        "trackingToken": served_options(body["bids"][0]["ad"])["served"]["ad"]["trackingToken"]},
        headers={"User-Agent": BROWSER, "Origin": f"https://{site.domain}"}, **from_address(ADDRESS))
    assert response.status_code == 201
    # The viewer was billed the campaign's one impression: with consent it gets no more bids of it.
    _, capped = await post_bid(client, site, bid_body(site))
    assert capped["bids"] == []
    _, limited = await post_bid(client, site, bid_body(site, **consent))
    [bid] = limited["bids"]
    claims = verify_token(served_options(bid["ad"])["served"]["ad"]["trackingToken"],
                          secrets=(settings.tracking_secret,), now=clock.now())
    assert (claims.campaign_id, claims.viewer) == (campaign.id, None)


async def test_each_bid_slot_counts_as_one_request_of_its_first_size_for_forecasts(client, services):
    site, _, _ = await setup_ad()
    for _ in range(2):
        await post_bid(client, site, bid_body(site))  # a slot of 728x90 (preferred) and 300x250
    await post_bid(client, site, bid_body(site, bids=[{"bidId": "b2", "sizes": ["160x600"]}]))  # no bid
    await services.serving.flush_counts()
    counted = await RequestHour.filter(site_id=site.id).order_by("size").values_list("size", "device", "requests")
    assert counted == [("160x600", "desktop", 1), ("728x90", "desktop", 2)]


async def test_the_markup_escapes_what_it_carries(client):
    site = await make_site()
    await make_creative(await make_campaign(site_allow=[site.id]), description="</script><script>alert(1)</script>")
    await rebuild_index(current_app)
    _, body = await post_bid(client, site, bid_body(site, pageUrl=f"https://{site.domain}/a?q=</script>"))
    markup = body["bids"][0]["ad"]
    assert markup.count("</script>") == 2 and "<script>alert" not in markup
    assert served_options(markup)["served"]["ad"]["description"] == "</script><script>alert(1)</script>"


async def test_the_impression_of_a_bid_is_billed_exactly_once(client, clock, settings):
    site, campaign, creative = await setup_ad()
    _, body = await post_bid(client, site, bid_body(site))
    ad = served_options(body["bids"][0]["ad"])["served"]["ad"]
    clock.advance(seconds=2)
    results = []
    for fingerprint in ("fp_viewer_1", "fp_rotated"):
        response = await client.post("/api/track", json={
            "type": "IMPRESSION", "campaignId": campaign.id, "adId": creative.id, "siteId": site.id,
            "fingerprint": fingerprint, "rendered": True, "viewportVisible": True, "renderTime": 20,
            "pageUrl": f"https://{site.domain}/article", "trackingToken": ad["trackingToken"]},
            headers={"User-Agent": BROWSER, "Origin": f"https://{site.domain}"}, **from_address(ADDRESS))
        assert response.status_code == 201
        results.append(await TrackingEvent.get(id=(await response.get_json())["eventId"]))
    assert [(event.billable, event.refusal_reason) for event in results] == [(True, None), (False, "token_reused")]
    cost = 2 * G // 1000
    assert await ledger.balance(ledger.campaign(campaign.id)) == 100 * G - cost
    assert await ledger.balance(ledger.site(site.id)) == cost * settings.publisher_share_bps // 10_000


async def test_floors_decide_whether_a_slot_gets_a_bid(client):
    site, _, _ = await setup_ad()

    def slot(bid_id: str, **floor) -> dict:
        return {"bidId": bid_id, "sizes": ["300x250"], **floor}

    _, body = await post_bid(client, site, bid_body(site, bids=[
        slot("under", floor=1.53, floorCurrency="G$"), slot("at", floor=1.54, floorCurrency="G$"),
        slot("over", floor=1.55, floorCurrency="G$"), slot("unconvertible", floor=0.01, floorCurrency="EUR"),
        slot("none")]))
    assert [bid["requestId"] for bid in body["bids"]] == ["under", "at", "none"]


async def test_no_campaign_of_the_sizes_is_an_empty_answer_and_never_a_house_ad(client):
    site, _, _ = await setup_ad()
    _, body = await post_bid(client, site, bid_body(site, bids=[{"bidId": "b1", "sizes": ["728x90"]}]))
    assert body == {"bids": []}


async def test_refusals(client):
    site, _, _ = await setup_ad()
    unknown = bid_body(site, siteId="site_unknown")
    response, body = await post_bid(client, site, unknown)
    assert (response.status_code, body["error"]) == (404, "not_found")
    for field, value in (("bids", []), ("gdpr", 2), ("gppSid", "2;7"), ("viewer", ""),
                         ("bids", [{"bidId": "a", "sizes": []}]), ("bids", [{"bidId": "a", "sizes": ["big"]}]),
                         ("bids", [{"bidId": "a", "sizes": ["1x1"]}, {"bidId": "a", "sizes": ["1x1"]}]),
                         ("bids", [{"bidId": "a", "sizes": ["1x1"], "floor": -1}])):
        response, body = await post_bid(client, site, bid_body(site, **{field: value}))
        assert response.status_code == 400, (field, value, body)
        assert body["field"].startswith(field), body


async def test_bidding_performs_no_database_query(client):
    site, _, _ = await setup_ad()
    await post_bid(client, site, bid_body(site))  # warm-up: the index is built
    with recorded_statements() as queries:
        for _ in range(5):
            _, body = await post_bid(client, site, bid_body(site))
            assert len(body["bids"]) == 1
    assert queries == []


@pytest.mark.parametrize(("currency", "rate", "ecpm", "cpm"), [
    ("G$", None, 2 * G, Decimal("1.4")),
    ("USD", Decimal("0.5"), 2 * G, Decimal("0.7")),
    ("USD", Decimal("0.0123"), 3 * G, Decimal("0.02583")),
    ("EUR", Decimal("3"), 1, Decimal("0")),
])
def test_prices_are_the_publisher_share_at_the_configured_rate(settings, currency, rate, ecpm, cpm):
    configured = settings.model_copy(update={"bid_currency": currency, "bid_currency_rate": rate})
    assert net_cpm(ecpm, configured) == cpm


def test_a_floor_becomes_the_gross_ecpm_a_campaign_must_reach(settings):
    usd = settings.model_copy(update={"bid_currency": "USD", "bid_currency_rate": Decimal("0.5")})
    assert gross_floor(None, None, usd) == gross_floor(0, "USD", usd) == 0
    assert gross_floor(0.7, "USD", usd) == 2 * G  # 0.7 USD net = 1.4 G$ net = 2 G$ gross
    assert gross_floor(1.4, "G$", usd) == 2 * G
    assert gross_floor(0.7, None, usd) == 2 * G
    assert gross_floor(0.7, "EUR", usd) is None
    assert gross_floor(1.4, "G$", settings) == 2 * G
    assert gross_floor(1, "USD", settings) is None


async def test_a_bid_applies_the_campaigns_and_the_sites_rules_as_serving_does(client):
    site = await make_site()
    blocked_site = await make_site(controls={"blocked_categories": ["gambling"]})
    await make_creative(await make_campaign(site_deny=[site.id, blocked_site.id]))
    gambling = await make_creative(await make_campaign(category=Category.GAMBLING,
                                                        site_allow=[site.id, blocked_site.id]))
    await make_creative(await make_campaign(status=CampaignStatus.PAUSED))
    await rebuild_index(current_app)
    # The gambling campaign may show on the first site only, which blocks nothing; the others nowhere.
    for _ in range(5):
        _, body = await post_bid(client, site, bid_body(site))
        assert [bid["creativeId"] for bid in body["bids"]] == [gambling.id]
        _, body = await post_bid(client, blocked_site, bid_body(blocked_site))
        assert body == {"bids": []}


async def test_the_bid_endpoint_is_in_the_openapi_document(client):
    document = await (await client.get("/openapi.json")).get_json()
    operation = document["paths"]["/api/bid"]["post"]
    request = operation["requestBody"]["content"]["application/json"]["schema"]
    assert {"200", "400", "404", "413", "415", "429"} <= set(operation["responses"])
    schemas = document["components"]["schemas"]
    body = schemas[request["$ref"].rsplit("/", 1)[-1]] if "$ref" in request else request
    assert {"siteId", "bids", "gdpr", "gdprConsent", "gpp", "gppSid", "viewer", "pageUrl"} <= set(body["properties"])
