"""Answers as models built from their unit's configuration: camelCase keys in, snake_case attributes, the stored
form the request's, and every refusal in the words docs/interactions.md gives clients."""

from __future__ import annotations

import pytest

from adnet.core.errors import Invalid
from adnet.interactions.answers import feedback_answer, poll_answer, survey_answer
from adnet.tasks.config import parse_config
from adnet.tasks.models import TaskKind

POLL = parse_config(TaskKind.POLL, {"question": "?", "options": [{"id": "eth", "label": "Ether"},
                                                                 {"id": "fuse", "label": "Fuse"}]})
OTHER_POLL = parse_config(TaskKind.POLL, {"question": "?", "options": [{"id": "yes", "label": "Yes"},
                                                                       {"id": "no", "label": "No"}]})
FEEDBACK = parse_config(TaskKind.FEEDBACK, {"question": "?", "rating": {"min": 2, "max": 4},
                                            "text": {"minLength": 3, "maxLength": 6}})
TEXT_ONLY = parse_config(TaskKind.FEEDBACK, {"question": "?", "rating": None, "text": {"required": True}})
SURVEY = parse_config(TaskKind.SURVEY, {"questions": [
    {"id": "q1", "type": "single", "prompt": "?", "options": [{"id": "a", "label": "A"}, {"id": "b", "label": "B"}]},
    {"id": "q2", "type": "multiple", "prompt": "?", "required": False,
     "options": [{"id": "x", "label": "X"}, {"id": "y", "label": "Y"}]},
    {"id": "q3", "type": "rating", "prompt": "?", "min": 0, "max": 3},
    {"id": "q4", "type": "text", "prompt": "?", "required": False, "maxLength": 5}]})


def refused(check, *args) -> tuple[str, str, str | None]:
    with pytest.raises(Invalid) as refusal:
        check(*args)
    return refusal.value.code, refusal.value.message, refusal.value.field


def test_the_choices_are_the_units_own():
    assert poll_answer(POLL, {"optionId": "eth"}).option_id == "eth"
    assert poll_answer(OTHER_POLL, {"optionId": "no"}).option_id == "no"
    assert refused(poll_answer, OTHER_POLL, {"optionId": "eth"}) == (
        "invalid_field", "proof.optionId: not one of the options (yes, no).", "proof.optionId")


def test_keys_are_camel_case_and_attributes_snake_case():
    answer = survey_answer(SURVEY, {"questionId": "q2", "optionIds": ["y", "x"]})[1]
    assert (answer.question_id, answer.option_ids, answer.value) == ("q2", ["x", "y"], ["x", "y"])
    assert answer.stored() == {"questionId": "q2", "optionIds": ["x", "y"]}
    assert refused(poll_answer, POLL, {"option_id": "eth"})[2] == "proof.option_id"
    assert refused(survey_answer, SURVEY, {"questionId": "q1", "option_id": "a"})[2] == "proof.option_id"


def test_feedback_takes_only_the_parts_its_unit_asks_for():
    assert feedback_answer(FEEDBACK, {"rating": 2, "text": " good "}).stored() == {"rating": 2, "text": "good"}
    assert feedback_answer(TEXT_ONLY, {"text": "fine"}).stored() == {"text": "fine"}
    assert refused(feedback_answer, TEXT_ONLY, {"rating": 3, "text": "fine"}) == (
        "invalid_field", "proof.rating: this unit takes no such answer.", "proof.rating")


@pytest.mark.parametrize(("check", "config", "proof", "code", "message", "field"), [
    (poll_answer, POLL, {}, "missing_field", "proof.optionId: choose one of the poll's options.", "proof.optionId"),
    (poll_answer, POLL, {"optionId": None}, "invalid_field", "proof.optionId: not one of the options (eth, fuse).",
     "proof.optionId"),
    (poll_answer, POLL, {"optionId": "eth", "points": 9}, "invalid_field",
     "proof.points: this unit takes no such answer.", "proof.points"),
    (feedback_answer, FEEDBACK, {"rating": 5}, "invalid_field", "proof.rating: a whole number from 2 to 4.",
     "proof.rating"),
    (feedback_answer, FEEDBACK, {"rating": True}, "invalid_field", "proof.rating: a whole number from 2 to 4.",
     "proof.rating"),
    (feedback_answer, FEEDBACK, {"text": "abc"}, "missing_field", "proof.rating: this feedback needs a rating.",
     "proof.rating"),
    (feedback_answer, FEEDBACK, {"rating": 3, "text": "ab"}, "invalid_field",
     "proof.text: write at least 3 characters.", "proof.text"),
    (feedback_answer, FEEDBACK, {"rating": 3, "text": "abcdefg"}, "invalid_field",
     "proof.text: at most 6 characters.", "proof.text"),
    (feedback_answer, FEEDBACK, {"rating": 3, "text": "a\x07bc"}, "invalid_field",
     "proof.text: control characters are not allowed.", "proof.text"),
    (feedback_answer, FEEDBACK, {"rating": 3, "text": 123}, "invalid_field", "proof.text: a text.", "proof.text"),
    (feedback_answer, TEXT_ONLY, {"text": "  "}, "missing_field", "proof.text: this feedback needs a text.",
     "proof.text"),
    (feedback_answer, parse_config(TaskKind.FEEDBACK, {"question": "?", "rating": {"required": False}}), {},
     "missing_field", "Give a rating or a text.", "proof.rating"),
    (survey_answer, SURVEY, {"optionId": "a"}, "missing_field", "proof.questionId: name the question you answer.",
     "proof.questionId"),
    (survey_answer, SURVEY, {"questionId": "q9"}, "invalid_field", "proof.questionId: no such question in this survey.",
     "proof.questionId"),
    (survey_answer, SURVEY, {"questionId": "q1"}, "missing_field", "proof.optionId: question q1 needs an answer.",
     "proof.optionId"),
    (survey_answer, SURVEY, {"questionId": "q1", "rating": 1}, "invalid_field",
     "proof.rating: this unit takes no such answer.", "proof.rating"),
    (survey_answer, SURVEY, {"questionId": "q2", "optionIds": []}, "invalid_field",
     "proof.optionIds: a list of one or more of the question's options.", "proof.optionIds"),
    (survey_answer, SURVEY, {"questionId": "q2", "optionIds": ["x", "x"]}, "invalid_field",
     "proof.optionIds: each option at most once.", "proof.optionIds"),
    (survey_answer, SURVEY, {"questionId": "q3", "rating": 4}, "invalid_field",
     "proof.rating: a whole number from 0 to 3.", "proof.rating"),
    (survey_answer, SURVEY, {"questionId": "q4", "text": "toolong"}, "invalid_field",
     "proof.text: at most 5 characters.", "proof.text"),
])
def test_refusals_say_what_clients_are_told(check, config, proof, code, message, field):
    assert refused(check, config, proof) == (code, message, field)
