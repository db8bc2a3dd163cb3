"""Multi-step surveys through POST /api/interactions: sessions opened by the first answer, answered in order with
earlier answers changeable, bound to their respondent, expiring after 24 hours, completing once, and no more completed
on one device than the unit allows."""

from __future__ import annotations

import asyncio
from datetime import timedelta

from adnet.interactions.models import Interaction, SessionStatus, SurveySession
from adnet.money import ledger
from adnet.money.models import Claim
from adnet.tasks.models import TaskKind
from tests.api.test_interactions import SURVEY, make_unit, nothing_stored, post
from tests.factories import G, make_site, wallet_address


async def survey_setup(config: dict = SURVEY):
    return await make_unit(TaskKind.SURVEY, config), await make_site(), wallet_address()


async def test_a_three_step_survey_with_a_changed_answer(client):
    unit, site, wallet = await survey_setup()
    status, first = await post(client, unit, site, {"questionId": "q1", "optionId": "a"}, wallet=wallet)
    assert status == 201, first
    assert first["status"] == "in_progress" and first["interactionId"] is None and "awarded" not in first
    assert first["sessionId"].startswith("srv_") and (first["step"], first["totalSteps"]) == (1, 3)
    assert first["question"] == {"id": "q2", "type": "multiple", "prompt": "Pick some", "required": True,
                                 "options": [{"id": "x", "label": "X"}, {"id": "y", "label": "Y"},
                                             {"id": "z", "label": "Z"}],
                                 "min": 1, "max": 5, "maxLength": 1000}
    session_id = first["sessionId"]

    status, second = await post(client, unit, site, {"questionId": "q2", "optionIds": ["y", "x"]}, wallet=wallet,
                                sessionId=session_id)
    assert status == 201 and (second["status"], second["step"], second["question"]["id"]) == ("in_progress", 2, "q3")

    status, changed = await post(client, unit, site, {"questionId": "q1", "optionId": "b"}, wallet=wallet,
                                 sessionId=session_id)
    assert status == 201 and (changed["status"], changed["step"], changed["question"]["id"]) == (
        "in_progress", 2, "q3")
    assert await Interaction.all().count() == 0

    status, done = await post(client, unit, site, {"questionId": "q3", "text": " Great survey "}, wallet=wallet,
                              sessionId=session_id)
    assert status == 201, done
    assert (done["status"], done["sessionId"], done["step"], done["totalSteps"], done["question"]) == (
        "completed", session_id, 3, 3, None)
    assert done["awarded"] == {"points": 10, "gs": 1} and done["transaction"]["amount"] == str(G)
    stored = await Interaction.get(id=done["interactionId"])
    assert stored.answers == {"q1": "b", "q2": ["x", "y"], "q3": "Great survey"} and stored.respondent == wallet
    session = await SurveySession.get(id=session_id)
    assert (session.status, session.step, session.version) == (SessionStatus.COMPLETED, 3, 3)
    assert await ledger.balance(ledger.task_pool(unit.id)) == 9 * G

    status, again = await post(client, unit, site, {"questionId": "q3", "text": "more"}, wallet=wallet,
                               sessionId=session_id)
    assert (status, again["error"], again["interactionId"]) == (409, "session_completed", done["interactionId"])
    status, anew = await post(client, unit, site, {"questionId": "q1", "optionId": "a"}, wallet=wallet)
    assert (status, anew["error"], anew["interactionId"]) == (409, "already_completed", done["interactionId"])
    assert await Interaction.all().count() == 1 and await SurveySession.all().count() == 1
    assert await Claim.all().count() == 1


async def test_an_optional_question_may_be_skipped_a_required_one_may_not(client):
    unit, site, wallet = await survey_setup()
    _, first = await post(client, unit, site, {"questionId": "q1", "optionId": "a"}, wallet=wallet)
    session_id = first["sessionId"]
    status, body = await post(client, unit, site, {"questionId": "q2"}, wallet=wallet, sessionId=session_id)
    assert (status, body["error"], body["field"]) == (400, "missing_field", "proof.optionIds")
    await post(client, unit, site, {"questionId": "q2", "optionIds": ["z"]}, wallet=wallet, sessionId=session_id)
    status, done = await post(client, unit, site, {"questionId": "q3"}, wallet=wallet, sessionId=session_id)
    assert status == 201 and done["status"] == "completed"
    assert (await Interaction.get(id=done["interactionId"])).answers == {"q1": "a", "q2": ["z"]}


async def test_questions_are_answered_in_order(client):
    unit, site, wallet = await survey_setup()
    status, body = await post(client, unit, site, {"questionId": "q3", "text": "skip ahead"}, wallet=wallet)
    assert (status, body["error"], body["field"], body["expectedQuestionId"]) == (
        400, "question_out_of_order", "proof.questionId", "q1")
    assert await nothing_stored()
    _, first = await post(client, unit, site, {"questionId": "q1", "optionId": "a"}, wallet=wallet)
    status, body = await post(client, unit, site, {"questionId": "q3", "text": "skip ahead"}, wallet=wallet,
                              sessionId=first["sessionId"])
    assert (status, body["error"], body["expectedQuestionId"]) == (400, "question_out_of_order", "q2")
    session = await SurveySession.get(id=first["sessionId"])
    assert (session.step, session.version, session.answers) == (1, 0, {"q1": "a"})


async def test_survey_answers_are_validated_by_question(client):
    unit, site, wallet = await survey_setup()
    _, first = await post(client, unit, site, {"questionId": "q1", "optionId": "a"}, wallet=wallet)
    session_id = first["sessionId"]
    refused = [
        ({}, "missing_field", "proof.questionId"),
        ({"questionId": "q9", "optionIds": ["x"]}, "invalid_field", "proof.questionId"),
        ({"questionId": "q2", "optionIds": []}, "invalid_field", "proof.optionIds"),
        ({"questionId": "q2", "optionIds": "x"}, "invalid_field", "proof.optionIds"),
        ({"questionId": "q2", "optionIds": ["x", "x"]}, "invalid_field", "proof.optionIds"),
        ({"questionId": "q2", "optionIds": ["w"]}, "invalid_field", "proof.optionIds"),
        ({"questionId": "q2", "optionId": "x"}, "invalid_field", "proof.optionId"),
        ({"questionId": "q1", "optionId": "c"}, "invalid_field", "proof.optionId"),
    ]
    for proof, code, field in refused:
        status, body = await post(client, unit, site, proof, wallet=wallet, sessionId=session_id)
        assert (status, body["error"], body.get("field")) == (400, code, field), (proof, body)
    session = await SurveySession.get(id=session_id)
    assert (session.step, session.version, session.answers) == (1, 0, {"q1": "a"})


async def test_rating_and_text_questions_keep_their_bounds(client):
    config = {"questions": [
        {"id": "stars", "type": "rating", "prompt": "Stars", "min": 0, "max": 10},
        {"id": "why", "type": "text", "prompt": "Why?", "maxLength": 10},
    ]}
    unit, site, wallet = await survey_setup(config)
    for proof, field in [({"questionId": "stars", "rating": 11}, "proof.rating"),
                         ({"questionId": "stars", "rating": -1}, "proof.rating"),
                         ({"questionId": "stars", "text": "10"}, "proof.text")]:
        status, body = await post(client, unit, site, proof, wallet=wallet)
        assert (status, body.get("field")) == (400, field), body
    _, first = await post(client, unit, site, {"questionId": "stars", "rating": 0}, wallet=wallet)
    status, body = await post(client, unit, site, {"questionId": "why", "text": "x" * 11}, wallet=wallet,
                              sessionId=first["sessionId"])
    assert (status, body["field"]) == (400, "proof.text")
    status, done = await post(client, unit, site, {"questionId": "why", "text": "x" * 10}, wallet=wallet,
                              sessionId=first["sessionId"])
    assert status == 201 and (await Interaction.get(id=done["interactionId"])).answers == {"stars": 0,
                                                                                            "why": "x" * 10}


async def test_a_session_belongs_to_its_respondent(client):
    unit, site, wallet = await survey_setup()
    other_unit, other_site = await make_unit(TaskKind.SURVEY, SURVEY), await make_site()
    _, first = await post(client, unit, site, {"questionId": "q1", "optionId": "a"}, wallet=wallet)
    session_id = first["sessionId"]
    answer = {"questionId": "q2", "optionIds": ["x"]}
    for changes in [dict(fingerprint="thief-device"), dict(wallet=wallet_address()), dict(wallet=None),
                    dict(site=other_site)]:
        status, body = await post(client, unit, changes.pop("site", site), answer, sessionId=session_id,
                                  **{"wallet": wallet, **changes})
        assert (status, body["error"]) == (403, "session_not_yours"), (changes, body)
    status, body = await post(client, other_unit, site, answer, wallet=wallet, sessionId=session_id)
    assert (status, body["error"]) == (404, "not_found")
    for unknown in ("srv_doesnotexist12345678", "nope"):
        status, body = await post(client, unit, site, answer, wallet=wallet, sessionId=unknown)
        assert (status, body["error"]) == (404, "not_found")
    session = await SurveySession.get(id=session_id)
    assert (session.step, session.version, session.answers) == (1, 0, {"q1": "a"})
    # A hijacker cannot finish it either: the owner still can.
    await post(client, unit, site, answer, wallet=wallet, sessionId=session_id)
    status, stolen = await post(client, unit, site, {"questionId": "q3"}, wallet=wallet, fingerprint="thief-device",
                                sessionId=session_id)
    assert (status, stolen["error"]) == (403, "session_not_yours") and await Interaction.all().count() == 0
    status, done = await post(client, unit, site, {"questionId": "q3"}, wallet=wallet, sessionId=session_id)
    assert status == 201 and done["status"] == "completed"


async def test_an_anonymous_session_belongs_to_its_device(client):
    unit, site, _ = await survey_setup()
    _, first = await post(client, unit, site, {"questionId": "q1", "optionId": "a"}, fingerprint="phone")
    status, body = await post(client, unit, site, {"questionId": "q2", "optionIds": ["x"]}, fingerprint="laptop",
                              sessionId=first["sessionId"])
    assert (status, body["error"]) == (403, "session_not_yours")
    status, body = await post(client, unit, site, {"questionId": "q2", "optionIds": ["x"]}, fingerprint="phone",
                              wallet=wallet_address(), sessionId=first["sessionId"])
    assert (status, body["error"]) == (403, "session_not_yours")


async def test_a_session_expires_after_24_hours(client, clock):
    unit, site, wallet = await survey_setup()
    _, first = await post(client, unit, site, {"questionId": "q1", "optionId": "a"}, wallet=wallet)
    clock.advance(hours=23, minutes=59)
    status, _ = await post(client, unit, site, {"questionId": "q2", "optionIds": ["x"]}, wallet=wallet,
                           sessionId=first["sessionId"])
    assert status == 201
    clock.advance(minutes=1)
    status, body = await post(client, unit, site, {"questionId": "q3", "text": "late"}, wallet=wallet,
                              sessionId=first["sessionId"])
    assert (status, body["error"]) == (409, "session_expired")
    assert await Interaction.all().count() == 0
    session = await SurveySession.get(id=first["sessionId"])
    assert (session.status, session.step) == (SessionStatus.IN_PROGRESS, 2)
    # The respondent may start over in a new session.
    status, again = await post(client, unit, site, {"questionId": "q1", "optionId": "b"}, wallet=wallet)
    assert status == 201 and again["sessionId"] != first["sessionId"]


async def test_a_one_question_survey_completes_with_its_first_answer(client):
    config = {"questions": [{"id": "only", "type": "single", "prompt": "Yes?",
                             "options": [{"id": "y", "label": "Yes"}, {"id": "n", "label": "No"}]}]}
    unit, site, wallet = await survey_setup(config)
    status, done = await post(client, unit, site, {"questionId": "only", "optionId": "y"}, wallet=wallet)
    assert status == 201 and (done["status"], done["step"], done["totalSteps"], done["question"]) == (
        "completed", 1, 1, None)
    assert (await SurveySession.get(id=done["sessionId"])).status == SessionStatus.COMPLETED


async def test_identical_last_answers_at_once_complete_the_session_once(client):
    unit, site, wallet = await survey_setup()
    _, first = await post(client, unit, site, {"questionId": "q1", "optionId": "a"}, wallet=wallet)
    await post(client, unit, site, {"questionId": "q2", "optionIds": ["x"]}, wallet=wallet,
               sessionId=first["sessionId"])
    results = await asyncio.gather(*[post(client, unit, site, {"questionId": "q3", "text": "done"}, wallet=wallet,
                                          sessionId=first["sessionId"]) for _ in range(15)])
    assert sorted(status for status, _ in results) == [201] + [409] * 14
    winner = next(body for status, body in results if status == 201)
    assert {body["error"] for status, body in results if status == 409} == {"session_completed"}
    assert all(body["interactionId"] == winner["interactionId"] for status, body in results if status == 409)
    assert await Interaction.all().count() == 1 and await Claim.all().count() == 1
    assert await ledger.balance(ledger.task_pool(unit.id)) == 9 * G


async def test_two_sessions_of_one_wallet_completed_at_once_count_once(client):
    unit, site, wallet = await survey_setup()
    sessions = []
    for device in ("phone", "laptop"):
        _, first = await post(client, unit, site, {"questionId": "q1", "optionId": "a"}, wallet=wallet,
                              fingerprint=device)
        await post(client, unit, site, {"questionId": "q2", "optionIds": ["x"]}, wallet=wallet, fingerprint=device,
                   sessionId=first["sessionId"])
        sessions.append((device, first["sessionId"]))
    results = await asyncio.gather(*[post(client, unit, site, {"questionId": "q3"}, wallet=wallet, fingerprint=device,
                                          sessionId=session_id) for device, session_id in sessions for _ in range(5)])
    assert sorted(status for status, _ in results) == [201] + [409] * 9
    assert await Interaction.all().count() == 1 and await Claim.all().count() == 1
    assert await SurveySession.filter(status=SessionStatus.COMPLETED).count() == 1


async def test_concurrent_answers_to_one_session_are_all_kept(client):
    unit, site, wallet = await survey_setup()
    _, first = await post(client, unit, site, {"questionId": "q1", "optionId": "a"}, wallet=wallet)
    session_id = first["sessionId"]
    results = await asyncio.gather(
        post(client, unit, site, {"questionId": "q1", "optionId": "b"}, wallet=wallet, sessionId=session_id),
        post(client, unit, site, {"questionId": "q2", "optionIds": ["z"]}, wallet=wallet, sessionId=session_id),
    )
    assert [status for status, _ in results] == [201, 201]
    session = await SurveySession.get(id=session_id)
    assert (session.answers, session.step, session.version) == ({"q1": "b", "q2": ["z"]}, 2, 2)


async def test_identical_one_question_surveys_at_once_record_one_response(client):
    config = {"questions": [{"id": "only", "type": "rating", "prompt": "Stars?"}]}
    unit, site, wallet = await survey_setup(config)
    results = await asyncio.gather(*[post(client, unit, site, {"questionId": "only", "rating": 3}, wallet=wallet)
                                     for _ in range(12)])
    assert sorted(status for status, _ in results) == [201] + [409] * 11
    assert await Interaction.all().count() == 1 and await SurveySession.all().count() == 1
    assert await Claim.all().count() == 1


async def test_an_ended_survey_takes_no_more_answers(client, clock):
    unit = await make_unit(TaskKind.SURVEY, SURVEY, ends_at=clock.now() + timedelta(hours=1))
    site, wallet = await make_site(), wallet_address()
    _, first = await post(client, unit, site, {"questionId": "q1", "optionId": "a"}, wallet=wallet)
    clock.advance(hours=1)
    status, body = await post(client, unit, site, {"questionId": "q2", "optionIds": ["x"]}, wallet=wallet,
                              sessionId=first["sessionId"])
    assert (status, body["error"]) == (409, "task_ended")


async def test_a_device_at_its_limit_opens_no_new_session(client):
    unit, site, wallet = await survey_setup({"questions": [{"id": "only", "type": "rating", "prompt": "Stars?"}]})
    status, done = await post(client, unit, site, {"questionId": "only", "rating": 4}, wallet=wallet)
    assert (status, done["status"]) == (201, "completed")
    status, body = await post(client, unit, site, {"questionId": "only", "rating": 5}, wallet=wallet_address())
    assert (status, body["error"], body["interactionId"], body["transaction"]) == (
        409, "already_completed", done["interactionId"], None)
    assert await SurveySession.all().count() == 1 and await Interaction.all().count() == 1


async def test_sessions_of_many_wallets_on_one_device_completed_at_once_stop_at_its_limit(client):
    """Six wallets on one device open their sessions while it has answered nothing; their last answers at once
    complete exactly ``max_per_fingerprint`` of them, the others are refused and stay open, unpaid."""
    unit, site = await make_unit(TaskKind.SURVEY, SURVEY, max_per_fingerprint=2), await make_site()
    sessions = []
    for _ in range(6):
        wallet = wallet_address()
        _, first = await post(client, unit, site, {"questionId": "q1", "optionId": "a"}, wallet=wallet,
                              fingerprint="farm")
        await post(client, unit, site, {"questionId": "q2", "optionIds": ["x"]}, wallet=wallet, fingerprint="farm",
                   sessionId=first["sessionId"])
        sessions.append((wallet, first["sessionId"]))
    results = await asyncio.gather(*[post(client, unit, site, {"questionId": "q3"}, wallet=wallet, fingerprint="farm",
                                          sessionId=session_id) for wallet, session_id in sessions])
    assert sorted(status for status, _ in results) == [201, 201, 409, 409, 409, 409]
    assert {body["error"] for status, body in results if status == 409} == {"already_completed"}
    assert await Interaction.all().count() == 2 and await Claim.all().count() == 2
    assert await SurveySession.filter(status=SessionStatus.COMPLETED).count() == 2
    assert await SurveySession.filter(status=SessionStatus.IN_PROGRESS).count() == 4
    assert await ledger.balance(ledger.task_pool(unit.id)) == 8 * G
