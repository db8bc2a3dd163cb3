"""Members of an advertiser account through HTTP: each signs in with its own wallet and names the account it acts on
(``advertiserId``) where the route does not follow from a campaign, creative or task; a viewer reads the account's
campaigns, balance and reports but changes nothing, a manager manages campaigns, creatives, tasks and funds (a
withdrawal paid to the account's wallet), an owner also manages members; a removed member is refused at once, and
strangers are refused throughout."""

from __future__ import annotations

from datetime import timedelta

import pytest
from eth_account import Account

from adnet.campaigns.models import Campaign, CampaignStatus
from adnet.money import ledger
from adnet.money.models import Withdrawal
from tests.api.test_members import added_by_a_co_owner, signed_in
from tests.factories import G, fund, make_advertiser, make_campaign, make_creative

QUIZ = {"kind": "QUIZ", "title": "Quiz", "config": {"question": "2+2?", "answers": ["four"]}, "rewardPoints": 5,
        "rewardGs": "0.5"}


@pytest.fixture
async def account(client):
    """An advertiser account (its owner signed in) holding 5 G$ unallocated, with a draft campaign and its
    creative: (owner, advertiser, campaign, creative)."""
    owner = await signed_in(client)
    advertiser = await make_advertiser(owner.address.lower())
    await fund(ledger.advertiser(advertiser.id), 5 * G)
    campaign = await make_campaign(advertiser, status=CampaignStatus.DRAFT, funded=0)
    creative = await make_creative(campaign)
    return owner, advertiser, campaign, creative


def members_path(advertiser) -> str:
    return f"/api/advertisers/accounts/{advertiser.id}/members"


def campaign_settings(clock) -> dict:
    return {"name": "Members' sale", "startsAt": clock.now().isoformat(),
            "endsAt": (clock.now() + timedelta(days=10)).isoformat(), "cpm": "2", "cpc": "0.1", "budget": "3",
            "sizes": ["300x250"]}


async def test_a_viewer_reads_campaigns_and_reports_and_changes_nothing(client, clock, account):
    owner, advertiser, campaign, creative = account
    viewer = await signed_in(client)
    status, body = await owner.post(members_path(advertiser), wallet=viewer.address, role="viewer")
    assert status == 201 and body["role"] == "viewer" and body["wallet"] == viewer.address
    on_account = {"advertiserId": advertiser.id}

    status, listed = await viewer.get("/api/advertisers/campaigns", **on_account)
    assert status == 200 and [row["id"] for row in listed["campaigns"]] == [campaign.id]
    status, money = await viewer.get("/api/advertisers/account", **on_account)
    assert status == 200 and (money["advertiserId"], money["available"]) == (advertiser.id, "5")
    assert (await viewer.get(f"/api/advertisers/campaigns/{campaign.id}"))[0] == 200
    assert (await viewer.get(f"/api/advertisers/campaigns/{campaign.id}/report"))[0] == 200
    assert (await viewer.get("/api/advertisers/withdrawals", **on_account))[0] == 200
    assert (await viewer.get("/api/advertisers/account"))[0] == 404  # its own account: none

    for method, path, body in (
            ("post", "/api/advertisers/campaigns", campaign_settings(clock)),
            ("patch", f"/api/advertisers/campaigns/{campaign.id}", {"name": "Mine"}),
            ("post", f"/api/advertisers/campaigns/{campaign.id}/submit", {}),
            ("post", f"/api/advertisers/campaigns/{campaign.id}/creatives", {
                "bannerUrl": "https://cdn.example/b.png", "targetUrl": "https://shop.example/", "size": "300x250"}),
            ("patch", f"/api/advertisers/creatives/{creative.id}", {"description": "Mine"}),
            ("post", f"/api/advertisers/campaigns/{campaign.id}/tasks", QUIZ),
            ("post", f"/api/advertisers/campaigns/{campaign.id}/allocate", {"amount": "1"}),
            ("post", "/api/advertisers/withdraw", {"amount": "1"})):
        call = viewer.post(path, on_account, **body) if method == "post" else viewer.patch(path, **body)
        status, refused = await call
        assert status == 403, path
        assert (refused["error"], refused["role"], refused["needed"]) == ("insufficient_role", "viewer", "manager")
    status, refused = await viewer.post(members_path(advertiser), wallet=Account.create().address, role="viewer")
    assert status == 403 and refused["needed"] == "owner"
    stored = await Campaign.get(id=campaign.id)
    assert (stored.name, stored.status) == (campaign.name, CampaignStatus.DRAFT)
    assert await Campaign.filter(advertiser_id=advertiser.id).count() == 1 and await Withdrawal.all().count() == 0


async def test_a_manager_manages_campaigns_creatives_tasks_and_funds_for_the_account(client, clock, account):
    owner, advertiser, campaign, creative = account
    manager = await signed_in(client)
    await owner.post(members_path(advertiser), wallet=manager.address, role="manager")
    on_account = {"advertiserId": advertiser.id}

    status, created = await manager.post("/api/advertisers/campaigns", on_account, **campaign_settings(clock))
    assert status == 201
    assert (await Campaign.get(id=created["id"])).advertiser_id == advertiser.id  # the account's, not the manager's
    status, edited = await manager.patch(f"/api/advertisers/campaigns/{campaign.id}", name="Renamed")
    assert (status, edited["name"]) == (200, "Renamed")
    assert (await manager.patch(f"/api/advertisers/creatives/{creative.id}", description="New"))[0] == 200
    status, task = await manager.post(f"/api/advertisers/campaigns/{created['id']}/tasks", **QUIZ)
    assert status == 201
    status, funded = await manager.post(f"/api/advertisers/campaigns/{created['id']}/allocate", amount="2")
    assert (status, funded["remaining"]) == (200, "2")
    assert (await manager.post(f"/api/advertisers/tasks/{task['id']}/allocate", amount="1"))[0] == 200
    status, withdrawn = await manager.post("/api/advertisers/withdraw", on_account, amount="2")
    assert status == 201
    assert withdrawn["transaction"]["recipient"] == owner.address  # the account's wallet, never the manager's
    assert await ledger.balance(ledger.advertiser(advertiser.id)) == 0
    status, refused = await manager.post(members_path(advertiser), wallet=Account.create().address, role="owner")
    assert (status, refused["error"]) == (403, "insufficient_role")


async def test_an_owner_member_manages_members_and_removal_takes_effect_at_once(client, clock, account):
    owner, advertiser, campaign, _ = account
    co_owner, manager, listed = await added_by_a_co_owner(client, clock, owner, members_path(advertiser), "manager")
    assert listed["advertiserId"] == advertiser.id
    assert (await manager.patch(f"/api/advertisers/campaigns/{campaign.id}", name="Before"))[0] == 200

    status, removed = await co_owner.post(f"{members_path(advertiser)}/{manager.address}/remove")
    assert (status, removed["advertiserId"], removed["removed"]) == (200, advertiser.id, True)
    status, refused = await manager.patch(f"/api/advertisers/campaigns/{campaign.id}", name="After")
    assert (status, refused["error"]) == (403, "not_owner")
    status, refused = await manager.get("/api/advertisers/account", advertiserId=advertiser.id)
    assert (status, refused["error"]) == (403, "not_owner")
    assert (await Campaign.get(id=campaign.id)).name == "Before"
    status, _ = await co_owner.post(f"{members_path(advertiser)}/{owner.address}/remove")
    assert status == 404  # the account's own wallet is no member row: it cannot be removed


async def test_strangers_are_refused_on_the_accounts_routes(client, account):
    _, advertiser, campaign, _ = account
    stranger = await signed_in(client)
    assert (await stranger.get("/api/advertisers/campaigns", advertiserId=advertiser.id))[1]["error"] == "not_owner"
    assert (await stranger.get(f"/api/advertisers/campaigns/{campaign.id}"))[1]["error"] == "not_owner"
    assert (await stranger.get("/api/advertisers/campaigns", advertiserId="adv_unknown000000000000"))[0] == 404
    assert (await stranger.get("/api/advertisers/account", advertiserId=campaign.id))[0] == 404
    assert (await stranger.get(f"/api/publishers/accounts/{advertiser.id}/members"))[0] == 404


async def test_the_openapi_document_describes_the_member_routes_and_the_account_parameter(client):
    document = await (await client.get("/openapi.json")).get_json()
    members = document["paths"]["/api/advertisers/accounts/{account_id}/members"]
    assert {"get", "post"} <= set(members) and "201" in members["post"]["responses"]
    assert "/api/advertisers/accounts/{account_id}/members/{wallet}/remove" in document["paths"]
    for path, method in (("/api/advertisers/account", "get"), ("/api/advertisers/campaigns", "post"),
                         ("/api/advertisers/withdraw", "post")):
        parameters = {parameter["name"]: parameter for parameter in document["paths"][path][method]["parameters"]}
        assert parameters["advertiserId"]["in"] == "query", path
    assert "Idempotency-Key" in {parameter["name"] for parameter in
                                 document["paths"]["/api/advertisers/withdraw"]["post"]["parameters"]}
