"""A publisher's controls through HTTP: what a site blocks (advertisers, campaigns, categories) and refuses
(attached tasks, standalone units, task kinds) is stored, announced to the serving index, and honoured by
``GET /api/serve`` from memory; refusals change nothing; an operator's category correction reaches serving too."""

from __future__ import annotations

import secrets

import pytest
from eth_account import Account

from adnet.accounts.models import Site
from adnet.campaigns.models import Campaign, Category
from adnet.tasks.models import TaskKind
from tests.api.test_advertisers import (
    advertiser_api,
    draft,
    operator_api,
    settings,  # noqa: F401 - the settings with an operator
)
from tests.auth_helpers import bearer, sign_in
from tests.conftest import rebuild_index
from tests.factories import make_advertiser, make_campaign, make_creative, make_publisher, make_site, make_task
from tests.sql import recorded_statements
from tests.waiting import eventually

POLL = {"question": "Which chain?", "options": [{"id": "a", "label": "A"}, {"id": "b", "label": "B"}]}
QUIZ = {"question": "2+2?", "answers": ["four"], "choices": ["3", "four"]}
VISIT = {"url": "https://advertiser.example/visit"}
DEFAULTS = {"blockedAdvertisers": [], "blockedCampaigns": [], "blockedCategories": [], "blockedCategoryIabIds": [],
            "attachedTasks": True, "units": True, "refusedTaskKinds": []}
TRIES = 30


@pytest.fixture
async def owner(client):
    """A signed-in publisher with one site: (account, token, site)."""
    account = Account.create()
    token = await sign_in(client, account)
    site = await make_site(await make_publisher(account.address.lower()), domain=f"{secrets.token_hex(4)}.example")
    return account, token, site


async def put_controls(client, owner, **controls):
    account, token, site = owner
    response = await client.put(f"/api/publishers/sites/{site.id}/controls",
                                json={"wallet": account.address, **controls}, headers=bearer(token))
    return response.status_code, await response.get_json()


async def served(client, site, **params) -> list[dict]:
    answers = []
    for _ in range(TRIES):
        response = await client.get("/api/serve", query_string={"siteId": site.id, **params},
                                    headers={"Origin": f"https://{site.domain}"})
        assert response.status_code == 200
        answers.append(await response.get_json())
    return answers


def campaigns_of(answers: list[dict]) -> set[str]:
    return {answer["ad"]["campaignId"] for answer in answers if answer["kind"] == "BANNER"}


async def two_campaigns(client, **first_fields) -> tuple[Campaign, Campaign]:
    first = await make_campaign(**first_fields)
    other = await make_campaign()
    for campaign in (first, other):
        await make_creative(campaign)
    await rebuild_index(client.app)
    return first, other


async def test_controls_are_read_and_replaced(client, owner):
    _, token, site = owner
    response = await client.get(f"/api/publishers/sites/{site.id}/controls", headers=bearer(token))
    assert response.status_code == 200 and await response.get_json() == {"siteId": site.id, **DEFAULTS}
    advertiser = await make_advertiser()
    wanted = {"blockedAdvertisers": [advertiser.id, advertiser.id], "blockedCampaigns": ["cmp_abcdefghijkl"],
              "blockedCategories": ["gambling"], "attachedTasks": False, "units": True,
              "refusedTaskKinds": ["QUIZ"]}
    status, body = await put_controls(client, owner, **wanted)
    assert status == 200
    # Each blocked category with its IAB Ad Product Taxonomy 2.0 id (Gambling), as OpenRTB bcat carries it.
    assert body == {"siteId": site.id, **wanted, "blockedAdvertisers": [advertiser.id],
                    "blockedCategoryIabIds": ["1361"]}
    response = await client.get(f"/api/publishers/sites/{site.id}/controls", headers=bearer(token))
    assert await response.get_json() == body
    status, body = await put_controls(client, owner)  # an empty body clears every control
    assert (status, body) == (200, {"siteId": site.id, **DEFAULTS})


@pytest.mark.parametrize(("controls", "error", "field"), [
    ({"blockedAdvertisers": ["cmp_abcdefghijkl"]}, "invalid_field", "blockedAdvertisers.0"),
    ({"blockedCampaigns": ["nope"]}, "invalid_field", "blockedCampaigns.0"),
    ({"blockedCategories": ["weapons"]}, "invalid_field", "blockedCategories.0"),
    ({"refusedTaskKinds": ["DANCE"]}, "invalid_field", "refusedTaskKinds.0"),
    ({"units": "maybe"}, "invalid_field", "units"),
])
async def test_bad_controls_are_refused_and_change_nothing(client, owner, controls, error, field):
    status, body = await put_controls(client, owner, **controls)
    assert (status, body["error"], body.get("field")) == (400, error, field)
    assert (await Site.get(id=owner[2].id)).controls == {}


async def test_only_the_owner_sets_controls(client, owner):
    _, _, site = owner
    stranger = Account.create()
    token = await sign_in(client, stranger)
    response = await client.put(f"/api/publishers/sites/{site.id}/controls",
                                json={"wallet": stranger.address, "units": False}, headers=bearer(token))
    assert response.status_code == 403 and (await response.get_json())["error"] == "not_owner"
    response = await client.get(f"/api/publishers/sites/{site.id}/controls", headers=bearer(token))
    assert response.status_code == 403
    assert (await Site.get(id=site.id)).controls == {}


@pytest.mark.parametrize("block", ["advertiser", "campaign", "category"])
async def test_a_blocked_advertiser_campaign_or_category_is_not_served(client, owner, block):
    _, _, site = owner
    blocked, other = await two_campaigns(client, category=Category.GAMBLING)
    assert campaigns_of(await served(client, site)) == {blocked.id, other.id}
    controls = {"advertiser": {"blockedAdvertisers": [blocked.advertiser_id]},  # type: ignore[attr-defined]
                "campaign": {"blockedCampaigns": [blocked.id]},
                "category": {"blockedCategories": ["gambling"]}}[block]
    assert (await put_controls(client, owner, **controls))[0] == 200

    async def honoured() -> bool:
        return campaigns_of(await served(client, site)) == {other.id}
    await eventually(honoured, "serving honouring the change")
    assert campaigns_of(await served(client, site)) == {other.id}
    assert (await put_controls(client, owner))[0] == 200  # unblocked: served again

    async def again() -> bool:
        return blocked.id in campaigns_of(await served(client, site))
    await eventually(again, "serving honouring the change")


async def test_a_blocked_advertisers_units_are_not_served(client, owner):
    _, _, site = owner
    advertiser = await make_advertiser()
    campaign = await make_campaign(advertiser)
    unit = await make_task(kind=TaskKind.POLL, campaign=campaign, config=POLL)
    await rebuild_index(client.app)
    assert {answer["task"]["id"] for answer in await served(client, site, kind="POLL")} == {unit.id}
    assert (await put_controls(client, owner, blockedAdvertisers=[advertiser.id]))[0] == 200

    async def honoured() -> bool:
        return {answer["kind"] for answer in await served(client, site, kind="POLL")} == {"NONE"}
    await eventually(honoured, "serving honouring the change")


async def test_units_off_and_refused_kinds_leave_units_out(client, owner):
    _, _, site = owner
    poll = await make_task(kind=TaskKind.POLL, config=POLL)
    feedback = await make_task(kind=TaskKind.FEEDBACK, config={"question": "How was it?"})
    await rebuild_index(client.app)
    assert {answer["task"]["id"] for answer in await served(client, site, kind="POLL,FEEDBACK")} == {
        poll.id, feedback.id}
    assert (await put_controls(client, owner, refusedTaskKinds=["POLL"]))[0] == 200

    async def no_polls() -> bool:
        return {answer["task"]["id"] for answer in await served(client, site, kind="POLL,FEEDBACK")} == {feedback.id}
    await eventually(no_polls, "serving honouring the change")
    assert (await put_controls(client, owner, units=False))[0] == 200

    async def no_units() -> bool:
        return {answer["kind"] for answer in await served(client, site, kind="POLL,FEEDBACK")} == {"NONE"}
    await eventually(no_units, "serving honouring the change")


async def test_attached_tasks_off_or_refused_by_kind(client, owner):
    _, _, site = owner
    campaign = await make_campaign()
    await make_creative(campaign)
    quiz = await make_task(kind=TaskKind.QUIZ, campaign=campaign, config=QUIZ)
    visit = await make_task(kind=TaskKind.VISIT_URL, campaign=campaign, config=VISIT)
    await rebuild_index(client.app)

    async def tasks_shown() -> set[frozenset[str]]:
        return {frozenset(task["id"] for task in answer["attachedTasks"])
                for answer in await served(client, site, attached="1")}
    assert await tasks_shown() == {frozenset((quiz.id, visit.id))}
    assert (await put_controls(client, owner, refusedTaskKinds=["QUIZ"]))[0] == 200

    async def no_quiz() -> bool:
        return await tasks_shown() == {frozenset((visit.id,))}
    await eventually(no_quiz, "serving honouring the change")
    assert (await put_controls(client, owner, attachedTasks=False))[0] == 200

    async def none_attached() -> bool:
        return await tasks_shown() == {frozenset()}
    await eventually(none_attached, "serving honouring the change")
    answers = await served(client, site, attached="1")
    assert campaigns_of(answers) == {campaign.id}  # the banner still serves, without its tasks


async def test_controls_are_applied_without_a_database_query(client, owner):
    _, _, site = owner
    blocked, other = await two_campaigns(client)
    await make_task(kind=TaskKind.POLL, config=POLL)
    await make_task(kind=TaskKind.QUIZ, campaign=other, config=QUIZ)
    assert (await put_controls(client, owner, blockedCampaigns=[blocked.id], refusedTaskKinds=["SURVEY"]))[0] == 200
    await rebuild_index(client.app)
    await served(client, site)  # warm-up outside the count
    with recorded_statements() as queries:
        for params in ({}, {"attached": "1"}, {"kind": "POLL"}, {"kind": "SURVEY"}, {"kind": "BANNER,POLL"}):
            answers = await served(client, site, **params)
            assert blocked.id not in campaigns_of(answers)
    assert queries == []


async def test_an_operator_correcting_a_category_reaches_serving(client, owner):
    _, _, site = owner
    campaign, other = await two_campaigns(client)
    assert campaign.category == Category.OTHER
    assert (await put_controls(client, owner, blockedCategories=["gambling"]))[0] == 200
    await rebuild_index(client.app)
    assert campaigns_of(await served(client, site)) == {campaign.id, other.id}
    operator = await operator_api(client)
    status, body = await operator.call("POST", f"/operators/campaigns/{campaign.id}/category", category="gambling")
    assert (status, body) == (200, {"campaignId": campaign.id, "category": "gambling", "categoryIabId": "1361"})
    assert (await Campaign.get(id=campaign.id)).category_iab_id == "1361"
    assert (await Campaign.get(id=campaign.id)).category == Category.GAMBLING

    async def honoured() -> bool:
        return campaigns_of(await served(client, site)) == {other.id}
    await eventually(honoured, "serving honouring the change")
    status, body = await operator.call("POST", f"/operators/campaigns/{campaign.id}/category", category="weapons")
    assert (status, body["error"]) == (400, "invalid_field")
    publisher = await sign_in(client, Account.create())
    response = await client.post(f"/api/operators/campaigns/{campaign.id}/category", json={"category": "defi"},
                                 headers=bearer(publisher))
    assert response.status_code == 403
    assert (await Campaign.get(id=campaign.id)).category == Category.GAMBLING


async def test_the_advertiser_proposes_a_category(client, clock):
    api = await advertiser_api(client)
    campaign = await draft(api, clock, category="defi")
    assert campaign["category"] == "defi"
    status, body = await api.call("PATCH", f"/advertisers/campaigns/{campaign['id']}", category="nft")
    assert (status, body["category"]) == (200, "nft")
    status, body = await api.call("PATCH", f"/advertisers/campaigns/{campaign['id']}", category="weapons")
    assert (status, body["error"], body["field"]) == (400, "invalid_field", "category")
    assert (await Campaign.get(id=campaign["id"])).category == Category.NFT
    assert (await draft(api, clock))["category"] == "other"
