"""What an advertiser configures for each kind of task or unit, and the part of it a viewer may see.

``Task.config`` is stored as JSON; ``parse_config`` validates it against the schema of the task's kind (used
when a task is created or edited, so a stored config is always valid). ``task_view`` is what a viewer's view of a
task is written from; the API writes it field by field (``api.schemas.public_task``), never by copying the config,
so a secret (a quiz's accepted answers) cannot leak by accident.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, HttpUrl, ValidationError, field_validator, model_validator
from pydantic.alias_generators import to_camel

from adnet.core.errors import Invalid
from adnet.core.wallets import InvalidWallet, normalize_wallet
from adnet.tasks.models import Task, TaskKind

OptionId = Annotated[str, Field(min_length=1, max_length=40, pattern=r"^[A-Za-z0-9_-]+$")]
Label = Annotated[str, Field(min_length=1, max_length=200)]


class _Config(BaseModel):
    """A config as the API writes it (camelCase keys, ``minDwellMs``), read in snake_case (``min_dwell_ms``), and
    stored and shown as the API writes it."""

    model_config = ConfigDict(alias_generator=to_camel, serialize_by_alias=True, extra="forbid", frozen=True)


class Option(_Config):
    id: OptionId
    label: Label


def _unique_option_ids(options: list[Option]) -> list[Option]:
    ids = [option.id for option in options]
    if len(set(ids)) != len(ids):
        raise ValueError("option ids must be unique")
    return options


class VisitUrlConfig(_Config):
    """VISIT_URL: the viewer goes to ``url`` through our visit link and stays at least ``min_dwell_ms``."""

    url: HttpUrl
    min_dwell_ms: int = Field(default=5000, ge=1000, le=3_600_000)


class SignMessageConfig(_Config):
    """SIGN_MESSAGE: the wallet signs ``message`` (EIP-191) with ``{wallet}`` and ``{nonce}`` filled in."""

    message: str = Field(min_length=1, max_length=1000)

    @field_validator("message")
    @classmethod
    def needs_nonce(cls, message: str) -> str:
        if "{nonce}" not in message:
            raise ValueError("the message must contain {nonce}, so a signature cannot be reused")
        return message


MAX_CALL_BYTES = 4096


class PreparedCall(_Config):
    """The transaction the embed prepares for the viewer's wallet to send to the task's contract: ``data`` (the
    ABI-encoded call, 0x-hex) and ``value`` (wei, as a decimal string)."""

    data: str = Field(pattern=r"^0x([0-9a-fA-F]{2})*$", max_length=2 + 2 * MAX_CALL_BYTES)
    value: str = Field(default="0", pattern=r"^(0|[1-9][0-9]{0,30})$")

    @field_validator("data")
    @classmethod
    def lower_data(cls, value: str) -> str:
        return value.lower()


class OnchainEventConfig(_Config):
    """ONCHAIN_EVENT: a successful transaction from the wallet to ``contract`` that emitted ``event_topic``
    from ``emitter`` (default: the contract), with ``confirmations`` blocks on top. ``call``, when set, is the
    transaction the embed prepares for the viewer's wallet (any transaction that emits the event still counts)."""

    contract: str
    event_topic: str = Field(pattern=r"^0x[0-9a-fA-F]{64}$")
    emitter: str | None = None
    confirmations: int = Field(default=1, ge=0, le=100)
    call: PreparedCall | None = None

    @field_validator("contract", "emitter")
    @classmethod
    def address(cls, value: str | None) -> str | None:
        if value is None:
            return None
        try:
            return normalize_wallet(value)
        except InvalidWallet as exc:
            raise ValueError(str(exc)) from None

    @field_validator("event_topic")
    @classmethod
    def lower_topic(cls, value: str) -> str:
        return value.lower()


class QuizConfig(_Config):
    """QUIZ: ``answers`` are the accepted answers (secret); ``choices`` are shown when it is multiple choice."""

    question: str = Field(min_length=1, max_length=500)
    answers: list[Annotated[str, Field(min_length=1, max_length=200)]] = Field(min_length=1, max_length=20)
    choices: list[Label] = Field(default_factory=list, max_length=10)
    max_attempts: int = Field(default=3, ge=1, le=10)

    @model_validator(mode="after")
    def answerable(self) -> QuizConfig:
        """A multiple-choice quiz can be answered right: one of its accepted answers is among its choices (compared
        as a viewer's answer is, ``normalize_answer``)."""
        choices = {normalize_answer(choice) for choice in self.choices}
        if choices and not choices & {normalize_answer(answer) for answer in self.answers}:
            raise ValueError("one of the accepted answers must be among the choices")
        return self


def normalize_answer(text: str) -> str:
    """The form a quiz's answers are compared in: NFKC, trimmed, case-folded."""
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).strip().casefold())


class PollConfig(_Config):
    question: str = Field(min_length=1, max_length=500)
    options: list[Option] = Field(min_length=2, max_length=10)

    _unique = field_validator("options")(_unique_option_ids)


class RatingBounds(_Config):
    min: int = Field(default=1, ge=0, le=10)
    max: int = Field(default=5, ge=1, le=10)
    required: bool = True

    @model_validator(mode="after")
    def ordered(self) -> RatingBounds:
        if self.min >= self.max:
            raise ValueError("rating min must be below max")
        return self


class TextBounds(_Config):
    min_length: int = Field(default=0, ge=0, le=5000)
    max_length: int = Field(default=1000, ge=1, le=5000)
    required: bool = False

    @model_validator(mode="after")
    def ordered(self) -> TextBounds:
        if self.min_length > self.max_length:
            raise ValueError("text minLength must not exceed maxLength")
        return self


class FeedbackConfig(_Config):
    """FEEDBACK: a rating and/or a text; each says whether it is required (at least one must be)."""

    question: str = Field(min_length=1, max_length=500)
    rating: RatingBounds | None = Field(default_factory=RatingBounds)
    text: TextBounds | None = Field(default_factory=TextBounds)

    @model_validator(mode="after")
    def something_to_answer(self) -> FeedbackConfig:
        if self.rating is None and self.text is None:
            raise ValueError("feedback needs a rating, a text, or both")
        return self


class SurveyQuestion(_Config):
    id: OptionId
    type: Literal["single", "multiple", "rating", "text"]
    prompt: str = Field(min_length=1, max_length=500)
    required: bool = True
    options: list[Option] = Field(default_factory=list, max_length=20)
    min: int = Field(default=1, ge=0, le=10)
    max: int = Field(default=5, ge=1, le=10)
    max_length: int = Field(default=1000, ge=1, le=5000)

    _unique = field_validator("options")(_unique_option_ids)

    @model_validator(mode="after")
    def shape(self) -> SurveyQuestion:
        if self.type in ("single", "multiple") and len(self.options) < 2:
            raise ValueError(f"question {self.id}: a choice question needs at least two options")
        if self.type not in ("single", "multiple") and self.options:
            raise ValueError(f"question {self.id}: only choice questions have options")
        if self.type == "rating" and self.min >= self.max:
            raise ValueError(f"question {self.id}: rating min must be below max")
        return self


class SurveyConfig(_Config):
    """SURVEY: ordered questions, answered one step at a time in a session."""

    questions: list[SurveyQuestion] = Field(min_length=1, max_length=30)

    @field_validator("questions")
    @classmethod
    def unique_ids(cls, questions: list[SurveyQuestion]) -> list[SurveyQuestion]:
        ids = [question.id for question in questions]
        if len(set(ids)) != len(ids):
            raise ValueError("question ids must be unique")
        if not any(question.required for question in questions):
            raise ValueError("a survey needs at least one required question")
        return questions


CONFIG_SCHEMAS: dict[TaskKind, type[_Config]] = {
    TaskKind.VISIT_URL: VisitUrlConfig,
    TaskKind.SIGN_MESSAGE: SignMessageConfig,
    TaskKind.ONCHAIN_EVENT: OnchainEventConfig,
    TaskKind.QUIZ: QuizConfig,
    TaskKind.POLL: PollConfig,
    TaskKind.FEEDBACK: FeedbackConfig,
    TaskKind.SURVEY: SurveyConfig,
}

# The keys of ``proof`` each verifier takes (interface spec, part 4.4).
PROOF_KEYS: dict[TaskKind, frozenset[str]] = {
    TaskKind.VISIT_URL: frozenset({"dwellMs"}),
    TaskKind.SIGN_MESSAGE: frozenset({"signature", "message"}),
    TaskKind.ONCHAIN_EVENT: frozenset({"txHash"}),
    TaskKind.QUIZ: frozenset({"answer"}),
}


def parse_config(kind: TaskKind, raw: dict[str, Any]) -> Any:
    """Validate ``raw`` as the config of ``kind``; raises pydantic.ValidationError naming the field."""
    return CONFIG_SCHEMAS[kind].model_validate(raw)


def config_json(kind: TaskKind, raw: dict[str, Any]) -> dict[str, Any]:
    """The validated config in the normalised JSON form it is stored in."""
    return parse_config(kind, raw).model_dump(mode="json")


def checked_config(kind: TaskKind, raw: dict[str, Any]) -> dict[str, Any]:
    """``raw`` as a stored config of ``kind`` (``config_json``); Invalid ``invalid_config`` naming the config's
    field (``config.answers``) when it does not fit."""
    try:
        return config_json(kind, raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        location = ".".join(str(part) for part in first.get("loc", ()))
        field = f"config.{location}" if location else "config"
        raise Invalid("invalid_config", f"{field}: {first.get('msg', 'invalid value')}", field=field) from None


TaskConfig = VisitUrlConfig | SignMessageConfig | OnchainEventConfig | QuizConfig | PollConfig | FeedbackConfig \
    | SurveyConfig


@dataclass(frozen=True)
class TaskView:
    """What a task's public view is written from (``api.schemas.public_task``): its fields and its parsed config.
    The view lists what it shows field by field, so a secret of the config (a quiz's accepted answers) never
    leaves the server."""

    id: str
    kind: TaskKind
    title: str
    description: str
    campaign_id: str | None
    reward_points: int
    reward_gs: int
    config: TaskConfig


def task_view(task: Task) -> TaskView:
    """The view of ``task``; ValueError when its stored config no longer fits its kind."""
    return TaskView(id=task.id, kind=task.kind, title=task.title, description=task.description,
                    campaign_id=task.campaign_id,
                    reward_points=task.reward_points, reward_gs=int(task.reward_gs),
                    config=parse_config(task.kind, task.config))
