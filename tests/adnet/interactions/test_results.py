"""Unit results for a known set of responses: poll tallies, the rating distribution and average, a survey's
sessions and per-question summaries, and a CSV that no spreadsheet runs as a formula."""

from __future__ import annotations

import csv
import io
from dataclasses import asdict
from datetime import UTC, datetime

import pytest

from adnet.core.errors import DomainError, Forbidden, NotFound
from adnet.interactions import submission as interactions
from adnet.interactions.results import owned_unit, responses_csv, unit_results
from adnet.tasks.models import TaskKind
from tests.api.test_interactions import FEEDBACK, POLL, SURVEY, make_unit
from tests.factories import G, make_advertiser, make_site, wallet_address


@pytest.fixture
def chain(app):
    return app.extensions["adnet"].chain


@pytest.fixture
async def site(app):
    return await make_site()


async def answer(unit, site, chain, clock, proof, *, wallet=None, fingerprint=None, session_id=None):
    submission = interactions.Submission(task_id=unit.id, site_id=site.id, wallet=wallet, proof=proof,
                                         fingerprint=fingerprint or (wallet or "device")[-12:],
                                         session_id=session_id)
    return await interactions.submit(submission, now=clock.now(), chain=chain)


async def test_poll_tallies(site, chain, clock):
    unit = await make_unit(TaskKind.POLL, POLL, pool=2 * G)
    for option in ["eth", "eth", "celo", "eth", "fuse"]:
        await answer(unit, site, chain, clock, {"optionId": option}, wallet=wallet_address())
    results = await unit_results(unit, clock.now())
    assert results.responses == 5
    # The pool paid two rewards of 1 G$; the other three earned points only.
    assert (results.points, results.gs) == (50, 2 * G)
    assert asdict(results.summary) == {"question": "Which chain?", "options": [
        {"id": "eth", "label": "Ethereum", "votes": 3, "share": 0.6},
        {"id": "celo", "label": "Celo", "votes": 1, "share": 0.2},
        {"id": "fuse", "label": "Fuse", "votes": 1, "share": 0.2},
    ]}


async def test_an_unanswered_poll_has_zero_votes_and_no_shares(app, clock):
    unit = await make_unit(TaskKind.POLL, POLL)
    results = await unit_results(unit, clock.now())
    assert results.responses == 0 and {option.votes for option in results.summary.options} == {0}
    assert {option.share for option in results.summary.options} == {None}


async def test_feedback_distribution_average_and_texts(site, chain, clock):
    unit = await make_unit(TaskKind.FEEDBACK, FEEDBACK)
    given = [{"rating": 5}, {"rating": 4, "text": "Works well"}, {"rating": 4}, {"rating": 2},
             {"text": "No rating, just words"}]
    for proof in given:
        await answer(unit, site, chain, clock, proof, wallet=wallet_address())
        clock.advance(minutes=1)
    feedback = (await unit_results(unit, clock.now())).summary
    assert asdict(feedback.rating) == {"min": 1, "max": 5, "count": 4, "average": 3.75, "distribution": [
        {"rating": 1, "count": 0}, {"rating": 2, "count": 1}, {"rating": 3, "count": 0}, {"rating": 4, "count": 2},
        {"rating": 5, "count": 1}]}
    assert feedback.text.count == 2
    assert [item.text for item in feedback.text.latest] == ["No rating, just words", "Works well"]
    assert feedback.text.latest[0].created_at == datetime(2026, 1, 1, 0, 4, tzinfo=UTC)


async def test_survey_sessions_and_per_question_summaries(site, chain, clock):
    unit = await make_unit(TaskKind.SURVEY, SURVEY)
    completed = [("a", ["x", "y"], "Nice"), ("a", ["y"], None), ("b", ["x", "y", "z"], "=cmd|' /C calc'!A0")]
    for q1, q2, q3 in completed:
        wallet = wallet_address()
        opened = await answer(unit, site, chain, clock, {"questionId": "q1", "optionId": q1}, wallet=wallet)
        session_id = opened.session.id
        await answer(unit, site, chain, clock, {"questionId": "q2", "optionIds": q2}, wallet=wallet,
                     session_id=session_id)
        await answer(unit, site, chain, clock, {"questionId": "q3", **({"text": q3} if q3 else {})}, wallet=wallet,
                     session_id=session_id)
    # One session abandoned after its first answer (it expires), one still in progress at its second question.
    await answer(unit, site, chain, clock, {"questionId": "q1", "optionId": "b"}, fingerprint="gone")
    clock.advance(hours=20)
    opened = await answer(unit, site, chain, clock, {"questionId": "q1", "optionId": "b"}, fingerprint="busy")
    await answer(unit, site, chain, clock, {"questionId": "q2", "optionIds": ["z"]}, fingerprint="busy",
                 session_id=opened.session.id)
    clock.advance(hours=5)

    survey = (await unit_results(unit, clock.now())).summary
    assert asdict(survey.sessions) == {"started": 5, "completed": 3, "in_progress": 1, "abandoned": 1,
                                       "completion_rate": 0.6}
    q1, q2, q3 = survey.questions
    assert (q1.reached, q1.answered, q1.skipped) == (5, 3, 0)
    assert [asdict(option) for option in q1.options] == [{"id": "a", "label": "A", "votes": 2, "share": 0.6667},
                                                         {"id": "b", "label": "B", "votes": 1, "share": 0.3333}]
    assert (q2.reached, q2.answered) == (5, 3)  # the abandoned session was shown q2
    assert [asdict(option) for option in q2.options] == [{"id": "x", "label": "X", "votes": 2, "share": 0.6667},
                                                         {"id": "y", "label": "Y", "votes": 3, "share": 1.0},
                                                         {"id": "z", "label": "Z", "votes": 1, "share": 0.3333}]
    assert (q3.reached, q3.answered, q3.skipped, q3.required) == (4, 2, 1, False)
    assert sorted(item.text for item in q3.text.latest) == ["=cmd|' /C calc'!A0", "Nice"]


async def test_rating_questions_are_summarised_like_feedback(site, chain, clock):
    config = {"questions": [{"id": "stars", "type": "rating", "prompt": "Stars", "min": 1, "max": 3}]}
    unit = await make_unit(TaskKind.SURVEY, config)
    for rating in (3, 3, 1):
        await answer(unit, site, chain, clock, {"questionId": "stars", "rating": rating}, wallet=wallet_address())
    stars = (await unit_results(unit, clock.now())).summary.questions[0]
    assert asdict(stars.rating) == {"min": 1, "max": 3, "count": 3, "average": 2.33, "distribution": [
        {"rating": 1, "count": 1}, {"rating": 2, "count": 0}, {"rating": 3, "count": 2}]}


async def test_csv_has_every_response_and_neutralises_formulas(site, chain, clock):
    unit = await make_unit(TaskKind.FEEDBACK, FEEDBACK, pool=G)
    wallet = wallet_address()
    texts = ["=HYPERLINK(\"http://evil\")", "+SUM(A1)", "-2+3 is fine", "@import", "Plain, with \"quotes\""]
    for index, text in enumerate(texts):
        await answer(unit, site, chain, clock, {"rating": 1 + index, "text": text},
                     wallet=wallet if index == 0 else None, fingerprint=f"device-{index}")
        clock.advance(seconds=30)
    rows = list(csv.reader(io.StringIO(await responses_csv(unit))))
    assert rows[0] == ["interactionId", "createdAt", "siteId", "wallet", "points", "gs", "rating", "text"]
    assert [row[7] for row in rows[1:]] == ["'=HYPERLINK(\"http://evil\")", "'+SUM(A1)", "'-2+3 is fine", "'@import",
                                            "Plain, with \"quotes\""]
    assert [row[6] for row in rows[1:]] == ["1", "2", "3", "4", "5"]
    assert rows[1][1:6] == ["2026-01-01T00:00:00Z", site.id, wallet, "10", "1"]
    assert rows[2][3:6] == ["", "10", "0"]


async def test_survey_csv_has_a_column_per_question(site, chain, clock):
    unit = await make_unit(TaskKind.SURVEY, SURVEY)
    opened = await answer(unit, site, chain, clock, {"questionId": "q1", "optionId": "b"}, fingerprint="d1")
    await answer(unit, site, chain, clock, {"questionId": "q2", "optionIds": ["z", "x"]}, fingerprint="d1",
                 session_id=opened.session.id)
    await answer(unit, site, chain, clock, {"questionId": "q3", "text": "\tTabbed"}, fingerprint="d1",
                 session_id=opened.session.id)
    rows = list(csv.reader(io.StringIO(await responses_csv(unit))))
    assert rows[0][6:] == ["q1", "q2", "q3"]
    assert rows[1][6:] == ["b", "x;z", "Tabbed"]  # surrounding whitespace is trimmed on the way in


async def test_only_the_units_advertiser_owns_it(app):
    owner = await make_advertiser()
    unit = await make_unit(TaskKind.POLL, POLL, advertiser=owner)
    assert (await owned_unit(unit.id, owner.wallet)).id == unit.id
    with pytest.raises(DomainError) as refused:
        await owned_unit(unit.id, wallet_address())
    assert (type(refused.value), refused.value.code) == (Forbidden, "not_owner")
    quiz = await make_unit(TaskKind.QUIZ, {"question": "?", "answers": ["a"]}, advertiser=owner)
    for unit_id in (quiz.id, "task_doesnotexist1234567", "junk"):
        with pytest.raises(DomainError) as missing:
            await owned_unit(unit_id, owner.wallet)
        assert isinstance(missing.value, NotFound)
