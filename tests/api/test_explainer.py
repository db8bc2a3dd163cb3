"""The decision explainer through HTTP: an advertiser about its own campaign, an operator about any, a publisher
about a slot of its own site; now and from sampled decisions; who may ask, and that the tracking filter's reasons
and other advertisers' campaigns are never shown to a third party."""

from __future__ import annotations

import pytest
from eth_account import Account
from quart import current_app

from tests.api.test_advertisers import (  # noqa: F401 - settings is the fixture every test uses
    Api,
    advertiser_api,
    approved_campaign,
    draft,
    operator_api,
    settings,
)
from tests.api.test_api_keys import issue
from tests.api.test_track import page
from tests.auth_helpers import bearer, sign_in
from tests.conftest import rebuild_index
from tests.factories import make_publisher, make_site
from web.labels import DECISION_WORDS

pytestmark = pytest.mark.usefixtures("banner_cdn")

BOT = "Googlebot/2.1 (+http://www.google.com/bot.html)"
BROWSER = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36"


@pytest.fixture(autouse=True)
async def app_context(app):
    async with app.app_context():
        yield app.extensions["adnet"]


async def two_campaigns(client, clock):
    """Advertiser A's campaign for France only, B's for everyone, both approved and in the index; a site."""
    mine, campaign, _ = await approved_campaign(client, clock, targeting={"geoInclude": ["FR"]})
    theirs, other, _ = await approved_campaign(client, clock)
    site = await make_site()
    await rebuild_index(current_app)
    return mine, campaign, theirs, other, site


async def test_an_advertiser_learns_the_rule_that_keeps_its_campaign_out_now(client, clock):
    mine, campaign, _, other, site = await two_campaigns(client, clock)
    path = f"/advertisers/campaigns/{campaign['id']}/explain"
    status, body = await mine.call("GET", path, siteId=site.id, size="300x250", country="DE", device="mobile")
    assert status == 200, body
    assert (body["period"], body["country"], body["device"]) == ("now", "DE", "mobile")
    verdicts = {verdict["campaignId"]: verdict for verdict in body["campaigns"]}
    assert verdicts[campaign["id"]]["reason"] == "targeting_country"
    assert verdicts[campaign["id"]]["words"] == DECISION_WORDS["targeting_country"]
    # The other advertiser's campaign is only counted, never named.
    assert other["id"] not in str(body)
    assert verdicts[None] == {"campaignId": None, "reason": "other_campaigns", "words":
                              DECISION_WORDS["other_campaigns"], "chance": None, "decisions": 1, "shown": None,
                              "reasons": None}

    _, body = await mine.call("GET", path, siteId=site.id, size="300x250", country="fr")
    mine_now = next(verdict for verdict in body["campaigns"] if verdict["campaignId"] == campaign["id"])
    assert mine_now["reason"] == "candidate" and 0 < mine_now["chance"] < 1

    _, body = await mine.call("GET", path, siteId=site.id, size="728x90", country="FR")
    assert body["campaigns"][0]["reason"] == "no_creative_of_size"


async def test_a_campaign_not_approved_is_explained_by_its_review_state(client, clock):
    api = await advertiser_api(client)
    campaign = await draft(api, clock)
    site = await make_site()
    status, body = await api.call("GET", f"/advertisers/campaigns/{campaign['id']}/explain", siteId=site.id)
    assert status == 200
    assert [verdict["reason"] for verdict in body["campaigns"] if verdict["campaignId"] == campaign["id"]] == [
        "campaign_draft"]


async def test_who_may_ask(client, clock):
    mine, campaign, theirs, _, site = await two_campaigns(client, clock)
    path = f"/advertisers/campaigns/{campaign['id']}/explain"
    status, body = await theirs.call("GET", path, siteId=site.id)
    assert (status, body["error"]) == (403, "not_owner")
    anonymous = await client.get(f"/api{path}", query_string={"siteId": site.id})
    assert anonymous.status_code == 401
    status, body = await mine.call("GET", path)
    assert (status, body["error"]) == (400, "invalid_field")
    status, body = await mine.call("GET", path, siteId=site.id, country="Germany")
    assert status == 400

    # An operator asks about any campaign, an advertiser may not use the operator's route.
    status, body = await mine.call("GET", f"/operators/campaigns/{campaign['id']}/explain", siteId=site.id)
    assert (status, body["error"]) == (403, "not_operator")
    operator = await operator_api(client)
    status, body = await operator.call("GET", f"/operators/campaigns/{campaign['id']}/explain", siteId=site.id,
                                       size="300x250", country="DE")
    assert status == 200 and body["campaigns"][0] == {
        "campaignId": campaign["id"], "reason": "targeting_country", "words": DECISION_WORDS["targeting_country"],
        "chance": None, "decisions": None, "shown": None, "reasons": None}

    status, body = await operator.call("GET", "/operators/campaigns/cmp_nosuchcampaign/explain", siteId=site.id)
    assert (status, body["error"]) == (404, "not_found")

    # A publisher asks about its own site only.
    status, body = await mine.call("GET", f"/publishers/sites/{site.id}/explain")
    assert (status, body["error"]) == (403, "not_owner")


async def test_a_publisher_sees_every_candidate_of_its_slot(client, clock):
    account = Account.create()
    publisher = await make_publisher(account.address.lower())
    _, campaign, _, other, _ = await two_campaigns(client, clock)
    site = await make_site(publisher)
    await rebuild_index(current_app)
    session = await sign_in(client, account)
    key = await issue(client, session, "reports:read")
    response = await client.get(f"/api/publishers/sites/{site.id}/explain", headers=bearer(key["token"]),
                                query_string={"size": "300x250", "country": "DE"})
    body = await response.get_json()
    assert response.status_code == 200, body
    verdicts = {verdict["campaignId"]: verdict["reason"] for verdict in body["campaigns"]}
    assert verdicts[campaign["id"]] == "targeting_country" and verdicts[other["id"]] == "candidate"


async def test_sampled_decisions_explain_a_recent_period_and_keep_filter_reasons_private(client, clock, app_context):
    account = Account.create()
    publisher = await make_publisher(account.address.lower())
    mine, campaign, theirs, other, _ = await two_campaigns(client, clock)
    site = await make_site(publisher)
    await rebuild_index(current_app)
    app_context.serving.sampler.every = 1
    for agent in (BOT, BOT, BROWSER):
        response = await client.get("/api/serve", query_string={"siteId": site.id, "size": "300x250"},
                                    headers={**page(site), "User-Agent": agent, "CF-IPCountry": "DE"})
        assert (await response.get_json())["kind"] == "BANNER"
    await app_context.serving.flush_counts()
    assert not app_context.serving.sampler.pending

    owner = Api(client, account, await sign_in(client, account))
    status, body = await owner.call("GET", f"/publishers/sites/{site.id}/explain", hours=24)
    assert status == 200, body
    assert (body["period"], body["hours"], body["samples"]) == ("recent", 24, 3)
    verdicts = {verdict["campaignId"]: verdict for verdict in body["campaigns"]}
    # Without a trusted proxy the viewer's country is unknown: A's campaign, for France only, never a candidate.
    assert verdicts[campaign["id"]]["reasons"] == {"targeting_country": 3}
    assert verdicts[campaign["id"]]["reason"] == "targeting_country"
    assert verdicts[other["id"]]["shown"] == 3 and verdicts[other["id"]]["reasons"]["bot_user_agent"] == 2

    # B, whose campaign was shown to crawlers, reads its filter reason; A, a third party, reads neither it nor B's id.
    status, body = await theirs.call("GET", f"/advertisers/campaigns/{other['id']}/explain", siteId=site.id,
                                     hours=24)
    assert status == 200 and body["campaigns"][0]["reasons"]["bot_user_agent"] == 2
    status, body = await mine.call("GET", f"/advertisers/campaigns/{campaign['id']}/explain", siteId=site.id,
                                   hours=24)
    assert status == 200
    assert "bot_user_agent" not in str(body) and other["id"] not in str(body)
    assert [verdict["reason"] for verdict in body["campaigns"]] == ["targeting_country", "other_campaigns"]

    # Only the decisions of the slot asked about.
    _, body = await owner.call("GET", f"/publishers/sites/{site.id}/explain", hours=24, size="728x90")
    assert (body["samples"], body["campaigns"]) == (0, [])


async def test_the_explainer_is_in_the_openapi_document(client):
    document = await (await client.get("/openapi.json")).get_json()
    for path in ("/api/advertisers/campaigns/{campaign_id}/explain", "/api/operators/campaigns/{campaign_id}/explain",
                 "/api/publishers/sites/{site_id}/explain"):
        assert "200" in document["paths"][path]["get"]["responses"], path
