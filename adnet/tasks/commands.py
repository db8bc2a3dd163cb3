"""What an advertiser and a viewer ask of tasks: a task or unit to create or change, a completion to record, and
the viewer's questions about them (its completions, a visit to start, a message to sign)."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Self

from pydantic import ConfigDict, Field, StringConstraints, model_validator

from adnet.core.inputs import Changes, Command, Fingerprint, Instant, Price, WalletAddress, rule
from adnet.tasks.models import TaskKind

MAX_TITLE = 200
MAX_DESCRIPTION = 1000
MAX_POINTS = 1_000_000
MAX_REPEATS = 1000
MAX_ID_LENGTH = 64

Title = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_TITLE)]
Description = Annotated[str, StringConstraints(strip_whitespace=True, max_length=MAX_DESCRIPTION)]
Points = Annotated[int, Field(strict=True, ge=0, le=MAX_POINTS)]
Repeats = Annotated[int, Field(strict=True, ge=1, le=MAX_REPEATS)]
Config = Annotated[dict[str, Any], Field(description="the settings of the task's kind (see its configuration schema)")]


class NewTask(Command):
    """A CTA task (VISIT_URL, SIGN_MESSAGE, ONCHAIN_EVENT, QUIZ) or a unit (POLL, FEEDBACK, SURVEY) with its config,
    rewards and limits. Its dates default to its campaign's."""

    kind: TaskKind
    title: Title
    description: Description = ""
    config: Config
    reward_points: Points = 0
    reward_gs: Price = Field(0, description="G$ per completion")
    max_per_wallet: Repeats = 1
    max_per_fingerprint: Repeats = 1
    starts_at: Instant | None = None
    ends_at: Instant | None = None


class TaskChanges(Changes):
    """Some fields of a task; only those given change. The kind changes only with a config of the new kind."""

    NULLABLE: ClassVar[frozenset[str]] = frozenset({"ends_at"})
    # What an operator reviews: it changes only while the campaign is unreviewed.
    CONTENT: ClassVar[frozenset[str]] = frozenset({"kind", "title", "description", "config", "starts_at", "ends_at"})

    kind: TaskKind | None = None
    title: Title | None = None
    description: Description | None = None
    config: Config | None = None
    reward_points: Points | None = None
    reward_gs: Price | None = None
    max_per_wallet: Repeats | None = None
    max_per_fingerprint: Repeats | None = None
    starts_at: Instant | None = None
    ends_at: Instant | None = None

    @model_validator(mode="after")
    def _kind_with_config(self) -> Self:
        if self.kind is not None and self.config is None:
            raise rule("invalid_field", "a new kind needs the config of that kind", at="config")
        return self


class CompleteTask(Command):
    """A viewer's completion of a CTA task, with the proof its kind asks for, and the site it was shown on. The text
    of a SIGN_MESSAGE proof reaches its verifier whatever it holds, a NUL character included (``invalid_message``,
    ``invalid_signature``): it is never stored."""

    model_config = ConfigDict(extra="forbid")
    UNSTORED_TEXT: ClassVar[frozenset[str]] = frozenset({"proof.message", "proof.signature"})

    task_id: str = Field(max_length=MAX_ID_LENGTH)
    wallet: WalletAddress
    fingerprint: Fingerprint
    proof: dict[str, Any]
    site_id: str | None = Field(None, max_length=MAX_ID_LENGTH)


class CompletionsQuery(Command):
    """Whose completions to list: a wallet's, a device's, or both; optionally of one campaign's tasks."""

    wallet: WalletAddress | None = None
    fingerprint: Fingerprint | None = None
    campaign_id: str | None = Field(None, max_length=MAX_ID_LENGTH)

    @model_validator(mode="after")
    def _someone(self) -> Self:
        if self.wallet is None and self.fingerprint is None:
            raise rule("missing_field", "give a wallet, a fingerprint, or both", at="wallet")
        return self


class VisitStart(Command):
    """The device that starts a VISIT_URL task's visit."""

    fingerprint: Fingerprint


class MessageRequest(Command):
    """The wallet that will sign a SIGN_MESSAGE task's message."""

    wallet: WalletAddress
