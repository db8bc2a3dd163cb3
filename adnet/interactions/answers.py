"""A viewer's answer to a standalone unit (the ``proof`` of an interaction) as a pydantic model of the unit's kind,
built from the unit's configuration: the options a poll or a question offers, a rating's range, a text's bounds,
which of a feedback's parts it asks for and requires.

A request names an answer's keys in camelCase (``optionId``), as every request does; the domain reads them in
snake_case (``option_id``), and ``Answer.stored`` gives the response in the form it is kept in and exported (the
request's). Any key the unit does not take is refused, so nothing in a proof can set anything else (a reward).

A refusal is Invalid with the code and the sentence docs/interactions.md gives, naming the field as the request
wrote it (``proof.optionId``), about the first offending key in the order the checks have always run: a key the
unit does not take, then a key it needs, then each value in the order of the model's fields.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Annotated, Any, ClassVar, TypeVar

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    create_model,
    model_validator,
)
from pydantic.alias_generators import to_camel
from pydantic_core import PydanticCustomError

from adnet.core.errors import Invalid
from adnet.tasks.config import FeedbackConfig, PollConfig, SurveyConfig, SurveyQuestion

# Control characters other than tab, line feed and carriage return have no place in a viewer's text.
_FORBIDDEN_TEXT = frozenset(chr(code) for code in range(32) if chr(code) not in "\t\n\r") | {"\x7f"}
# The field that holds a survey question's answer, by the question's type.
ANSWER_FIELDS = {"single": "option_id", "multiple": "option_ids", "rating": "rating", "text": "text"}

Value = str | int | list[str] | None


def _refused(code: str, field: str, sentence: str) -> PydanticCustomError:
    """The refusal said to the client: ``field: sentence``."""
    return PydanticCustomError(code, f"{field}: {sentence}", {"field": field})


def _field(info: ValidationInfo) -> str:
    return f"proof.{to_camel(str(info.field_name))}"


class Answer(BaseModel):
    """An answer: only the keys its model has, each checked by its field's validator."""

    model_config = ConfigDict(alias_generator=to_camel, frozen=True, extra="forbid")
    # Keys (as requested) that must be there, and what the refusal of their absence says.
    NEEDED: ClassVar[dict[str, str]] = {}

    @model_validator(mode="before")
    @classmethod
    def _known_keys(cls, proof: Any) -> Any:
        taken = {field.alias or name for name, field in cls.model_fields.items()}
        extra = sorted(set(proof) - taken)
        if extra:
            raise _refused("invalid_field", f"proof.{extra[0]}", "this unit takes no such answer.")
        for key, sentence in cls.NEEDED.items():
            if key not in proof:
                raise _refused("missing_field", f"proof.{key}", sentence)
        return proof

    @classmethod
    def read(cls: type[A], proof: dict[str, Any]) -> A:
        """``proof`` as this answer; Invalid about its first offending key otherwise."""
        try:
            return cls.model_validate(proof)
        except ValidationError as error:
            first = error.errors(include_url=False)[0]
            raise Invalid(first["type"], first["msg"], field=(first.get("ctx") or {}).get("field")) from None

    def stored(self) -> dict[str, Any]:
        """The answer as it is kept: the request's keys, without what it left out."""
        return self.model_dump(by_alias=True, exclude_none=True)


A = TypeVar("A", bound=Answer)

# Field types: each checks the value against the unit's configuration. --------------------------------------------

def _check(check: Callable[[Any, str], Any]) -> BeforeValidator:
    return BeforeValidator(lambda value, info: check(value, _field(info)))


def _option(choices: list[str]) -> Callable[[Any, str], str]:
    def check(value: Any, field: str) -> str:
        if not isinstance(value, str) or value not in choices:
            raise _refused("invalid_field", field, f"not one of the options ({', '.join(choices)}).")
        return value
    return check


def _options(choices: list[str]) -> Callable[[Any, str], list[str] | None]:
    """Distinct options, in the question's order whatever order they come in."""
    option = _option(choices)

    def check(value: Any, field: str) -> list[str] | None:
        if value is None:
            return None
        if not isinstance(value, list) or not value:
            raise _refused("invalid_field", field, "a list of one or more of the question's options.")
        chosen = [option(item, field) for item in value]
        if len(set(chosen)) != len(chosen):
            raise _refused("invalid_field", field, "each option at most once.")
        return sorted(chosen, key=choices.index)
    return check


def _rating(low: int, high: int) -> Callable[[Any, str], int | None]:
    def check(value: Any, field: str) -> int | None:
        if value is not None and (type(value) is not int or not low <= value <= high):
            raise _refused("invalid_field", field, f"a whole number from {low} to {high}.")
        return value
    return check


def _text(max_length: int, min_length: int = 0) -> Callable[[Any, str], str | None]:
    """The trimmed text, None when absent or blank."""
    def check(value: Any, field: str) -> str | None:
        if value is None:
            return None
        if not isinstance(value, str):
            raise _refused("invalid_field", field, "a text.")
        text = value.strip()
        if any(character in _FORBIDDEN_TEXT for character in text):
            raise _refused("invalid_field", field, "control characters are not allowed.")
        if len(text) > max_length:
            raise _refused("invalid_field", field, f"at most {max_length} characters.")
        if text and len(text) < min_length:
            raise _refused("invalid_field", field, f"write at least {min_length} characters.")
        return text or None
    return check


def _required(check: Callable[[Any, str], Any], required: bool, sentence: str) -> Callable[[Any, str], Any]:
    """``check``, and a refusal saying ``sentence`` when a ``required`` value is absent."""
    def checked(value: Any, field: str) -> Any:
        value = check(value, field)
        if value is None and required:
            raise _refused("missing_field", field, sentence)
        return value
    return checked


def _optional(check: Callable[[Any, str], Any]) -> tuple[Any, Any]:
    """A field that may be absent, checked also when it is (``_required``), for ``create_model``."""
    return Annotated[Any, _check(check)], Field(None, validate_default=True)


# The answers of each kind. ---------------------------------------------------------------------------------------

class PollAnswer(Answer):
    """POLL: one of the poll's options."""

    NEEDED: ClassVar[dict[str, str]] = {"optionId": "choose one of the poll's options."}

    option_id: str


class FeedbackAnswer(Answer):
    """FEEDBACK: ``rating`` and ``text``, each a field when the unit asks for it (a part it does not ask for is
    refused as any unknown key); at least one given."""

    @model_validator(mode="after")
    def _something(self) -> FeedbackAnswer:
        if self.stored() == {}:
            field = "proof.rating" if "rating" in type(self).model_fields else "proof.text"
            raise PydanticCustomError("missing_field", "Give a rating or a text.", {"field": field})
        return self


class SurveyStep(Answer):
    """The question of the survey an answer names; the answer's other keys are ``SurveyAnswer``'s to read."""

    model_config = ConfigDict(extra="ignore")

    question_id: str

    @model_validator(mode="before")
    @classmethod
    def _known_keys(cls, proof: Any) -> Any:
        """Replaces ``Answer``'s check of the keys: only the question is read here, named and not null."""
        if proof.get("questionId") is None:
            raise _refused("missing_field", "proof.questionId", "name the question you answer.")
        return proof


class SurveyAnswer(Answer):
    """SURVEY: the answer to one question, under the key its type takes (None: skipped, which only an optional
    question allows)."""

    question_id: str

    @property
    def value(self) -> Value:
        """The answer (the field besides ``question_id``)."""
        return next(getattr(self, name) for name in type(self).model_fields if name != "question_id")


def poll_answer(config: PollConfig, proof: dict[str, Any]) -> PollAnswer:
    """``proof`` as an answer to the poll ``config`` describes; Invalid naming the offending key otherwise."""
    return _poll_model(config.model_dump_json()).read(proof)


def feedback_answer(config: FeedbackConfig, proof: dict[str, Any]) -> FeedbackAnswer:
    """``proof`` as an answer to the feedback ``config`` describes; Invalid naming the offending key otherwise."""
    return _feedback_model(config.model_dump_json()).read(proof)


def survey_answer(config: SurveyConfig, proof: dict[str, Any]) -> tuple[int, SurveyAnswer]:
    """The index of the question ``proof`` names and its answer; Invalid naming the offending key otherwise."""
    ids = [question.id for question in config.questions]
    step = _step_model(tuple(ids)).read(proof)
    index = ids.index(step.question_id)
    return index, _question_model(config.questions[index].model_dump_json()).read(proof)


# The models of one unit, built from its configuration once (the configuration's JSON is the key). ---------------

_BUILT = 256


@lru_cache(maxsize=_BUILT)
def _poll_model(config_json: str) -> type[PollAnswer]:
    config = PollConfig.model_validate_json(config_json)
    option = _option([option.id for option in config.options])
    return create_model("PollAnswer", __base__=PollAnswer, option_id=(Annotated[str, _check(option)], ...))


@lru_cache(maxsize=_BUILT)
def _feedback_model(config_json: str) -> type[FeedbackAnswer]:
    config = FeedbackConfig.model_validate_json(config_json)
    fields: dict[str, Any] = {}
    if config.rating is not None:
        fields["rating"] = _optional(_required(_rating(config.rating.min, config.rating.max), config.rating.required,
                                               "this feedback needs a rating."))
    if config.text is not None:
        fields["text"] = _optional(_required(_text(config.text.max_length, config.text.min_length),
                                             config.text.required, "this feedback needs a text."))
    return create_model("FeedbackAnswer", __base__=FeedbackAnswer, **fields)


@lru_cache(maxsize=_BUILT)
def _step_model(question_ids: tuple[str, ...]) -> type[SurveyStep]:
    def check(value: Any, field: str) -> str:
        if not isinstance(value, str) or value not in question_ids:
            raise _refused("invalid_field", field, "no such question in this survey.")
        return value
    return create_model("SurveyStep", __base__=SurveyStep, question_id=(Annotated[str, _check(check)], ...))


@lru_cache(maxsize=_BUILT)
def _question_model(question_json: str) -> type[SurveyAnswer]:
    question = SurveyQuestion.model_validate_json(question_json)
    choices = [option.id for option in question.options]
    check = {"single": _unless_none(_option(choices)), "multiple": _options(choices),
             "rating": _rating(question.min, question.max), "text": _text(question.max_length)}[question.type]
    answer = _required(check, question.required, f"question {question.id} needs an answer.")
    fields: dict[str, Any] = {ANSWER_FIELDS[question.type]: _optional(answer)}
    return create_model("SurveyAnswer", __base__=SurveyAnswer, **fields)


def _unless_none(check: Callable[[Any, str], Any]) -> Callable[[Any, str], Any]:
    """``check`` for a value that may be absent (None)."""
    return lambda value, field: None if value is None else check(value, field)
