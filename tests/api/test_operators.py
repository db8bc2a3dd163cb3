"""The operator API through HTTP: only configured operators, with a session, review and see revenue (KNOWN-HOLES 7);
the protocol rate changes on the embedded chain; and the holes of comparable networks in the advertiser's area
(KNOWN-HOLES 9, 12, 13, 16)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from eth_account import Account

from adnet.campaigns.models import Campaign, CampaignStatus
from adnet.chain.transact import send_transaction
from adnet.core.amounts import to_decimal_string
from adnet.core.wallets import dev_accounts
from adnet.delivery.models import TrackingEvent
from adnet.money import ledger
from tests.api.test_advertisers import (  # noqa: F401 - settings is the fixture every test uses
    CREATIVE,
    OPERATOR,
    Api,
    advertiser_api,
    approved_campaign,
    draft,
    funded_advertiser,
    operator_api,
    serve,
    settings,
)
from tests.api.test_track import page, page_url
from tests.auth_helpers import sign_in
from tests.conftest import rebuild_index
from tests.factories import G, make_site
from tests.waiting import eventually

# Creatives are checked against their banner file: cdn.example serves the banners these tests name.
pytestmark = pytest.mark.usefixtures("banner_cdn")

OPERATOR_ROUTES = [
    ("GET", "/operators/review", {}), ("GET", "/operators/revenue", {}), ("GET", "/operators/rate", {}),
    ("POST", "/operators/rate", {"rate": "3"}),
]


async def test_operator_routes_need_a_session_of_a_configured_operator(client, clock):
    """KNOWN-HOLES 7: no operator action without a session, and only for wallets in ADNET_OPERATORS."""
    api = await advertiser_api(client)
    campaign = await draft(api, clock)
    await api.call("POST", f"/advertisers/campaigns/{campaign['id']}/creatives", **CREATIVE)
    await api.call("POST", f"/advertisers/campaigns/{campaign['id']}/submit")
    decisions = [("POST", f"/operators/campaigns/{campaign['id']}/approve", {}),
                 ("POST", f"/operators/campaigns/{campaign['id']}/reject", {"reason": "no"})]
    for method, path, body in OPERATOR_ROUTES + decisions:
        anonymous = await getattr(client, method.lower())(f"/api{path}", json=body if method == "POST" else None)
        assert anonymous.status_code == 401, path
        status, answer = await api.call(method, path, **body)  # the advertiser itself is no operator
        assert (status, answer["error"]) == (403, "not_operator"), path
    assert (await Campaign.get(id=campaign["id"])).status == CampaignStatus.REVIEW

    operator = await operator_api(client)
    assert (await operator.call("POST", "/auth/logout"))[0] == 200
    assert (await operator.call("GET", "/operators/review"))[0] == 401  # an ended session is not replayable
    operator = await operator_api(client)
    assert (await operator.call("POST", f"/operators/campaigns/{campaign['id']}/approve"))[0] == 200
    status, body = await operator.call("POST", f"/operators/campaigns/{campaign['id']}/reject", reason="late")
    assert (status, body["error"]) == (409, "invalid_transition")
    status, body = await operator.call("POST", "/operators/campaigns/cmp_not-a-real-campaign/approve")
    assert status == 404


async def test_a_rejection_needs_a_reason(client, clock):
    api = await advertiser_api(client)
    campaign = await draft(api, clock)
    await api.call("POST", f"/advertisers/campaigns/{campaign['id']}/creatives", **CREATIVE)
    await api.call("POST", f"/advertisers/campaigns/{campaign['id']}/submit")
    operator = await operator_api(client)
    for reason in ("", "   "):
        status, body = await operator.call("POST", f"/operators/campaigns/{campaign['id']}/reject", reason=reason)
        assert (status, body["field"]) == (400, "reason")
    assert (await Campaign.get(id=campaign["id"])).status == CampaignStatus.REVIEW


async def test_the_protocol_rate_changes_on_the_embedded_chain(client, chain):
    operator = await operator_api(client)
    status, current = await operator.call("GET", "/operators/rate")
    assert (status, current["rate"], current["vaultOwner"]) == (200, "2", dev_accounts()[0].address)

    status, built = await operator.call("POST", "/operators/rate", rate="2.5")
    assert status == 200 and built["txHash"] is None
    transaction = built["transaction"]
    assert (transaction["from"], transaction["to"].lower()) == (built["vaultOwner"], chain.vault_address)
    assert await chain.vault.functions.rate().call() == 2 * G  # built, not sent
    await send_transaction(chain.w3, dev_accounts()[0], transaction)  # the owner sends it
    assert await chain.rate() == 5 * G // 2

    status, sent = await operator.call("POST", "/operators/rate", rate="3", send=True)
    assert status == 200 and sent["txHash"].startswith("0x")
    assert await chain.vault.functions.rate().call() == 3 * G
    assert (await operator.call("GET", "/operators/rate"))[1]["rate"] == "3"
    for bad in ("0", "-1", "abc"):
        status, body = await operator.call("POST", "/operators/rate", rate=bad)
        assert (status, body["field"]) == (400, "rate")


async def test_platform_revenue_is_the_platform_share_of_billing(client, clock):
    site = await make_site()
    _, campaign, _ = await approved_campaign(client, clock)
    await rebuild_index(client.app)
    ad = (await serve(client, site))["ad"]
    clock.advance(seconds=2)
    await client.post("/api/track", headers=page(site), json={
        "type": "IMPRESSION", "campaignId": campaign["id"], "adId": ad["id"], "siteId": site.id,
        "fingerprint": "fp-9", "rendered": True, "viewportVisible": True, "renderTime": 5, "timestamp": 1,
        "pageUrl": page_url(site), "trackingToken": ad["trackingToken"]})
    cost = 2 * G // 1000
    platform_share = cost - cost * client.app.extensions["adnet"].settings.publisher_share_bps // 10_000
    status, revenue = await (await operator_api(client)).call("GET", "/operators/revenue")
    assert status == 200
    assert (revenue["balance"], revenue["earned"]) == (to_decimal_string(platform_share),) * 2 == ("0.0006",) * 2
    assert revenue["days"][-1] == {"day": clock.now().date().isoformat(), "hour": None, "earned": "0.0006"}
    assert len(revenue["days"]) == 30
    status, hourly = await (await operator_api(client)).call("GET", "/operators/revenue", granularity="hour")
    assert status == 200 and len(hourly["days"]) == 24 and hourly["earned"] == "0.0006"
    assert [(hour["hour"], hour["earned"]) for hour in hourly["days"] if hour["earned"] != "0"] == [
        (clock.now().strftime("%Y-%m-%dT%H:00:00Z"), "0.0006")]  # the day's revenue, in the hour it was billed


async def test_withdrawals_and_rewards_only_take_the_advertisers_own_funds(client, clock):
    """KNOWN-HOLES 9: an advertiser's balance is its own ledger account; nothing lets it withdraw or allocate
    money that another advertiser deposited, and task pools are per task."""
    rich = await advertiser_api(client)
    await funded_advertiser(rich, 100 * G)
    poor = await advertiser_api(client)
    await funded_advertiser(poor, G)
    status, body = await poor.call("POST", "/advertisers/withdraw", amount="2")
    assert (status, body["error"], body["available"]) == (400, "insufficient_balance", "1")
    campaign = await draft(poor, clock)
    status, body = await poor.call("POST", f"/advertisers/campaigns/{campaign['id']}/allocate", amount="2")
    assert (status, body["error"]) == (400, "insufficient_balance")
    _, rich_account = await rich.call("GET", "/advertisers/account")
    assert rich_account["available"] == "100"


async def test_only_registered_sites_can_be_targeted(client, clock):
    """KNOWN-HOLES 12: a campaign's site lists name registered sites only (and tracking refuses unknown sites)."""
    api = await advertiser_api(client)
    site = await make_site()
    status, body = await api.call("POST", "/advertisers/campaigns", name="x", startsAt=clock.now().isoformat(),
                                  cpm="1", cpc="0", budget="1", siteAllow=[site.id, "site_made-up-site-id"])
    assert (status, body["field"]) == (400, "siteAllow")
    _, campaign, creative = await approved_campaign(client, clock)
    response = await client.post("/api/track", headers=page(site), json={
        "type": "IMPRESSION", "campaignId": campaign["id"], "adId": creative["id"], "siteId": "site_unregistered",
        "fingerprint": "fp-1", "rendered": True, "viewportVisible": True, "renderTime": 5, "timestamp": 1,
        "pageUrl": "https://x.example/"})
    assert response.status_code == 404
    assert await TrackingEvent.all().count() == 0
    assert await ledger.balance(ledger.campaign(campaign["id"])) == 50 * G


async def test_spend_never_passes_the_budget_and_a_new_price_is_not_retroactive(client, clock):
    """KNOWN-HOLES 13: a campaign pays only from what was allocated (never more than its budget), and a changed
    price applies to later events only."""
    site = await make_site()
    api, campaign, _ = await approved_campaign(client, clock, budget="50")
    cid = campaign["id"]
    status, body = await api.call("POST", f"/advertisers/campaigns/{cid}/allocate", amount="0.5")
    assert (status, body["error"], body["unfunded"]) == (409, "over_budget", "0")
    await rebuild_index(client.app)

    async def impression(fingerprint: str) -> dict:
        ad = (await serve(client, site))["ad"]
        clock.advance(seconds=2)
        response = await client.post("/api/track", headers=page(site), json={
            "type": "IMPRESSION", "campaignId": cid, "adId": ad["id"], "siteId": site.id,
            "fingerprint": fingerprint, "rendered": True, "viewportVisible": True, "renderTime": 5, "timestamp": 1,
            "pageUrl": page_url(site), "trackingToken": ad["trackingToken"]})
        return await response.get_json()

    first = await impression("fp-a")
    await api.sign_in_again()
    assert (await api.call("PATCH", f"/advertisers/campaigns/{cid}", cpm="4"))[0] == 200
    await rebuild_index(client.app)
    second = await impression("fp-b")
    costs = [int((await TrackingEvent.get(id=body["eventId"])).cost) for body in (first, second)]
    assert costs == [2 * G // 1000, 4 * G // 1000]
    _, report = await api.call("GET", f"/advertisers/campaigns/{cid}/report")
    assert report["totals"]["spend"] == "0.006"


async def test_unapproved_or_edited_content_never_serves(client, clock):
    """KNOWN-HOLES 16: a campaign serves only once approved and inside its dates; a creative edited after approval
    stops serving until approved again (see also tests/api/test_advertisers.py)."""
    site = await make_site()
    api, _, creative = await approved_campaign(client, clock,
                                               endsAt=(clock.now() + timedelta(minutes=30)).isoformat())
    await rebuild_index(client.app)
    assert (await serve(client, site))["ad"]["id"] == creative["id"]
    await api.call("PATCH", f"/advertisers/creatives/{creative['id']}", bannerUrl="https://cdn.example/other.png")
    await rebuild_index(client.app)
    assert (await serve(client, site))["kind"] == "NONE"
    await (await operator_api(client)).call("POST", f"/operators/creatives/{creative['id']}/approve")
    await rebuild_index(client.app)
    assert (await serve(client, site))["ad"]["bannerUrl"] == "https://cdn.example/other.png"
    clock.advance(minutes=30)
    assert (await serve(client, site))["kind"] == "NONE"
    stranger = Api(client, Account.create(), "")
    stranger.token = await sign_in(client, stranger.account)
    status, _ = await stranger.call("POST", f"/operators/creatives/{creative['id']}/approve")
    assert status == 403


async def test_an_approval_reaches_the_serving_index_without_waiting_for_its_refresh(client, clock):
    site = await make_site()
    api = await advertiser_api(client)
    await funded_advertiser(api)
    campaign = await draft(api, clock)
    await api.call("POST", f"/advertisers/campaigns/{campaign['id']}/creatives", **CREATIVE)
    await api.call("POST", f"/advertisers/campaigns/{campaign['id']}/allocate", amount="10")
    await api.call("POST", f"/advertisers/campaigns/{campaign['id']}/submit")
    index = client.app.extensions["adnet"].serving
    await index.rebuild()
    assert campaign["id"] not in index.index.campaigns
    assert (await (await operator_api(client)).call("POST", f"/operators/campaigns/{campaign['id']}/approve"))[0] == 200
    # The approval's announcement wakes the index job, far sooner than its 3 s refresh.
    await eventually(lambda: campaign["id"] in index.index.campaigns, "the approved campaign in the index")
    assert (await serve(client, site))["kind"] == "BANNER"
