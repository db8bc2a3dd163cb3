"""What the owner of a standalone unit learns from its responses: poll tallies, the rating distribution and average,
a survey's per-question summaries and its sessions (completed, in progress, abandoned), and every response as CSV.

The owner of a unit is its advertiser: only a session of the advertiser's wallet reads them (``owned_unit``).
Figures are computed from the stored responses each time (``Interaction`` and ``SurveySession`` are the truth).
Counts are integers; averages, shares and rates are rounded for display and never used for money.

Viewers' text is returned as data in JSON (whoever renders it escapes it) and neutralised in CSV
(``adnet.core.csv_text``), where a spreadsheet could otherwise run it as a formula.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from adnet.accounts.models import MemberRole
from adnet.core.amounts import to_decimal_string
from adnet.core.clock import iso
from adnet.core.csv_text import csv_text
from adnet.core.errors import NotFound
from adnet.interactions.models import Interaction, SessionStatus, SurveySession
from adnet.interactions.submission import UNIT_KINDS
from adnet.tasks.authoring import owned_task
from adnet.tasks.config import FeedbackConfig, PollConfig, SurveyConfig, SurveyQuestion, parse_config
from adnet.tasks.models import Task, TaskKind

# How many of the newest texts a summary shows; the CSV has them all.
LATEST_TEXTS = 10


async def owned_unit(unit_id: str, wallet: str) -> Task:
    """The unit ``unit_id`` when ``wallet`` (a signed-in wallet) owns its advertiser account or is a member of it,
    any role: NotFound for no such unit (or a task that is not a unit), Forbidden ``not_owner`` for another
    advertiser's."""
    unit = await owned_task(wallet, unit_id, MemberRole.VIEWER)
    if unit.kind not in UNIT_KINDS:
        raise NotFound.of("unit")
    return unit


@dataclass(frozen=True)
class OptionTally:
    """An option and how many respondents chose it; ``share`` of those who answered (None before any did)."""

    id: str
    label: str
    votes: int
    share: float | None


@dataclass(frozen=True)
class RatingCount:
    rating: int
    count: int


@dataclass(frozen=True)
class RatingSummary:
    min: int
    max: int
    count: int
    average: float | None
    distribution: list[RatingCount]


@dataclass(frozen=True)
class LatestText:
    interaction_id: str
    text: str
    created_at: datetime


@dataclass(frozen=True)
class TextSummary:
    """How many texts there are, and the newest ``LATEST_TEXTS``."""

    count: int
    latest: list[LatestText]


@dataclass(frozen=True)
class PollResults:
    question: str
    options: list[OptionTally]


@dataclass(frozen=True)
class FeedbackResults:
    """The rating and text summaries (None for what the unit does not ask)."""

    question: str
    rating: RatingSummary | None
    text: TextSummary | None


@dataclass(frozen=True)
class SessionCounts:
    """Survey sessions by state; a session still in progress after its expiry was abandoned."""

    started: int
    completed: int
    in_progress: int
    abandoned: int
    completion_rate: float | None


@dataclass(frozen=True)
class QuestionSummary:
    """A survey question over the completed responses, how many sessions reached it, and the summary of its type:
    ``options`` (single, multiple), ``rating`` or ``text``."""

    id: str
    type: str
    prompt: str
    required: bool
    reached: int
    answered: int
    skipped: int
    options: list[OptionTally] | None = None
    rating: RatingSummary | None = None
    text: TextSummary | None = None


@dataclass(frozen=True)
class SurveyResults:
    sessions: SessionCounts
    questions: list[QuestionSummary]


@dataclass(frozen=True)
class UnitResults:
    """A unit's totals and the summary of its kind."""

    unit_id: str
    kind: TaskKind
    title: str
    responses: int
    points: int
    gs: int
    summary: PollResults | FeedbackResults | SurveyResults


async def unit_results(unit: Task, now: datetime) -> UnitResults:
    """The unit's results at ``now``: totals, and the summary of its kind."""
    config = parse_config(unit.kind, unit.config)
    responses = await Interaction.filter(unit_id=unit.id).order_by("-created_at", "-id").values(
        "id", "answers", "points", "gs_amount", "created_at")
    answers = [row["answers"] for row in responses]
    summary: PollResults | FeedbackResults | SurveyResults
    if isinstance(config, PollConfig):
        votes = Counter(answer["optionId"] for answer in answers)
        summary = PollResults(question=config.question, options=_tally(config.options, votes, len(answers)))
    elif isinstance(config, FeedbackConfig):
        ratings = [answer["rating"] for answer in answers if "rating" in answer]
        texts = [(row["id"], row["answers"]["text"], row["created_at"]) for row in responses
                 if "text" in row["answers"]]
        summary = FeedbackResults(
            question=config.question,
            rating=_ratings(ratings, config.rating.min, config.rating.max) if config.rating else None,
            text=_texts(texts) if config.text else None)
    else:
        summary = SurveyResults(sessions=await _sessions(unit, now),
                                questions=await _questions(unit, config, responses))
    return UnitResults(unit_id=unit.id, kind=unit.kind, title=unit.title, responses=len(responses),
                       points=sum(row["points"] for row in responses),
                       gs=sum(int(row["gs_amount"]) for row in responses), summary=summary)


async def responses_csv(unit: Task) -> str:
    """Every response of the unit, oldest first, one row each, safe to open in a spreadsheet."""
    config = parse_config(unit.kind, unit.config)
    if isinstance(config, PollConfig):
        labels = {option.id: option.label for option in config.options}
        answer_columns = ["optionId", "option"]

        def cells(answers: dict[str, Any]) -> list[Any]:
            return [answers["optionId"], labels.get(answers["optionId"], "")]
    elif isinstance(config, FeedbackConfig):
        answer_columns = ["rating", "text"]

        def cells(answers: dict[str, Any]) -> list[Any]:
            return [answers.get("rating", ""), answers.get("text", "")]
    else:
        questions = config.questions
        answer_columns = [question.id for question in questions]

        def cells(answers: dict[str, Any]) -> list[Any]:
            return [_cell_answer(answers.get(question.id)) for question in questions]

    rows = await Interaction.filter(unit_id=unit.id).order_by("created_at", "id").values_list(
        "id", "created_at", "site_id", "wallet", "points", "gs_amount", "answers")
    return csv_text([
        ["interactionId", "createdAt", "siteId", "wallet", "points", "gs", *answer_columns],
        *([interaction_id, iso(created_at), site_id, wallet or "", points, to_decimal_string(int(gs_amount)),
           *cells(answers)]
          for interaction_id, created_at, site_id, wallet, points, gs_amount, answers in rows),
    ])



def _tally(options: list[Any], counts: Counter[str], answered: int) -> list[OptionTally]:
    return [OptionTally(id=option.id, label=option.label, votes=counts[option.id],
                        share=_ratio(counts[option.id], answered)) for option in options]


def _ratings(ratings: list[int], low: int, high: int) -> RatingSummary:
    counts = Counter(ratings)
    return RatingSummary(min=low, max=high, count=len(ratings),
                         average=_round(Decimal(sum(ratings)) / len(ratings), "0.01") if ratings else None,
                         distribution=[RatingCount(rating=value, count=counts[value])
                                       for value in range(low, high + 1)])


def _texts(texts: list[tuple[str, str, datetime]]) -> TextSummary:
    """How many texts there are and the newest few (``texts`` is newest first)."""
    return TextSummary(count=len(texts), latest=[LatestText(interaction_id=interaction_id, text=text,
                                                            created_at=created_at)
                                                 for interaction_id, text, created_at in texts[:LATEST_TEXTS]])


async def _sessions(unit: Task, now: datetime) -> SessionCounts:
    """Sessions by state. A session still in progress after its expiry was abandoned."""
    rows = await SurveySession.filter(unit_id=unit.id).values_list("status", "expires_at")
    completed = sum(status == SessionStatus.COMPLETED for status, _ in rows)
    abandoned = sum(status == SessionStatus.ABANDONED or (status == SessionStatus.IN_PROGRESS and expires <= now)
                    for status, expires in rows)
    return SessionCounts(started=len(rows), completed=completed, in_progress=len(rows) - completed - abandoned,
                         abandoned=abandoned, completion_rate=_ratio(completed, len(rows)))


async def _questions(unit: Task, config: SurveyConfig, responses: list[dict[str, Any]]) -> list[QuestionSummary]:
    """Each question's summary over the completed responses, and how many sessions reached it (were shown it,
    having passed the questions before)."""
    steps = [step for (step,) in await SurveySession.filter(unit_id=unit.id).values_list("step")]
    summaries = []
    for index, question in enumerate(config.questions):
        given = [row["answers"][question.id] for row in responses if question.id in row["answers"]]
        summaries.append(QuestionSummary(
            id=question.id, type=question.type, prompt=question.prompt, required=question.required,
            reached=sum(step >= index for step in steps), answered=len(given), skipped=len(responses) - len(given),
            **_question_summary(question, given, responses)))
    return summaries


def _question_summary(question: SurveyQuestion, given: list[Any],
                      responses: list[dict[str, Any]]) -> dict[str, Any]:
    if question.type == "single":
        return {"options": _tally(question.options, Counter(given), len(given))}
    if question.type == "multiple":
        # Shares are of the respondents who answered, so they may add up to more than one.
        return {"options": _tally(question.options, Counter(choice for chosen in given for choice in chosen),
                                  len(given))}
    if question.type == "rating":
        return {"rating": _ratings(given, question.min, question.max)}
    texts = [(row["id"], row["answers"][question.id], row["created_at"]) for row in responses
             if question.id in row["answers"]]
    return {"text": _texts(texts)}


def _cell_answer(answer: Any) -> Any:
    if answer is None:
        return ""
    return ";".join(answer) if isinstance(answer, list) else answer


def _ratio(part: int, whole: int) -> float | None:
    return _round(Decimal(part) / whole, "0.0001") if whole else None


def _round(value: Decimal, places: str) -> float:
    return float(value.quantize(Decimal(places), rounding=ROUND_HALF_UP))
