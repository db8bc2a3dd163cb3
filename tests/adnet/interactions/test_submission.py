"""Interaction rules without HTTP: answers checked against the unit's configuration, the respondent key, and a
survey session changed only by a compare-and-swap on its version."""

from __future__ import annotations

import pytest

from adnet.core.errors import DomainError, Invalid
from adnet.interactions import submission as interactions
from adnet.interactions.models import Interaction, SessionStatus, SurveySession
from adnet.tasks.config import FeedbackConfig, PollConfig, SurveyConfig, parse_config
from adnet.tasks.models import TaskKind
from tests.api.test_interactions import FEEDBACK, POLL, SURVEY, make_unit
from tests.factories import make_site, wallet_address

POLL_CONFIG = parse_config(TaskKind.POLL, POLL)
SURVEY_CONFIG = parse_config(TaskKind.SURVEY, SURVEY)


def refusal(check, *args) -> tuple[type, str, str | None]:
    with pytest.raises(DomainError) as refused:
        check(*args)
    return type(refused.value), refused.value.code, refused.value.field


def survey_answer(proof: dict) -> tuple[int, object]:
    """The index of the question ``proof`` answers and its answer's value."""
    index, answer = interactions.survey_answer(SURVEY_CONFIG, proof)
    assert answer.question_id == SURVEY_CONFIG.questions[index].id
    return index, answer.value


def test_a_poll_answer_is_one_of_its_options():
    assert isinstance(POLL_CONFIG, PollConfig)
    answer = interactions.poll_answer(POLL_CONFIG, {"optionId": "fuse"})
    assert (answer.option_id, answer.stored()) == ("fuse", {"optionId": "fuse"})
    assert refusal(interactions.poll_answer, POLL_CONFIG, {"optionId": "FUSE"}) == (
        Invalid, "invalid_field", "proof.optionId")
    assert refusal(interactions.poll_answer, POLL_CONFIG, {"optionId": ["eth"]})[2] == "proof.optionId"
    # Nothing in a proof sets a reward: an unknown key is refused, not ignored.
    assert refusal(interactions.poll_answer, POLL_CONFIG, {"optionId": "eth", "points": 99})[2] == "proof.points"


@pytest.mark.parametrize(("rating", "text", "proof", "expected"), [
    ({"required": True}, None, {"rating": 1}, {"rating": 1}),
    ({"min": 0, "max": 10}, None, {"rating": 0}, {"rating": 0}),
    ({"required": False}, {"minLength": 2}, {"text": " ok "}, {"text": "ok"}),
    ({"required": False}, {}, {"rating": 3, "text": "line one\nline two"}, {"rating": 3, "text": "line one\nline two"}),
    ({"required": False}, {}, {"rating": 3, "text": ""}, {"rating": 3}),
])
def test_feedback_answers_within_bounds(rating, text, proof, expected):
    config = parse_config(TaskKind.FEEDBACK, {"question": "?", "rating": rating, "text": text})
    assert isinstance(config, FeedbackConfig)
    assert interactions.feedback_answer(config, proof).stored() == expected


@pytest.mark.parametrize(("rating", "text", "proof", "code", "field"), [
    ({"min": 2, "max": 4}, None, {"rating": 1}, "invalid_field", "proof.rating"),
    ({"min": 2, "max": 4}, None, {"rating": 5}, "invalid_field", "proof.rating"),
    ({"required": True}, {}, {"text": "only words"}, "missing_field", "proof.rating"),
    (None, {"required": True}, {}, "missing_field", "proof.text"),
    (None, {"minLength": 3}, {"text": "ab"}, "invalid_field", "proof.text"),
    (None, {"maxLength": 3}, {"text": "abcd"}, "invalid_field", "proof.text"),
    (None, {}, {"text": "bell\x07"}, "invalid_field", "proof.text"),
    (None, {}, {"rating": 3}, "invalid_field", "proof.rating"),
])
def test_feedback_refusals_name_the_field(rating, text, proof, code, field):
    config = parse_config(TaskKind.FEEDBACK, {"question": "?", "rating": rating, "text": text})
    assert refusal(interactions.feedback_answer, config, proof) == (Invalid, code, field)


def test_the_default_feedback_takes_a_rating_from_one_to_five():
    config = parse_config(TaskKind.FEEDBACK, {"question": "?"})
    assert interactions.feedback_answer(config, {"rating": 5}).stored() == {"rating": 5}
    assert refusal(interactions.feedback_answer, config, {"rating": 6})[2] == "proof.rating"
    assert refusal(interactions.feedback_answer, config, {"text": "no stars"})[1] == "missing_field"
    assert parse_config(TaskKind.FEEDBACK, FEEDBACK).rating.required is False


def test_survey_answers_name_their_question_and_fit_its_type():
    assert isinstance(SURVEY_CONFIG, SurveyConfig)
    assert survey_answer({"questionId": "q1", "optionId": "b"}) == (0, "b")
    # Multiple choices come back in the question's order, whatever order they were sent in.
    assert survey_answer({"questionId": "q2", "optionIds": ["z", "x"]}) == (1, ["x", "z"])
    assert survey_answer({"questionId": "q3"}) == (2, None)
    assert survey_answer({"questionId": "q3", "text": "  "}) == (2, None)
    assert refusal(interactions.survey_answer, SURVEY_CONFIG, {"questionId": "q1"}) == (
        Invalid, "missing_field", "proof.optionId")
    assert refusal(interactions.survey_answer, SURVEY_CONFIG, {"questionId": 1})[2] == "proof.questionId"
    assert refusal(interactions.survey_answer, SURVEY_CONFIG, {"questionId": "q3", "rating": 3})[2] == "proof.rating"


def test_the_respondent_is_the_wallet_or_else_the_device():
    wallet = wallet_address()
    assert interactions.Respondent(site_id="site_a", fingerprint="fp1", wallet=wallet).key == wallet
    assert interactions.Respondent(site_id="site_a", fingerprint="fp1", wallet=None).key == "fp:fp1"


async def test_a_session_changed_since_it_was_read_is_not_overwritten(app, clock):
    chain = app.extensions["adnet"].chain
    unit, site = await make_unit(TaskKind.SURVEY, SURVEY), await make_site()
    respondent = interactions.Respondent(site_id=site.id, fingerprint="device", wallet=None)
    opened = await interactions.submit(interactions.Submission(
        task_id=unit.id, site_id=site.id, fingerprint="device", wallet=None,
        proof={"questionId": "q1", "optionId": "a"}), now=clock.now(), chain=chain)
    stale = await SurveySession.get(id=opened.session.id)
    # Another answer lands between our read and our write.
    await SurveySession.filter(id=stale.id).update(answers={"q1": "b"}, version=1)
    with pytest.raises(interactions._SessionChanged):
        await interactions._advance(unit, SURVEY_CONFIG, respondent, stale, 1, ["x"], clock.now(), chain)
    with pytest.raises(interactions._SessionChanged):  # nor completed from a stale read
        stale.step = 2
        await interactions._advance(unit, SURVEY_CONFIG, respondent, stale, 2, None, clock.now(), chain)
    current = await SurveySession.get(id=stale.id)
    assert (current.answers, current.step, current.version, current.status) == (
        {"q1": "b"}, 1, 1, SessionStatus.IN_PROGRESS)
    assert await Interaction.all().count() == 0
