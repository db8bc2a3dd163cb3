"""The advertiser API through HTTP: from a real deposit on the embedded chain to a campaign served and its tracked
impression in the report; every lifecycle transition and its refusals; who may do what; allocation that never
exceeds the balance, also concurrently."""

from __future__ import annotations

import asyncio
import csv
import io
from datetime import timedelta
from decimal import Decimal

import pytest
from eth_account import Account
from tortoise.transactions import in_transaction

from adnet.campaigns.models import Campaign, CampaignStatus, Creative
from adnet.chain.transact import send_transaction
from adnet.delivery import tracking
from adnet.money import ledger
from adnet.money.holders import account_ref
from adnet.money.models import LedgerTransaction
from tests.api.test_track import billed, page, page_url
from tests.auth_helpers import bearer, sign_in
from tests.chain.helpers import user
from tests.conftest import make_settings, rebuild_index
from tests.factories import G, fund, make_site
from tests.images import png
from tests.waiting import eventually

# Creatives are checked against their banner file: cdn.example serves the banners these tests name.
pytestmark = pytest.mark.usefixtures("banner_cdn")

OPERATOR = Account.from_key("0x" + "42" * 32)
CREATIVE = {"bannerUrl": "https://cdn.example/banner.png", "targetUrl": "https://shop.example/landing",
            "description": "Sponsored", "mediaType": "image", "size": "300x250"}
QUIZ = {"kind": "QUIZ", "title": "Quiz", "config": {"question": "2+2?", "answers": ["four"]},
        "rewardPoints": 5, "rewardGs": "0.5"}


@pytest.fixture
def settings(database_url, data_dir):
    """Test settings with one operator wallet."""
    return make_settings(database_url, data_dir, ADNET_OPERATORS=OPERATOR.address)




class Api:
    """A signed-in wallet's calls."""

    def __init__(self, client, account, token: str) -> None:
        self.client, self.account, self.token = client, account, token

    async def sign_in_again(self) -> None:
        """A fresh session, after the clock moved past the last one's end (an hour in these tests)."""
        self.token = await sign_in(self.client, self.account)

    async def call(self, method: str, path: str, **body):
        kwargs = {"json": body} if method in ("POST", "PATCH") else {"query_string": body}
        response = await getattr(self.client, method.lower())(f"/api{path}", headers=bearer(self.token), **kwargs)
        return response.status_code, await response.get_json()


async def advertiser_api(client, account=None) -> Api:
    """A wallet signed in and registered as an advertiser."""
    account = account or Account.create()
    api = Api(client, account, await sign_in(client, account))
    status, _ = await api.call("POST", "/advertisers/register", name="Shop")
    assert status == 201
    return api


async def operator_api(client) -> Api:
    return Api(client, OPERATOR, await sign_in(client, OPERATOR))


def campaign_settings(clock, **changes) -> dict:
    return {"name": "Spring sale", "startsAt": clock.now().isoformat(), "endsAt": (clock.now() + timedelta(
        days=10)).isoformat(), "cpm": "2", "cpc": "0.1", "budget": "50", "sizes": ["300x250"], **changes}


async def draft(api: Api, clock, **changes) -> dict:
    status, body = await api.call("POST", "/advertisers/campaigns", **campaign_settings(clock, **changes))
    assert status == 201, body
    return body


async def funded_advertiser(api: Api, amount: int = 100 * G) -> str:
    """Put ``amount`` into the advertiser's unallocated balance (as a credited deposit would)."""
    _, account = await api.call("GET", "/advertisers/account")
    await fund(ledger.advertiser(account["advertiserId"]), amount)
    return account["advertiserId"]


async def approved_campaign(client, clock, api: Api | None = None, **changes) -> tuple[Api, dict, dict]:
    """A funded campaign with one creative, submitted and approved."""
    api = api or await advertiser_api(client)
    await funded_advertiser(api)
    campaign = await draft(api, clock, **changes)
    _, creative = await api.call("POST", f"/advertisers/campaigns/{campaign['id']}/creatives", **CREATIVE)
    assert (await api.call("POST", f"/advertisers/campaigns/{campaign['id']}/allocate", amount="50"))[0] == 200
    assert (await api.call("POST", f"/advertisers/campaigns/{campaign['id']}/submit"))[0] == 200
    status, body = await (await operator_api(client)).call("POST", f"/operators/campaigns/{campaign['id']}/approve")
    assert (status, body["status"]) == (200, "approved")
    return api, campaign, creative


async def serve(client, site, **params) -> dict:
    response = await client.get("/api/serve", query_string={"siteId": site.id, **params}, headers=page(site))
    return await response.get_json()


async def served_after_rebuild(client, site, **params) -> dict:
    """What the site gets once the index rebuilt in the background (the domain only invalidated it)."""
    async def answer() -> dict | None:
        body = await serve(client, site, **params)
        return body if body["kind"] != "NONE" else None

    return await eventually(answer, "an ad served after the rebuild")


async def test_deposit_campaign_review_serve_track_report(client, chain, clock):
    """The whole path: a real deposit, a campaign with a creative and a task, funded and submitted, approved by an
    operator, served, and its tracked impression in the report."""
    account = user(2)
    api = await advertiser_api(client, account)
    status, plan = await api.call("POST", "/advertisers/deposit/prepare", amount="80")
    _, me = await api.call("GET", "/advertisers/account")
    assert status == 200 and plan["accountRef"] == account_ref(me["advertiserId"])
    approve_tx, deposit_tx = plan["transactions"]
    await send_transaction(chain.w3, account, approve_tx)
    receipt = await send_transaction(chain.w3, account, deposit_tx)
    tx_hash = receipt["transactionHash"].to_0x_hex()
    status, credited = await api.call("POST", "/advertisers/deposit", txHash=tx_hash)
    assert (status, credited["status"], credited["amount"]) == (201, "credited", "80")
    assert await api.call("POST", "/advertisers/deposit", txHash=tx_hash) == (200, credited)  # credited once

    site = await make_site()
    campaign = await draft(api, clock)
    cid = campaign["id"]
    assert (campaign["status"], campaign["state"]) == ("draft", "draft")
    status, creative = await api.call("POST", f"/advertisers/campaigns/{cid}/creatives", **CREATIVE)
    assert (status, creative["status"]) == (201, "review")
    status, task = await api.call("POST", f"/advertisers/campaigns/{cid}/tasks", **QUIZ)
    assert (status, task["kind"], task["surface"]) == (201, "QUIZ", "attached")
    assert "answers" not in task["preview"]
    assert (await api.call("POST", f"/advertisers/campaigns/{cid}/allocate", amount="50"))[1]["remaining"] == "50"
    assert (await api.call("POST", f"/advertisers/tasks/{task['id']}/allocate", amount="10"))[1]["pool"] == "10"
    _, money = await api.call("GET", "/advertisers/account")
    assert (money["available"], money["inCampaigns"], money["inTasks"]) == ("20", "50", "10")

    status, submitted = await api.call("POST", f"/advertisers/campaigns/{cid}/submit")
    assert (status, submitted["status"]) == (200, "review")
    await rebuild_index(client.app)
    assert (await serve(client, site))["kind"] == "NONE"  # not before approval

    operator = await operator_api(client)
    _, queue = await operator.call("GET", "/operators/review")
    assert [item["id"] for item in queue["campaigns"]] == [cid]
    assert queue["campaigns"][0]["creatives"][0]["bannerUrl"] == CREATIVE["bannerUrl"]
    assert (await operator.call("POST", f"/operators/campaigns/{cid}/approve"))[0] == 200
    body = await served_after_rebuild(client, site, attached="1")
    assert body["kind"] == "BANNER" and body["ad"]["id"] == creative["id"]
    assert [item["id"] for item in body["attachedTasks"]] == [task["id"]]
    assert (await api.call("GET", f"/advertisers/campaigns/{cid}"))[1]["state"] == "live"

    clock.advance(seconds=2)
    ad = body["ad"]
    tracked = await client.post("/api/track", headers=page(site), json={
        "type": "IMPRESSION", "campaignId": cid, "adId": ad["id"], "siteId": site.id, "fingerprint": "fp-1",
        "rendered": True, "viewportVisible": True, "renderTime": 20, "timestamp": 1767225600000,
        "pageUrl": page_url(site), "trackingToken": ad["trackingToken"]})
    assert await billed(await tracked.get_json())
    scripted = await client.post("/api/track", headers={**page(site), "User-Agent": "python-requests/2.31"}, json={
        "type": "IMPRESSION", "campaignId": cid, "adId": ad["id"], "siteId": site.id, "fingerprint": "fp-2",
        "rendered": True, "viewportVisible": True, "renderTime": 20, "pageUrl": page_url(site),
        "userAgent": "Mozilla/5.0 (X11; Linux x86_64) Chrome/131.0", "trackingToken": ad["trackingToken"]})
    assert not await billed(await scripted.get_json())
    status, report = await api.call("GET", f"/advertisers/campaigns/{cid}/report")
    assert status == 200
    today = report["days"][-1]
    assert (today["day"], today["impressions"], today["billableImpressions"], today["spend"], today["ecpm"]) == (
        clock.now().date().isoformat(), 2, 1, "0.002", "2")
    assert today["filtered"] == report["totals"]["filtered"] == report["refusals"] == {"bot_user_agent": 1}
    assert report["totals"]["completions"] == {task["id"]: 0}
    csv_response = await client.get(f"/api/advertisers/campaigns/{cid}/report.csv", headers=bearer(api.token))
    assert csv_response.mimetype == "text/csv"
    rows = list(csv.DictReader(io.StringIO(await csv_response.get_data(as_text=True))))
    assert list(rows[0])[:9] == ["day", "impressions", "billable_impressions", "clicks", "billable_clicks", "ctr",
                                 "spend", "ecpm", "rewards"]
    assert {name for name in rows[0] if name.startswith("filtered:")} == {f"filtered:{r}" for r in tracking.REASONS}
    for row, day in ((rows[-2], today["day"]), (rows[-1], "total")):
        assert (row["day"], row["impressions"], row["billable_impressions"], row["spend"]) == (day, "2", "1", "0.002")
        assert row["filtered:bot_user_agent"] == "1" and row["filtered:client_rate_exceeded"] == "0"


async def test_every_answer_of_a_campaign_names_it_campaign_id_with_id_as_its_deprecated_alias(client, clock,
                                                                                            banner_cdn):
    """Create, read, list, change, submit, duplicate, review, approve, delete: the campaign's id is ``campaignId``,
    and ``id`` repeats it (marked deprecated in the OpenAPI document)."""
    api = await advertiser_api(client)
    operator = await operator_api(client)
    status, created = await api.call("POST", "/advertisers/campaigns", **campaign_settings(clock))
    cid = created["campaignId"]
    assert status == 201 and cid.startswith("cmp_") and created["id"] == cid
    assert (await api.call("POST", f"/advertisers/campaigns/{cid}/creatives", **CREATIVE))[1]["campaignId"] == cid
    answers = [(await api.call("GET", f"/advertisers/campaigns/{cid}"))[1],
               (await api.call("PATCH", f"/advertisers/campaigns/{cid}", name="Renamed"))[1],
               (await api.call("GET", "/advertisers/campaigns"))[1]["campaigns"][0],
               (await api.call("POST", f"/advertisers/campaigns/{cid}/submit"))[1],
               (await operator.call("GET", "/operators/review"))[1]["campaigns"][0],
               (await operator.call("POST", f"/operators/campaigns/{cid}/approve"))[1]]
    assert [(answer["campaignId"], answer.get("id", cid)) for answer in answers] == [(cid, cid)] * len(answers)
    status, copy = await api.call("POST", f"/advertisers/campaigns/{cid}/duplicate")
    assert status == 201 and copy["campaignId"] == copy["id"] != cid
    status, deleted = await api.call("DELETE", f"/advertisers/campaigns/{copy['campaignId']}")
    assert (status, deleted) == (200, {"campaignId": copy["campaignId"], "id": copy["campaignId"], "deleted": True,
                                       "returned": "0"})

    document = await (await client.get("/openapi.json")).get_json()
    deletion = document["paths"]["/api/advertisers/campaigns/{campaign_id}"]["delete"]["responses"]["200"]
    for schema in (document["components"]["schemas"]["CampaignOut"],
                   deletion["content"]["application/json"]["schema"]):
        assert "campaignId" in schema["required"] and schema["properties"]["id"]["deprecated"] is True


async def test_every_lifecycle_transition_and_its_refusals(client, clock):
    api = await advertiser_api(client)
    operator = await operator_api(client)
    campaign = await draft(api, clock)
    cid = campaign["id"]

    async def act(action: str, who: Api = api):
        return await who.call("POST", f"/advertisers/campaigns/{cid}/{action}")

    status, body = await act("submit")
    assert (status, body["error"]) == (409, "campaign_incomplete")  # nothing to show yet
    await api.call("POST", f"/advertisers/campaigns/{cid}/creatives", **CREATIVE)
    for action in ("pause", "resume"):
        status, body = await act(action)
        assert (status, body["error"], body["currentStatus"]) == (409, "invalid_transition", "draft")
    assert (await act("submit"))[1]["status"] == "review"
    status, body = await api.call("PATCH", f"/advertisers/campaigns/{cid}", name="Changed in review")
    assert (status, body["error"]) == (409, "campaign_locked")
    assert (await act("submit"))[1]["error"] == "invalid_transition"

    status, body = await operator.call("POST", f"/operators/campaigns/{cid}/reject", reason="Landing page 404")
    assert (status, body["status"], body["rejectionReason"]) == (200, "rejected", "Landing page 404")
    assert (await operator.call("POST", f"/operators/campaigns/{cid}/approve"))[1]["error"] == "invalid_transition"
    status, body = await api.call("GET", f"/advertisers/campaigns/{cid}")
    assert (body["status"], body["rejectionReason"]) == ("rejected", "Landing page 404")
    assert (await api.call("PATCH", f"/advertisers/campaigns/{cid}", name="Fixed"))[0] == 200
    assert (await act("submit"))[1]["status"] == "review"
    assert (await operator.call("POST", f"/operators/campaigns/{cid}/approve"))[1]["status"] == "approved"
    assert (await api.call("GET", f"/advertisers/campaigns/{cid}"))[1]["creatives"][0]["status"] == "approved"

    assert (await act("resume"))[1]["error"] == "invalid_transition"
    assert (await act("pause"))[1]["status"] == "paused"
    assert (await act("pause"))[1]["error"] == "invalid_transition"
    assert (await act("resume"))[1]["status"] == "approved"
    assert (await act("end"))[1]["status"] == "ended"
    for action in ("end", "pause", "resume", "submit"):
        status, body = await act(action)
        assert (status, body["error"], body["currentStatus"]) == (409, "invalid_transition", "ended")
    assert (await api.call("PATCH", f"/advertisers/campaigns/{cid}", name="Too late"))[1]["error"] == (
        "campaign_locked")
    assert (await api.call("POST", f"/advertisers/campaigns/{cid}/allocate", amount="1"))[1]["error"] == (
        "invalid_transition")


async def test_a_campaign_ends_by_date_and_by_budget_and_returns_what_is_left(client, clock):
    api, by_date, _ = await approved_campaign(client, clock, endsAt=(clock.now() + timedelta(hours=12)).isoformat())
    await fund(ledger.advertiser((await api.call("GET", "/advertisers/account"))[1]["advertiserId"]), 10 * G)
    small = await draft(api, clock, budget="0.004", cpm="2", cpc="0")
    await api.call("POST", f"/advertisers/campaigns/{small['id']}/creatives", **CREATIVE)
    await api.call("POST", f"/advertisers/campaigns/{small['id']}/allocate", amount="0.004")
    await api.call("POST", f"/advertisers/campaigns/{small['id']}/submit")
    await (await operator_api(client)).call("POST", f"/operators/campaigns/{small['id']}/approve")
    # The small campaign spends its whole budget: two impressions of 0.002.
    async with in_transaction():
        await ledger.book("test_spend", "spend-1", [(ledger.campaign(small["id"]), -4 * G // 1000),
                                                    (ledger.platform("G$"), 4 * G // 1000)], now=clock.now())
    _, listed = await api.call("GET", "/advertisers/campaigns")
    states = {item["id"]: (item["status"], item["state"]) for item in listed["campaigns"]}
    assert states[small["id"]] == ("approved", "unfunded")  # reading settles nothing
    await client.app.extensions["adnet"].jobs.run("settle-campaigns")
    _, listed = await api.call("GET", "/advertisers/campaigns")
    states = {item["id"]: (item["status"], item["state"]) for item in listed["campaigns"]}
    assert states[small["id"]] == ("ended", "ended")  # ended by budget spent
    assert states[by_date["id"]] == ("approved", "live")
    _, before = await api.call("GET", "/advertisers/account")

    clock.advance(hours=12)
    await api.sign_in_again()
    _, listed = await api.call("GET", "/advertisers/campaigns")
    assert {item["id"]: (item["status"], item["state"]) for item in listed["campaigns"]}[by_date["id"]] == (
        "approved", "ended")  # its date has passed; the job stores that
    await client.app.extensions["adnet"].jobs.run("settle-campaigns")
    _, listed = await api.call("GET", "/advertisers/campaigns")
    assert {item["id"]: item["status"] for item in listed["campaigns"]}[by_date["id"]] == "ended"
    _, after = await api.call("GET", "/advertisers/account")
    assert (after["inCampaigns"], Decimal(after["available"])) == ("0", Decimal(before["available"]) + 50)
    _, detail = await api.call("GET", f"/advertisers/campaigns/{by_date['id']}")
    assert (detail["funded"], detail["returned"], detail["remaining"], detail["spent"]) == ("50", "50", "0", "0")
    assert await LedgerTransaction.filter(kind="budget_return").count() == 1


async def test_no_serving_before_approval_outside_dates_or_when_paused(client, clock):
    site = await make_site()
    api = await advertiser_api(client)
    await funded_advertiser(api)
    campaign = await draft(api, clock, startsAt=(clock.now() + timedelta(hours=6)).isoformat(),
                           endsAt=(clock.now() + timedelta(hours=12)).isoformat())
    cid = campaign["id"]
    await api.call("POST", f"/advertisers/campaigns/{cid}/creatives", **CREATIVE)
    await api.call("POST", f"/advertisers/campaigns/{cid}/allocate", amount="50")
    await rebuild_index(client.app)
    assert (await serve(client, site))["kind"] == "NONE"  # draft
    await api.call("POST", f"/advertisers/campaigns/{cid}/submit")
    await rebuild_index(client.app)
    assert (await serve(client, site))["kind"] == "NONE"  # in review
    await (await operator_api(client)).call("POST", f"/operators/campaigns/{cid}/approve")
    await rebuild_index(client.app)
    assert (await api.call("GET", f"/advertisers/campaigns/{cid}"))[1]["state"] == "scheduled"
    assert (await serve(client, site))["kind"] == "NONE"  # approved, before its start
    clock.advance(hours=6, seconds=1)
    await api.sign_in_again()
    assert (await serve(client, site))["kind"] == "BANNER"
    await api.call("POST", f"/advertisers/campaigns/{cid}/pause")
    await rebuild_index(client.app)
    assert (await serve(client, site))["kind"] == "NONE"  # paused
    await api.call("POST", f"/advertisers/campaigns/{cid}/resume")
    await rebuild_index(client.app)
    assert (await serve(client, site))["kind"] == "BANNER"
    clock.advance(hours=6)
    assert (await serve(client, site))["kind"] == "NONE"  # after its end date


async def test_an_edited_creative_goes_back_to_review_while_the_rest_keeps_serving(client, clock):
    site = await make_site()
    api, campaign, first = await approved_campaign(client, clock)
    status, second = await api.call("POST", f"/advertisers/campaigns/{campaign['id']}/creatives",
                                    **{**CREATIVE, "bannerUrl": "https://cdn.example/second.png"})
    assert (status, second["status"]) == (201, "review")
    status, edited = await api.call("PATCH", f"/advertisers/creatives/{first['id']}",
                                    targetUrl="https://shop.example/new-landing")
    assert (status, edited["status"], edited["targetUrl"]) == (200, "review", "https://shop.example/new-landing")
    await rebuild_index(client.app)
    assert (await serve(client, site))["kind"] == "NONE"  # both creatives wait for review
    operator = await operator_api(client)
    _, queue = await operator.call("GET", "/operators/review")
    assert queue["campaigns"] == [] and {item["id"] for item in queue["creatives"]} == {first["id"], second["id"]}
    status, body = await operator.call("POST", f"/operators/creatives/{second['id']}/approve")
    assert (status, body["status"]) == (200, "approved")
    body = await served_after_rebuild(client, site)
    assert body["ad"]["id"] == second["id"]
    for _ in range(20):  # the edited one stays out until approved
        assert (await serve(client, site))["ad"]["id"] == second["id"]
    status, body = await operator.call("POST", f"/operators/creatives/{first['id']}/reject", reason="Misleading")
    assert (status, body["rejectionReason"]) == (200, "Misleading")
    _, detail = await api.call("GET", f"/advertisers/campaigns/{campaign['id']}")
    assert {item["id"]: item["status"] for item in detail["creatives"]} == {first["id"]: "rejected",
                                                                           second["id"]: "approved"}
    assert (await Creative.get(id=first["id"])).target_url == "https://shop.example/new-landing"


async def test_only_the_owner_edits_and_anonymous_callers_get_401(client, clock):
    api, campaign, creative = await approved_campaign(client, clock)
    cid = campaign["id"]
    _, task_campaign = await api.call("POST", "/advertisers/campaigns", **campaign_settings(clock))
    _, task = await api.call("POST", f"/advertisers/campaigns/{task_campaign['id']}/tasks", **QUIZ)
    stranger = await advertiser_api(client)
    await funded_advertiser(stranger)
    attempts = [
        ("GET", f"/advertisers/campaigns/{cid}", {}), ("PATCH", f"/advertisers/campaigns/{cid}", {"name": "Mine"}),
        ("POST", f"/advertisers/campaigns/{cid}/pause", {}), ("POST", f"/advertisers/campaigns/{cid}/end", {}),
        ("POST", f"/advertisers/campaigns/{cid}/allocate", {"amount": "1"}),
        ("POST", f"/advertisers/campaigns/{cid}/creatives", CREATIVE),
        ("PATCH", f"/advertisers/creatives/{creative['id']}", {"targetUrl": "https://evil.example/"}),
        ("POST", f"/advertisers/campaigns/{task_campaign['id']}/tasks", QUIZ),
        ("PATCH", f"/advertisers/tasks/{task['id']}", {"rewardGs": "100"}),
        ("POST", f"/advertisers/tasks/{task['id']}/allocate", {"amount": "1"}),
        ("POST", f"/advertisers/tasks/{task['id']}/end", {}),
        ("GET", f"/advertisers/campaigns/{cid}/report", {}),
    ]
    for method, path, body in attempts:
        status, answer = await stranger.call(method, path, **body)
        assert (status, answer["error"]) == (403, "not_owner"), path
        anonymous = await getattr(client, method.lower())(f"/api{path}", json=body if method != "GET" else None)
        assert anonymous.status_code == 401, path
    stored = await Campaign.get(id=cid)
    assert (stored.name, stored.status) == ("Spring sale", CampaignStatus.APPROVED)
    assert await ledger.balance(ledger.campaign(cid)) == 50 * G
    assert (await Creative.get(id=creative["id"])).target_url == CREATIVE["targetUrl"]
    assert (await stranger.call("GET", "/advertisers/campaigns/cmp_nothing-here-at-all"))[0] == 404


async def test_allocation_never_exceeds_the_balance_also_concurrently(client, clock):
    api = await advertiser_api(client)
    advertiser_id = await funded_advertiser(api, 10 * G)
    campaigns = [await draft(api, clock, budget="100") for _ in range(4)]
    status, body = await api.call("POST", f"/advertisers/campaigns/{campaigns[0]['id']}/allocate", amount="10.5")
    assert (status, body["error"], body["available"]) == (400, "insufficient_balance", "10")
    results = await asyncio.gather(*(api.call("POST", f"/advertisers/campaigns/{campaigns[n % 4]['id']}/allocate",
                                              amount="1") for n in range(25)))
    assert sorted(status for status, _ in results) == [200] * 10 + [400] * 15
    assert await ledger.balance(ledger.advertiser(advertiser_id)) == 0
    assert sum([await ledger.balance(ledger.campaign(item["id"])) for item in campaigns]) == 10 * G


async def test_a_campaign_is_never_funded_beyond_its_budget_also_concurrently(client, clock):
    api = await advertiser_api(client)
    advertiser_id = await funded_advertiser(api, 100 * G)
    campaign = await draft(api, clock, budget="5")
    results = await asyncio.gather(*(api.call("POST", f"/advertisers/campaigns/{campaign['id']}/allocate",
                                              amount="1") for _ in range(12)))
    assert sorted(status for status, _ in results) == [200] * 5 + [409] * 7
    assert {body["error"] for status, body in results if status == 409} == {"over_budget"}
    assert await ledger.balance(ledger.campaign(campaign["id"])) == 5 * G
    assert await ledger.balance(ledger.advertiser(advertiser_id)) == 95 * G
    status, body = await api.call("PATCH", f"/advertisers/campaigns/{campaign['id']}", budget="4")
    assert (status, body["field"]) == (400, "budget")
    assert (await api.call("PATCH", f"/advertisers/campaigns/{campaign['id']}", budget="6"))[0] == 200
    assert (await api.call("POST", f"/advertisers/campaigns/{campaign['id']}/allocate", amount="1"))[0] == 200


async def test_settings_and_creatives_are_validated_and_change_nothing_when_refused(client, clock):
    api = await advertiser_api(client)
    bad_settings = [
        ({"cpm": "-1"}, "invalid_amount", "cpm"), ({"cpm": "0", "cpc": "0"}, "invalid_field", "cpm"),
        ({"endsAt": clock.now().isoformat()}, "invalid_dates", "endsAt"),
        ({"startsAt": "2026-01-01T00:00:00"}, "invalid_field", "startsAt"),
        ({"sizes": ["300x250", "300x0250x1"]}, "invalid_field", "sizes.1"),
        ({"siteAllow": ["site_unknown-site-id"]}, "invalid_field", "siteAllow"),
        ({"budget": "1e3"}, "invalid_amount", "budget"), ({"name": ""}, "invalid_field", "name"),
    ]
    for changes, code, field in bad_settings:
        status, body = await api.call("POST", "/advertisers/campaigns", **campaign_settings(clock, **changes))
        assert (status, body["error"], body["field"]) == (400, code, field), changes
    assert await Campaign.all().count() == 0
    campaign = await draft(api, clock)
    for url in ("javascript:alert(1)", "ftp://files.example/x", "https://good.example@evil.example/", "/relative",
                "https://", "data:text/html,hi", "https://shop.example/a b"):
        status, body = await api.call("POST", f"/advertisers/campaigns/{campaign['id']}/creatives",
                                      **{**CREATIVE, "targetUrl": url})
        assert (status, body["error"], body["field"]) == (400, "invalid_url", "targetUrl"), url
    status, body = await api.call("POST", f"/advertisers/campaigns/{campaign['id']}/creatives",
                                  **{**CREATIVE, "targetUrl": "http://shop.example/plain-http"})
    assert status == 201
    assert await Creative.all().count() == 1


async def test_tasks_and_units_are_validated_and_locked_after_review(client, clock):
    api = await advertiser_api(client)
    campaign = await draft(api, clock)
    path = f"/advertisers/campaigns/{campaign['id']}/tasks"
    status, body = await api.call("POST", path, **{**QUIZ, "config": {"question": "2+2?", "answers": []}})
    assert (status, body["error"], body["field"]) == (400, "invalid_config", "config.answers")
    status, body = await api.call("POST", path, **{**QUIZ, "config": {"question": "2+2?", "answers": ["5"],
                                                                       "choices": ["3", "4"]}})
    assert (status, body["error"], body["field"]) == (400, "invalid_config", "config")
    assert "one of the accepted answers must be among the choices" in body["message"]
    status, body = await api.call("POST", path, kind="VISIT_URL", title="Visit", config={"url": "ftp://x.example"})
    assert (status, body["error"], body["field"]) == (400, "invalid_config", "config.url")
    status, body = await api.call("POST", path, kind="TRANSFER", title="?", config={})
    assert (status, body["error"]) == (400, "invalid_field")
    status, body = await api.call("POST", path, **{**QUIZ, "endsAt": (clock.now() + timedelta(days=30)).isoformat()})
    assert (status, body["error"]) == (400, "invalid_dates")
    status, poll = await api.call("POST", path, kind="POLL", title="Poll", rewardPoints=1, config={
        "question": "Which?", "options": [{"id": "a", "label": "A"}, {"id": "b", "label": "B"}]})
    assert (status, poll["surface"], poll["endsAt"]) == (201, "standalone", campaign["endsAt"])
    await api.call("POST", f"/advertisers/campaigns/{campaign['id']}/creatives", **CREATIVE)
    await api.call("POST", f"/advertisers/campaigns/{campaign['id']}/submit")
    await (await operator_api(client)).call("POST", f"/operators/campaigns/{campaign['id']}/approve")
    status, body = await api.call("POST", path, **QUIZ)
    assert (status, body["error"]) == (409, "campaign_locked")  # a new task would serve unreviewed
    status, body = await api.call("PATCH", f"/advertisers/tasks/{poll['id']}", title="Changed after review")
    assert (status, body["error"]) == (409, "campaign_locked")
    status, body = await api.call("PATCH", f"/advertisers/tasks/{poll['id']}", rewardPoints=3, maxPerWallet=2)
    assert (status, body["rewardPoints"], body["maxPerWallet"], body["title"]) == (200, 3, 2, "Poll")


async def test_ending_a_task_returns_its_pool(client, clock):
    api = await advertiser_api(client)
    advertiser_id = await funded_advertiser(api, 10 * G)
    campaign = await draft(api, clock)
    _, task = await api.call("POST", f"/advertisers/campaigns/{campaign['id']}/tasks", **QUIZ)
    await api.call("POST", f"/advertisers/tasks/{task['id']}/allocate", amount="4")
    assert await ledger.balance(ledger.advertiser(advertiser_id)) == 6 * G
    status, body = await api.call("POST", f"/advertisers/tasks/{task['id']}/end")
    assert (status, body["returned"]) == (200, "4")
    assert await ledger.balance(ledger.advertiser(advertiser_id)) == 10 * G
    assert (await api.call("POST", f"/advertisers/tasks/{task['id']}/end"))[1]["error"] == "task_ended"
    assert (await api.call("POST", f"/advertisers/tasks/{task['id']}/allocate", amount="1"))[1]["error"] == (
        "task_ended")


async def test_unregistered_wallet_and_advertiser_withdrawal(client, chain, clock):
    wallet = Account.create()
    unregistered = Api(client, wallet, await sign_in(client, wallet))
    status, body = await unregistered.call("GET", "/advertisers/account")
    assert status == 404
    account = user(3)
    api = await advertiser_api(client, account)
    await funded_advertiser(api, 5 * G)
    status, body = await api.call("POST", "/advertisers/withdraw", amount="6")
    assert (status, body["error"]) == (400, "insufficient_balance")
    status, body = await api.call("POST", "/advertisers/withdraw", amount="2.5")
    assert status == 201 and body["transaction"]["recipient"].lower() == account.address.lower()
    assert body["transaction"]["amount"] == str(5 * G // 2)
    _, money = await api.call("GET", "/advertisers/account")
    assert (money["available"], money["pendingWithdrawals"]) == ("2.5", "2.5")
    results = await asyncio.gather(*(api.call("POST", "/advertisers/withdraw", amount="1") for _ in range(6)))
    assert sorted(status for status, _ in results) == [201, 201] + [400] * 4
    _, money = await api.call("GET", "/advertisers/account")
    assert (money["available"], money["pendingWithdrawals"]) == ("0.5", "4.5")


async def test_a_banner_the_campaign_cannot_show_is_refused_and_nothing_is_stored(client, clock, banner_cdn):
    """A 250x250 creative in a campaign of other sizes, a file of another size than claimed, an image that is not
    there: each refused with the field named, and no creative stored."""
    api = await advertiser_api(client)
    campaign = await draft(api, clock, sizes=["300x250", "728x90"])
    banner_cdn.serve("/square.png", png(250, 250))
    refusals = [({**CREATIVE, "bannerUrl": "https://cdn.example/square.png", "size": "250x250"},
                 "size_not_in_campaign", "size"),
                ({**CREATIVE, "bannerUrl": "https://cdn.example/square.png"}, "banner_size_mismatch", "size"),
                ({**CREATIVE, "bannerUrl": "https://cdn.example/gone.png"}, "banner_unreachable", "bannerUrl")]
    for creative, code, field in refusals:
        status, body = await api.call("POST", f"/advertisers/campaigns/{campaign['id']}/creatives", **creative)
        assert (status, body["error"], body["field"]) == (400, code, field), body
    assert await Creative.all().count() == 0
    status, _ = await api.call("POST", f"/advertisers/campaigns/{campaign['id']}/creatives", **CREATIVE)
    assert status == 201 and "/square.png" in banner_cdn.requested


async def test_changing_a_creative_to_a_banner_of_another_size_is_refused(client, clock, banner_cdn):
    api = await advertiser_api(client)
    campaign = await draft(api, clock)
    _, creative = await api.call("POST", f"/advertisers/campaigns/{campaign['id']}/creatives", **CREATIVE)
    banner_cdn.serve("/wide.png", png(728, 90))
    status, body = await api.call("PATCH", f"/advertisers/creatives/{creative['id']}",
                                  bannerUrl="https://cdn.example/wide.png")
    assert (status, body["error"], body["actualSize"]) == (400, "banner_size_mismatch", "728x90")
    assert (await Creative.get(id=creative["id"])).banner_url == CREATIVE["bannerUrl"]
    status, body = await api.call("PATCH", f"/advertisers/creatives/{creative['id']}", description="New words")
    assert status == 200 and body["description"] == "New words"


async def test_a_campaign_named_with_a_nul_character_is_refused_and_nothing_is_made(client, clock):
    """A NUL in any text is a 400 naming its field on every database (PostgreSQL would fail to store it)."""
    api = await advertiser_api(client)
    await funded_advertiser(api)

    status, body = await api.call("POST", "/advertisers/campaigns", **campaign_settings(clock, name="Spring\x00sale"))

    assert status == 400 and body["error"] == "invalid_field" and body["field"] == "name"
    assert "NUL" in body["message"] and await Campaign.all().count() == 0
