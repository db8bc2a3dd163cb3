"""Task configuration: every kind validates its settings and is stored with its defaults filled in."""

import pytest
from pydantic import ValidationError

from adnet.tasks.config import config_json, parse_config
from adnet.tasks.models import TaskKind


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
