"""One rule for where a campaign may be shown and paid (``adnet.campaigns.eligibility``), through HTTP on every path
that serves or pays: ``GET /api/serve``, ``POST /api/track``, ``POST /api/tasks/complete`` (a task attached to a
campaign, completed on a site) and ``POST /api/interactions`` (POLL, FEEDBACK and SURVEY units of a campaign).

Each rule is set after the campaign could run on the site (as an advertiser editing ``siteDeny``/``siteAllow``, a
publisher blocking or refusing, a site switched off or losing its verification would): serving leaves the campaign
out; tracking records the event with the rule's named reason and bills nothing; a completion or an answer is 409
``not_allowed_on_site`` (404 for a site switched off) and records nothing. Every refusal leaves the ledger and the
claims as they were; the same requests on the site the rule allows pay (the last tests), so each refusal is the
rule's doing.
"""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import pytest
from quart import current_app

from adnet.accounts.models import Site
from adnet.campaigns.models import Campaign, Category, Creative
from adnet.delivery.models import TrackingEvent
from adnet.interactions.models import Interaction, SurveySession
from adnet.money import ledger
from adnet.money.models import Claim, LedgerTransaction
from adnet.tasks.models import Completion, Task, TaskKind
from tests.api.test_serve import QUIZ, app_context  # noqa: F401 - autouse: the app as the current app
from tests.api.test_track import CPC, CPM, billed, event_body, post, serve_ad, served_and_seen
from tests.conftest import rebuild_index
from tests.factories import G, make_campaign, make_creative, make_site, make_task, wallet_address

POLL = {"question": "Which chain?", "options": [{"id": "eth", "label": "Ethereum"}, {"id": "celo", "label": "Celo"}]}
FEEDBACK = {"question": "How was it?", "rating": {"min": 1, "max": 5, "required": True}}
SURVEY = {"questions": [{"id": "q1", "type": "single", "prompt": "Pick one",
                         "options": [{"id": "a", "label": "A"}, {"id": "b", "label": "B"}]}]}
UNITS = {TaskKind.POLL: (POLL, {"optionId": "celo"}), TaskKind.FEEDBACK: (FEEDBACK, {"rating": 4}),
         TaskKind.SURVEY: (SURVEY, {"questionId": "q1", "optionId": "a"})}
SERVES = 20  # serve requests per check: the campaign is the only one, so a single draw would show it


@dataclass(frozen=True)
class World:
    """A verified site, another one, and a campaign of the DeFi category that may run on both, with a banner, an
    attached QUIZ task and a POLL, a FEEDBACK and a SURVEY unit, each with a funded G$ pool."""

    site: Site
    elsewhere: Site
    campaign: Campaign
    creative: Creative
    quiz: Task
    units: dict[TaskKind, Task]


async def make_world() -> World:
    site = await make_site(domain=f"{secrets.token_hex(4)}.example")
    elsewhere = await make_site(domain=f"{secrets.token_hex(4)}.example")
    campaign = await make_campaign(cpm=CPM, cpc=CPC, category=Category.DEFI)
    creative = await make_creative(campaign)
    quiz = await make_task(kind=TaskKind.QUIZ, campaign=campaign, config=QUIZ, pool=10 * G)
    units = {kind: await make_task(kind=kind, campaign=campaign, config=config, pool=10 * G)
             for kind, (config, _) in UNITS.items()}
    await rebuild_index(current_app)
    return World(site, elsewhere, campaign, creative, quiz, units)


def _set_site(**fields) -> Callable[[World], Awaitable[object]]:
    async def apply(world: World) -> object:
        return await Site.filter(id=world.site.id).update(**fields)
    return apply


def _set_controls(**controls) -> Callable[[World], Awaitable[object]]:
    return _set_site(controls=controls)


async def _deny(world: World) -> object:
    return await Campaign.filter(id=world.campaign.id).update(site_deny=[world.site.id])


async def _allow_elsewhere(world: World) -> object:
    return await Campaign.filter(id=world.campaign.id).update(site_allow=[world.elsewhere.id])


async def _block_advertiser(world: World) -> object:
    return await Site.filter(id=world.site.id).update(
        controls={"blocked_advertisers": [world.campaign.advertiser_id]})  # type: ignore[attr-defined]


# Each rule, as the change that makes it refuse the site, and the reason tracking records (None: 404, nothing
# recorded). The kind rules refuse tasks and units, never the banner itself.
RULES: dict[str, tuple[Callable[[World], Awaitable[object]], str | None]] = {
    "siteDeny": (_deny, "site_excluded"),
    "siteAllow": (_allow_elsewhere, "site_excluded"),
    "blocked advertiser": (_block_advertiser, "site_blocked"),
    "blocked category": (_set_controls(blocked_categories=["defi"]), "site_blocked"),
    "inactive site": (_set_site(active=False), None),
    "unverified site": (_set_site(verified=False), "site_unverified"),
}
KIND_RULES: dict[str, Callable[[World], Awaitable[object]]] = {
    "task kind refused": _set_controls(refused_task_kinds=["QUIZ", "POLL", "FEEDBACK", "SURVEY"]),
    "units and attached tasks off": _set_controls(units=False, attached_tasks=False),
}
PAYING_RULES = {**{name: change for name, (change, _) in RULES.items()}, **KIND_RULES}


async def apply(rule: Callable[[World], Awaitable[object]], world: World) -> None:
    await rule(world)
    await rebuild_index(current_app)  # what the change's announcement does in a moment


async def money() -> tuple[int, int, int, int, int]:
    """What a refusal must leave as it was: ledger transactions, claims, completions, answers and survey sessions."""
    return (await LedgerTransaction.all().count(), await Claim.all().count(), await Completion.all().count(),
            await Interaction.all().count(), await SurveySession.all().count())


async def serve(client, site: Site, **params) -> list[dict]:
    answers = []
    for _ in range(SERVES):
        response = await client.get("/api/serve", query_string={"siteId": site.id, **params},
                                    headers={"Origin": f"https://{site.domain}"})
        if response.status_code == 404:
            return []
        assert response.status_code == 200
        answers.append(await response.get_json())
    return answers


async def complete(client, world: World, site: Site) -> tuple[int, dict]:
    response = await client.post("/api/tasks/complete", json={
        "taskId": world.quiz.id, "wallet": wallet_address(), "fingerprint": secrets.token_hex(8),
        "proof": {"answer": "four-secret"}, "siteId": site.id})
    return response.status_code, await response.get_json()


async def answer(client, world: World, kind: TaskKind, site: Site) -> tuple[int, dict]:
    response = await client.post("/api/interactions", json={
        "taskId": world.units[kind].id, "siteId": site.id, "wallet": wallet_address(),
        "fingerprint": secrets.token_hex(8), "proof": UNITS[kind][1]})
    return response.status_code, await response.get_json()


@pytest.mark.parametrize("rule", [*RULES, *KIND_RULES])
async def test_serving_applies_the_rule(client, rule):
    world = await make_world()
    await apply(PAYING_RULES[rule], world)
    banners = await serve(client, world.site, attached="1")
    units = await serve(client, world.site, kind="POLL,FEEDBACK,SURVEY")
    assert all(unit["kind"] == "NONE" for unit in units)  # a unit offers a reward: refused by every rule
    if rule == "inactive site":
        assert banners == [] and units == []  # 404
    elif rule in ("siteDeny", "siteAllow", "blocked advertiser", "blocked category"):
        assert all(banner["kind"] == "NONE" for banner in banners)
    else:  # an unverified site, or one refusing tasks: the banner shows (not billed there), its task does not
        assert all(banner["kind"] == "BANNER" and banner["attachedTasks"] == [] for banner in banners)
    # The same campaign still serves, with its task, and its units, where nothing refuses it.
    elsewhere = await serve(client, world.elsewhere, attached="1")
    if rule != "siteAllow":
        assert {banner["kind"] for banner in elsewhere} == {"BANNER"}
        assert all(banner["attachedTasks"] for banner in elsewhere)


@pytest.mark.parametrize("rule", list(RULES))
async def test_tracking_records_the_rules_reason_and_bills_nothing(client, clock, rule):
    world = await make_world()
    ad = await served_and_seen(client, clock, world.site)  # served before the change
    await apply(RULES[rule][0], world)
    before, campaign_balance = await money(), await ledger.balance(ledger.campaign(world.campaign.id))
    site_balance = await ledger.balance(ledger.site(world.site.id))
    for event_type in ("IMPRESSION", "CLICK"):
        response, body = await post(client, event_body(ad, world.site, type=event_type))
        if RULES[rule][1] is None:
            assert response.status_code == 404 and body["error"] == "not_found"
            continue
        assert response.status_code == 201 and not await billed(body)
        assert RULES[rule][1] not in str(body)  # never told to the client
        assert (await TrackingEvent.get(id=body["eventId"])).refusal_reason == RULES[rule][1]
    assert await money() == before
    assert await ledger.balance(ledger.campaign(world.campaign.id)) == campaign_balance
    assert await ledger.balance(ledger.site(world.site.id)) == site_balance


async def test_tracking_reads_the_rule_of_a_campaign_no_longer_served_from_the_database(client, clock):
    world = await make_world()
    ad = await served_and_seen(client, clock, world.site)
    await Campaign.filter(id=world.campaign.id).update(status="paused", site_deny=[world.site.id])
    await rebuild_index(current_app)
    assert world.campaign.id not in current_app.extensions["adnet"].serving.index.campaigns
    response, body = await post(client, event_body(ad, world.site))
    assert response.status_code == 201 and not await billed(body)
    assert (await TrackingEvent.get(id=body["eventId"])).refusal_reason == "site_excluded"


@pytest.mark.parametrize("rule", list(PAYING_RULES))
async def test_a_task_completion_on_a_refused_site_pays_nothing(client, rule):
    world = await make_world()
    await apply(PAYING_RULES[rule], world)
    before, pool = await money(), await ledger.balance(ledger.task_pool(world.quiz.id))
    status, body = await complete(client, world, world.site)
    expected = (404, "not_found") if rule == "inactive site" else (409, "not_allowed_on_site")
    assert (status, body["error"]) == expected, body
    assert set(body) == {"error", "message"}  # which rule refused is logged, not told
    assert await money() == before
    assert await ledger.balance(ledger.task_pool(world.quiz.id)) == pool


@pytest.mark.parametrize("kind", list(UNITS), ids=[kind.value for kind in UNITS])
@pytest.mark.parametrize("rule", list(PAYING_RULES))
async def test_a_unit_answer_on_a_refused_site_pays_nothing(client, rule, kind):
    world = await make_world()
    await apply(PAYING_RULES[rule], world)
    before, pool = await money(), await ledger.balance(ledger.task_pool(world.units[kind].id))
    status, body = await answer(client, world, kind, world.site)
    expected = (404, "not_found") if rule == "inactive site" else (409, "not_allowed_on_site")
    assert (status, body["error"]) == expected, body
    assert set(body) == {"error", "message"}
    assert await money() == before
    assert await ledger.balance(ledger.task_pool(world.units[kind].id)) == pool


async def test_where_no_rule_refuses_every_path_pays(client, clock):
    """The requests of the tests above, on a site the rules allow: each one pays, so each refusal above is the
    rule's."""
    world = await make_world()
    ad = await served_and_seen(client, clock, world.site)
    response, body = await post(client, event_body(ad, world.site))
    assert response.status_code == 201 and await billed(body)
    status, body = await complete(client, world, world.site)
    assert status == 201 and body["transaction"] is not None, body
    for kind in UNITS:
        status, body = await answer(client, world, kind, world.site)
        assert status == 201 and body["transaction"] is not None, body
    assert await Claim.all().count() == 1 + len(UNITS)


@pytest.mark.parametrize("rule", list(KIND_RULES))
async def test_a_site_refusing_tasks_still_bills_banners(client, clock, rule):
    world = await make_world()
    await apply(KIND_RULES[rule], world)
    ad = await serve_ad(client, world.site)
    clock.advance(seconds=2)
    response, body = await post(client, event_body(ad, world.site))
    assert response.status_code == 201 and await billed(body)
