"""POST /api/interactions through HTTP: polls and feedback recorded once with their points and G$, validation that
names the field and stores nothing, CORS and the rate limit, duplicates fired at once, and the device's limit
whatever wallets it names."""

from __future__ import annotations

import asyncio
import random
from datetime import timedelta

import pytest

from adnet.app import create_app
from adnet.interactions import submission
from adnet.interactions.commands import Submission
from adnet.interactions.models import Interaction, SurveySession
from adnet.money import ledger
from adnet.money.models import Claim, LedgerTransaction
from adnet.tasks.models import TaskKind
from api.interactions import interaction_out
from tests.conftest import make_settings
from tests.factories import G, make_campaign, make_site, make_task, wallet_address

POLL = {"question": "Which chain?", "options": [{"id": "eth", "label": "Ethereum"}, {"id": "celo", "label": "Celo"},
                                               {"id": "fuse", "label": "Fuse"}]}
FEEDBACK = {"question": "How was it?", "rating": {"min": 1, "max": 5, "required": False},
            "text": {"minLength": 5, "maxLength": 40, "required": False}}
SURVEY = {"questions": [
    {"id": "q1", "type": "single", "prompt": "Pick one", "options": [{"id": "a", "label": "A"},
                                                                     {"id": "b", "label": "B"}]},
    {"id": "q2", "type": "multiple", "prompt": "Pick some", "options": [{"id": "x", "label": "X"},
                                                                        {"id": "y", "label": "Y"},
                                                                        {"id": "z", "label": "Z"}]},
    {"id": "q3", "type": "text", "prompt": "Anything else?", "required": False, "maxLength": 200},
]}


async def make_unit(kind: TaskKind, config: dict, *, pool: int = 10 * G, **fields):
    return await make_task(kind=kind, config=config, pool=pool, reward_points=10, reward_gs=G, **fields)


async def post(client, unit, site, proof, *, wallet=None, fingerprint="device-1", **extra):
    body = {"taskId": unit.id, "siteId": site.id, "fingerprint": fingerprint, "proof": proof, **extra}
    if wallet is not None:
        body["wallet"] = wallet
    response = await client.post("/api/interactions", json=body)
    return response.status_code, await response.get_json()


async def nothing_stored() -> bool:
    return (await Interaction.all().count(), await SurveySession.all().count(), await Claim.all().count()) == (0, 0, 0)


async def test_a_poll_answer_is_recorded_with_points_and_a_claim(client, clock):
    unit, site, wallet = await make_unit(TaskKind.POLL, POLL), await make_site(), wallet_address()
    status, body = await post(client, unit, site, {"optionId": "celo"}, wallet=wallet)
    assert status == 201, body
    assert body["status"] == "recorded" and body["interactionId"].startswith("int_")
    assert body["awarded"] == {"points": 10, "gs": 1}
    assert body["transaction"]["recipient"].lower() == wallet and body["transaction"]["amount"] == str(G)
    stored = await Interaction.get(id=body["interactionId"])
    assert (stored.respondent, stored.wallet, stored.answers, stored.points, int(stored.gs_amount)) == (
        wallet, wallet, {"optionId": "celo"}, 10, G)
    assert stored.site_id == site.id and stored.claim_id is not None
    assert await ledger.balance(ledger.task_pool(unit.id)) == 9 * G


async def test_a_second_answer_of_the_same_wallet_is_refused_and_names_the_first(client):
    unit, site, wallet = await make_unit(TaskKind.POLL, POLL), await make_site(), wallet_address()
    _, first = await post(client, unit, site, {"optionId": "eth"}, wallet=wallet)
    # Another device, another option: still the same wallet, so still one response.
    status, body = await post(client, unit, site, {"optionId": "fuse"}, wallet=wallet.upper().replace("0X", "0x"),
                              fingerprint="device-2")
    assert status == 409 and body["error"] == "already_completed"
    assert body["interactionId"] == first["interactionId"]
    assert body["transaction"] == first["transaction"]
    assert await Interaction.all().count() == 1 and await Claim.all().count() == 1
    assert await ledger.balance(ledger.task_pool(unit.id)) == 9 * G


async def test_without_a_wallet_the_device_answers_once_for_points_only(client):
    unit, site = await make_unit(TaskKind.POLL, POLL), await make_site()
    status, body = await post(client, unit, site, {"optionId": "eth"}, fingerprint="anon-device")
    assert status == 201 and body["awarded"] == {"points": 10, "gs": 0} and body["transaction"] is None
    assert (await Interaction.get(id=body["interactionId"])).respondent == "fp:anon-device"
    status, again = await post(client, unit, site, {"optionId": "celo"}, fingerprint="anon-device")
    assert status == 409 and again["interactionId"] == body["interactionId"]
    assert await ledger.balance(ledger.task_pool(unit.id)) == 10 * G


async def test_an_empty_pool_pays_points_only(client):
    unit, site = await make_unit(TaskKind.POLL, POLL, pool=G // 2), await make_site()
    status, body = await post(client, unit, site, {"optionId": "eth"}, wallet=wallet_address())
    assert status == 201 and body["awarded"] == {"points": 10, "gs": 0} and body["transaction"] is None
    assert await Claim.all().count() == 0 and await ledger.balance(ledger.task_pool(unit.id)) == G // 2


async def test_a_unit_of_a_campaign_pays_from_the_campaign_when_its_pool_is_empty(client):
    campaign = await make_campaign(budget=5 * G)
    unit, site = await make_unit(TaskKind.POLL, POLL, pool=0, campaign=campaign), await make_site()
    status, body = await post(client, unit, site, {"optionId": "eth"}, wallet=wallet_address())
    assert status == 201 and body["awarded"]["gs"] == 1
    assert await ledger.balance(ledger.campaign(campaign.id)) == 4 * G


async def test_poll_validation_names_the_field_and_stores_nothing(client):
    unit, site, wallet = await make_unit(TaskKind.POLL, POLL), await make_site(), wallet_address()
    cases = [
        ({"optionId": "doge"}, 400, "invalid_field", "proof.optionId"),
        ({"optionId": 1}, 400, "invalid_field", "proof.optionId"),
        ({}, 400, "missing_field", "proof.optionId"),
        ({"optionId": "eth", "rating": 5}, 400, "invalid_field", "proof.rating"),
    ]
    for proof, status, code, field in cases:
        got_status, body = await post(client, unit, site, proof, wallet=wallet)
        assert (got_status, body["error"], body.get("field")) == (status, code, field), (proof, body)
    assert await nothing_stored()


async def test_the_body_is_checked_before_anything_is_stored(client):
    unit, site = await make_unit(TaskKind.POLL, POLL), await make_site()
    proof = {"optionId": "eth"}
    cases = [
        (dict(wallet="0x123"), 400, "invalid_wallet", "wallet"),
        (dict(fingerprint="has space"), 400, "invalid_field", "fingerprint"),
        (dict(points=1000), 400, "invalid_field", "points"),  # a client cannot name its own reward
        (dict(awarded={"points": 1000}), 400, "invalid_field", "awarded"),
        (dict(sessionId="srv_abcdefghijklmnop"), 400, "invalid_field", "sessionId"),
    ]
    for extra, status, code, field in cases:
        got_status, body = await post(client, unit, site, proof, **extra)
        assert (got_status, body["error"], body.get("field")) == (status, code, field), (extra, body)
    response = await client.post("/api/interactions", json={"taskId": unit.id, "siteId": site.id, "proof": proof})
    assert response.status_code == 400 and (await response.get_json())["field"] == "fingerprint"
    assert await nothing_stored()


async def test_unknown_or_closed_units_and_sites(client, clock):
    unit, site = await make_unit(TaskKind.POLL, POLL), await make_site()
    quiz = await make_task(kind=TaskKind.QUIZ, config={"question": "2+2?", "answers": ["4"]})
    off = await make_unit(TaskKind.POLL, POLL, active=False)
    ended = await make_unit(TaskKind.POLL, POLL, ends_at=clock.now() - timedelta(minutes=1))
    later = await make_unit(TaskKind.POLL, POLL, starts_at=clock.now() + timedelta(days=1))
    inactive_site = await make_site(active=False)
    proof = {"optionId": "eth"}
    for task_id, site_id, status, code in [
        ("task_doesnotexist1234567", site.id, 404, "not_found"),
        ("nonsense", site.id, 404, "not_found"),
        (unit.id, "site_doesnotexist1234567", 404, "not_found"),
        (unit.id, inactive_site.id, 404, "not_found"),
        (quiz.id, site.id, 400, "invalid_field"),
        (off.id, site.id, 409, "task_inactive"),
        (ended.id, site.id, 409, "task_ended"),
        (later.id, site.id, 409, "task_not_started"),
    ]:
        response = await client.post("/api/interactions", json={"taskId": task_id, "siteId": site_id,
                                                                "fingerprint": "d", "proof": proof})
        body = await response.get_json()
        assert (response.status_code, body["error"]) == (status, code), (task_id, site_id, body)
    assert await nothing_stored()


async def test_feedback_rating_and_text_within_the_units_bounds(client):
    unit, site = await make_unit(TaskKind.FEEDBACK, FEEDBACK), await make_site()
    refused = [
        ({"rating": 6}, "invalid_field", "proof.rating"),
        ({"rating": 0}, "invalid_field", "proof.rating"),
        ({"rating": 4.5}, "invalid_field", "proof.rating"),
        ({"rating": "4"}, "invalid_field", "proof.rating"),
        ({"rating": True}, "invalid_field", "proof.rating"),
        ({"text": "meh"}, "invalid_field", "proof.text"),
        ({"text": "x" * 41}, "invalid_field", "proof.text"),
        ({"text": "bad\x00byte"}, "invalid_field", "proof.text"),
        ({"text": 12345}, "invalid_field", "proof.text"),
        ({}, "missing_field", "proof.rating"),
        ({"text": "   "}, "missing_field", "proof.rating"),
        ({"rating": 3, "optionId": "a"}, "invalid_field", "proof.optionId"),
    ]
    for proof, code, field in refused:
        status, body = await post(client, unit, site, proof)
        assert (status, body["error"], body.get("field")) == (400, code, field), (proof, body)
    assert await nothing_stored()
    text = "  <script>alert('x')</script>\n=1+1  "
    status, body = await post(client, unit, site, {"rating": 5, "text": text})
    assert status == 201 and body["status"] == "recorded"
    stored = await Interaction.get(id=body["interactionId"])
    assert stored.answers == {"rating": 5, "text": text.strip()}  # stored as text, as typed (trimmed)


async def test_feedback_requirements_come_from_the_unit(client):
    config = {"question": "Tell us", "rating": {"required": True}, "text": {"required": True, "maxLength": 100}}
    unit, site = await make_unit(TaskKind.FEEDBACK, config), await make_site()
    status, body = await post(client, unit, site, {"text": "fine"})
    assert (status, body["field"]) == (400, "proof.rating")
    status, body = await post(client, unit, site, {"rating": 4})
    assert (status, body["field"]) == (400, "proof.text")
    rating_only = await make_unit(TaskKind.FEEDBACK, {"question": "Stars?", "text": None})
    status, body = await post(client, rating_only, site, {"rating": 2, "text": "nice"})
    assert (status, body["field"]) == (400, "proof.text")
    assert await nothing_stored()
    status, body = await post(client, unit, site, {"rating": 4, "text": "fine"})
    assert status == 201


async def test_cors_is_open_to_any_origin_without_credentials(client):
    unit, site = await make_unit(TaskKind.POLL, POLL), await make_site()
    preflight = await client.options("/api/interactions", headers={
        "Origin": "https://publisher.example", "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "content-type"})
    assert preflight.headers["Access-Control-Allow-Origin"] == "*"
    assert "POST" in preflight.headers["Access-Control-Allow-Methods"]
    assert "Access-Control-Allow-Credentials" not in preflight.headers
    body = {"taskId": unit.id, "siteId": site.id, "fingerprint": "d", "proof": {"optionId": "eth"}}
    accepted = await client.post("/api/interactions", json=body, headers={"Origin": "https://publisher.example"})
    assert accepted.status_code == 201 and accepted.headers["Access-Control-Allow-Origin"] == "*"
    refused = await client.post("/api/interactions", json=body, headers={"Origin": "https://publisher.example"})
    assert refused.status_code == 409 and refused.headers["Access-Control-Allow-Origin"] == "*"
    assert refused.headers["Cache-Control"] == "no-store"


async def test_the_public_rate_limit_applies(database_url, tmp_path, clock):
    app = create_app(make_settings(database_url, tmp_path, ADNET_RATE_LIMIT_PUBLIC="3/60"), clock=clock,
                     rng=random.Random(7))
    async with app.test_app() as test_app:
        client = test_app.test_client()
        statuses = [(await client.post("/api/interactions", json={
            "taskId": "task_doesnotexist1234567", "siteId": "site_x", "fingerprint": "d", "proof": {}})).status_code
            for _ in range(4)]
    # At most the configured three get through before the limit answers 429.
    assert statuses[0] == 404 and statuses.count(404) <= 3 and statuses[-1] == 429


async def test_identical_answers_at_once_make_one_response_and_one_reward(client):
    unit, site, wallet = await make_unit(TaskKind.POLL, POLL), await make_site(), wallet_address()
    results = await asyncio.gather(*[post(client, unit, site, {"optionId": "eth"}, wallet=wallet) for _ in range(20)])
    statuses = sorted(status for status, _ in results)
    assert statuses == [201] + [409] * 19
    winner = next(body for status, body in results if status == 201)
    assert all(body["interactionId"] == winner["interactionId"] for status, body in results if status == 409)
    assert await Interaction.all().count() == 1 and await Claim.all().count() == 1
    assert await LedgerTransaction.filter(kind="claim_issue").count() == 1
    assert await ledger.balance(ledger.task_pool(unit.id)) == 9 * G


async def test_identical_anonymous_answers_at_once_count_once(client):
    unit, site = await make_unit(TaskKind.FEEDBACK, FEEDBACK), await make_site()
    results = await asyncio.gather(*[post(client, unit, site, {"rating": 4}, fingerprint="same") for _ in range(20)])
    assert sorted(status for status, _ in results) == [201] + [409] * 19
    assert await Interaction.filter(respondent="fp:same").count() == 1


async def test_one_device_answers_once_whatever_the_wallet(client):
    """Four fresh wallets on one device: the first answer is recorded and paid, the others are refused, naming the
    device's response without its claim (that claim is the first wallet's)."""
    unit, site = await make_unit(TaskKind.POLL, POLL), await make_site()
    status, first = await post(client, unit, site, {"optionId": "eth"}, wallet=wallet_address())
    assert status == 201 and first["awarded"]["gs"] == 1
    for option in ("celo", "fuse", "eth"):
        status, body = await post(client, unit, site, {"optionId": option}, wallet=wallet_address())
        assert (status, body["error"], body["interactionId"], body["transaction"]) == (
            409, "already_completed", first["interactionId"], None)
    # Without a wallet the device is the respondent, and it has answered.
    status, body = await post(client, unit, site, {"optionId": "celo"})
    assert (status, body["error"]) == (409, "already_completed")
    assert await Interaction.all().count() == 1 and await Claim.all().count() == 1
    assert await ledger.balance(ledger.task_pool(unit.id)) == 9 * G
    # Another device still answers.
    status, _ = await post(client, unit, site, {"optionId": "celo"}, wallet=wallet_address(), fingerprint="device-2")
    assert status == 201


async def test_a_device_answers_as_often_as_the_unit_allows(client):
    """``max_per_fingerprint`` counts every response of the device, with a wallet or without, and each wallet
    still answers once."""
    unit, site = await make_unit(TaskKind.FEEDBACK, FEEDBACK, max_per_fingerprint=3), await make_site()
    first_wallet = wallet_address()
    statuses = [(await post(client, unit, site, {"rating": 3}))[0],
                (await post(client, unit, site, {"rating": 4}, wallet=first_wallet))[0]]
    status, body = await post(client, unit, site, {"rating": 1}, wallet=first_wallet)
    assert (status, body["error"]) == (409, "already_completed") and body["transaction"] is not None
    statuses.append((await post(client, unit, site, {"rating": 5}, wallet=wallet_address()))[0])
    status, body = await post(client, unit, site, {"rating": 2}, wallet=wallet_address())
    assert statuses == [201, 201, 201] and (status, body["error"], body["transaction"]) == (
        409, "already_completed", None)
    slots = await Interaction.filter(unit_id=unit.id).order_by("fingerprint_slot").values_list(
        "fingerprint_slot", flat=True)
    assert slots == [0, 1, 2]
    assert await Claim.all().count() == 2 and await ledger.balance(ledger.task_pool(unit.id)) == 8 * G


@pytest.mark.parametrize(("kind", "config", "proof"), [(TaskKind.POLL, POLL, {"optionId": "eth"}),
                                                        (TaskKind.FEEDBACK, FEEDBACK, {"rating": 5})])
@pytest.mark.parametrize("limit", [1, 3])
async def test_answers_at_once_from_one_device_with_many_wallets_stop_at_its_limit(client, kind, config, proof,
                                                                                    limit):
    unit, site = await make_unit(kind, config, max_per_fingerprint=limit), await make_site()
    results = await asyncio.gather(*[post(client, unit, site, proof, wallet=wallet_address(), fingerprint="farm")
                                     for _ in range(20)])
    assert sorted(status for status, _ in results) == [201] * limit + [409] * (20 - limit)
    assert {body["error"] for status, body in results if status == 409} == {"already_completed"}
    assert all(body["awarded"]["gs"] == 1 for status, body in results if status == 201)
    assert await Interaction.filter(unit_id=unit.id, fingerprint="farm").count() == limit
    assert await Claim.all().count() == limit
    assert await LedgerTransaction.filter(kind="claim_issue").count() == limit
    assert await ledger.balance(ledger.task_pool(unit.id)) == (10 - limit) * G


async def test_answers_are_written_with_what_each_status_carries(app, clock):
    chain = app.extensions["adnet"].chain
    unit, site = await make_unit(TaskKind.SURVEY, SURVEY, pool=0), await make_site()
    opened = await submission.submit(Submission(
        task_id=unit.id, site_id=site.id, fingerprint="device", wallet=wallet_address(),
        proof={"questionId": "q1", "optionId": "a"}), now=clock.now(), chain=chain)
    body = interaction_out(opened).model_dump()
    assert set(body) == {"status", "interactionId", "sessionId", "step", "totalSteps", "question"}
    assert body["question"]["id"] == "q2"
    poll = await make_unit(TaskKind.POLL, POLL, pool=0)
    recorded = await submission.submit(Submission(
        task_id=poll.id, site_id=site.id, fingerprint="device", wallet=None, proof={"optionId": "eth"}),
        now=clock.now(), chain=chain)
    assert interaction_out(recorded).model_dump() == {
        "status": "recorded", "interactionId": recorded.interaction.id, "awarded": {"points": 10, "gs": 0},
        "transaction": None}
