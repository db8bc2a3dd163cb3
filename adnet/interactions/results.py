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
from datetime import UTC, datetime
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from adnet.core.amounts import to_decimal_string
from adnet.core.csv_text import csv_text
from adnet.core.errors import NotFound
from adnet.interactions.models import Interaction, SessionStatus, SurveySession
from adnet.interactions.submission import UNIT_KINDS
from adnet.tasks.authoring import owned_task
from adnet.tasks.config import FeedbackConfig, PollConfig, SurveyConfig, SurveyQuestion, parse_config
from adnet.tasks.models import Task

# How many of the newest texts a summary shows; the CSV has them all.
LATEST_TEXTS = 10


async def owned_unit(unit_id: str, wallet: str) -> Task:
    """The unit ``unit_id`` when ``wallet`` (a signed-in wallet) is its advertiser's: NotFound for no such unit (or a
    task that is not a unit), Forbidden ``not_owner`` for another advertiser's."""
    unit = await owned_task(wallet, unit_id)
    if unit.kind not in UNIT_KINDS:
        raise NotFound.of("unit")
    return unit


async def unit_results(unit: Task, now: datetime) -> dict[str, Any]:
    """The unit's results at ``now``: totals, and the summary of its kind (``poll``, ``feedback`` or ``survey``)."""
    config = parse_config(unit.kind, unit.config)
    responses = await Interaction.filter(unit_id=unit.id).order_by("-created_at", "-id").values(
        "id", "answers", "points", "gs_amount", "created_at")
    results: dict[str, Any] = {
        "unitId": unit.id, "kind": unit.kind.value, "title": unit.title, "responses": len(responses),
        "awarded": {"points": sum(row["points"] for row in responses),
                    "gs": to_decimal_string(sum(int(row["gs_amount"]) for row in responses))},
    }
    answers = [row["answers"] for row in responses]
    if isinstance(config, PollConfig):
        votes = Counter(answer["optionId"] for answer in answers)
        results["poll"] = {"question": config.question, "options": _tally(config.options, votes, len(answers))}
    elif isinstance(config, FeedbackConfig):
        ratings = [answer["rating"] for answer in answers if "rating" in answer]
        texts = [(row["id"], row["answers"]["text"], row["created_at"]) for row in responses
                 if "text" in row["answers"]]
        results["feedback"] = {
            "question": config.question,
            "rating": _ratings(ratings, config.rating.min, config.rating.max) if config.rating else None,
            "text": _texts(texts) if config.text else None,
        }
    elif isinstance(config, SurveyConfig):
        results["survey"] = {"sessions": await _sessions(unit, now),
                             "questions": await _questions(unit, config, responses)}
    return results


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
        *([interaction_id, _timestamp(created_at), site_id, wallet or "", points, to_decimal_string(int(gs_amount)),
           *cells(answers)]
          for interaction_id, created_at, site_id, wallet, points, gs_amount, answers in rows),
    ])



def _tally(options: list[Any], counts: Counter[str], answered: int) -> list[dict[str, Any]]:
    return [{"id": option.id, "label": option.label, "votes": counts[option.id],
             "share": _ratio(counts[option.id], answered)} for option in options]


def _ratings(ratings: list[int], low: int, high: int) -> dict[str, Any]:
    counts = Counter(ratings)
    return {
        "min": low, "max": high, "count": len(ratings),
        "average": _round(Decimal(sum(ratings)) / len(ratings), "0.01") if ratings else None,
        "distribution": [{"rating": value, "count": counts[value]} for value in range(low, high + 1)],
    }


def _texts(texts: list[tuple[str, str, datetime]]) -> dict[str, Any]:
    """How many texts there are and the newest few (``texts`` is newest first)."""
    return {"count": len(texts), "latest": [{"interactionId": interaction_id, "text": text,
                                             "createdAt": _timestamp(created_at)}
                                            for interaction_id, text, created_at in texts[:LATEST_TEXTS]]}


async def _sessions(unit: Task, now: datetime) -> dict[str, Any]:
    """Sessions by state. A session still in progress after its expiry was abandoned."""
    rows = await SurveySession.filter(unit_id=unit.id).values_list("status", "expires_at")
    completed = sum(status == SessionStatus.COMPLETED for status, _ in rows)
    abandoned = sum(status == SessionStatus.ABANDONED or (status == SessionStatus.IN_PROGRESS and expires <= now)
                    for status, expires in rows)
    return {"started": len(rows), "completed": completed, "inProgress": len(rows) - completed - abandoned,
            "abandoned": abandoned, "completionRate": _ratio(completed, len(rows))}


async def _questions(unit: Task, config: SurveyConfig, responses: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each question's summary over the completed responses, and how many sessions reached it (were shown it,
    having passed the questions before)."""
    steps = [step for (step,) in await SurveySession.filter(unit_id=unit.id).values_list("step")]
    summaries = []
    for index, question in enumerate(config.questions):
        given = [row["answers"][question.id] for row in responses if question.id in row["answers"]]
        summary: dict[str, Any] = {
            "id": question.id, "type": question.type, "prompt": question.prompt, "required": question.required,
            "reached": sum(step >= index for step in steps), "answered": len(given),
            "skipped": len(responses) - len(given),
        }
        summary.update(_question_summary(question, given, responses))
        summaries.append(summary)
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


def _timestamp(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")
