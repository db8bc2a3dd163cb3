"""Task configuration: every kind validates its settings, and the public view never carries a secret."""

import json

import pytest
from pydantic import ValidationError

from adnet.tasks.config import config_json, parse_config, public_task
from adnet.tasks.models import TaskKind
from tests.factories import make_task

QUIZ = {"question": "Which chain is G$ on?", "answers": ["Celo", "celo mainnet"], "choices": ["Celo", "Base"]}


@pytest.mark.parametrize(
    ("kind", "config"),
    [
        (TaskKind.VISIT_URL, {"url": "ftp://example.org"}),
        (TaskKind.VISIT_URL, {"url": "https://example.org", "minDwellMs": 10}),
        (TaskKind.SIGN_MESSAGE, {"message": "I like adnet"}),
        (TaskKind.ONCHAIN_EVENT, {"contract": "0x123", "eventTopic": "0x" + "ab" * 32}),
        (TaskKind.QUIZ, {"question": "?", "answers": []}),
        (TaskKind.POLL, {"question": "?", "options": [{"id": "a", "label": "A"}, {"id": "a", "label": "B"}]}),
        (TaskKind.FEEDBACK, {"question": "?", "rating": None, "text": None}),
        (TaskKind.SURVEY, {"questions": [{"id": "q1", "type": "single", "prompt": "?", "options": []}]}),
        (TaskKind.POLL, {"question": "?", "options": [{"id": "a", "label": "A"}], "secret": 1}),
    ],
)
def test_invalid_configs_are_refused(kind, config):
    with pytest.raises(ValidationError):
        parse_config(kind, config)


def test_defaults_are_filled_in():
    assert config_json(TaskKind.VISIT_URL, {"url": "https://example.org/x"})["minDwellMs"] == 5000
    feedback = config_json(TaskKind.FEEDBACK, {"question": "How was it?"})
    assert feedback["rating"] == {"min": 1, "max": 5, "required": True}
    assert feedback["text"]["required"] is False


async def test_quiz_answers_never_appear_in_the_public_view(app):
    task = await make_task(kind=TaskKind.QUIZ, config=config_json(TaskKind.QUIZ, QUIZ))
    view = public_task(task, "https://adnet.example")
    text = json.dumps(view)
    assert view["question"] == QUIZ["question"] and view["choices"] == ["Celo", "Base"]
    assert "answers" not in view and "celo mainnet" not in text


async def test_public_views_of_every_kind(app):
    visit = await make_task(kind=TaskKind.VISIT_URL, config=config_json(TaskKind.VISIT_URL,
                                                                        {"url": "https://a.example"}))
    view = public_task(visit, "https://adnet.example")
    assert view["visitUrl"] == f"https://adnet.example/api/tasks/{visit.id}/visit"
    assert view["rewards"] == {"points": 10, "gs": "1"}
    sign = await make_task(kind=TaskKind.SIGN_MESSAGE,
                           config=config_json(TaskKind.SIGN_MESSAGE, {"message": "I {wallet} {nonce}"}))
    assert "message" not in public_task(sign) and public_task(sign)["messageUrl"].endswith("/message")
    survey = await make_task(kind=TaskKind.SURVEY, config=config_json(TaskKind.SURVEY, {"questions": [
        {"id": "q1", "type": "rating", "prompt": "Rate us"},
        {"id": "q2", "type": "text", "prompt": "Why?", "required": False},
    ]}))
    assert public_task(survey)["totalSteps"] == 2
