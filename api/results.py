"""A unit's results for its owner: GET /api/interactions/<unitId>/results and /results.csv (a session of the
advertiser's wallet; rules in adnet.interactions.results)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import Field, RootModel
from quart import Blueprint, Response
from quart_rate_limiter import rate_limit
from quart_schema import document_response

from adnet.accounts.commands import ApiKeyScope
from adnet.interactions import results
from api.http import answer
from api.openapi import CSV_FILE, other_answer
from api.schemas import AmountText, Schema, Time, refusals
from api.sessions import require_account
from web.context import injected
from web.csv import csv_file
from web.limits import ACCOUNT_LIMIT
from web.sessions import current_wallet

blueprint = Blueprint("api_results", __name__, url_prefix="/api")

NO_STORE = {"Cache-Control": "no-store"}


class Totals(Schema):
    points: int
    gs: AmountText


class OptionTallyOut(Schema):
    id: str
    label: str
    votes: int
    share: float | None = Field(description="of those who answered; null before anyone did")


class RatingCountOut(Schema):
    rating: int
    count: int


class RatingSummaryOut(Schema):
    min: int
    max: int
    count: int
    average: float | None
    distribution: list[RatingCountOut]


class LatestTextOut(Schema):
    interaction_id: str
    text: str = Field(description="as the viewer wrote it: escape it where you show it")
    created_at: Time


class TextSummaryOut(Schema):
    count: int
    latest: list[LatestTextOut]


class PollResultsOut(Schema):
    question: str
    options: list[OptionTallyOut]


class FeedbackResultsOut(Schema):
    question: str
    rating: RatingSummaryOut | None
    text: TextSummaryOut | None


class SessionCountsOut(Schema):
    started: int
    completed: int
    in_progress: int
    abandoned: int
    completion_rate: float | None


class _QuestionOut(Schema):
    id: str
    prompt: str
    required: bool
    reached: int = Field(description="sessions shown this question")
    answered: int
    skipped: int


class ChoiceQuestionOut(_QuestionOut):
    type: Literal["single", "multiple"]
    options: list[OptionTallyOut]


class RatingQuestionOut(_QuestionOut):
    type: Literal["rating"]
    rating: RatingSummaryOut


class TextQuestionOut(_QuestionOut):
    type: Literal["text"]
    text: TextSummaryOut


QuestionOut = Annotated[ChoiceQuestionOut | RatingQuestionOut | TextQuestionOut, Field(discriminator="type")]


class SurveyResultsOut(Schema):
    sessions: SessionCountsOut
    questions: list[QuestionOut]


class _UnitResultsOut(Schema):
    unit_id: str
    title: str
    responses: int
    awarded: Totals


class PollUnitResultsOut(_UnitResultsOut):
    kind: Literal["POLL"]
    poll: PollResultsOut


class FeedbackUnitResultsOut(_UnitResultsOut):
    kind: Literal["FEEDBACK"]
    feedback: FeedbackResultsOut


class SurveyUnitResultsOut(_UnitResultsOut):
    kind: Literal["SURVEY"]
    survey: SurveyResultsOut


class UnitResultsOut(RootModel[Annotated[PollUnitResultsOut | FeedbackUnitResultsOut | SurveyUnitResultsOut,
                                         Field(discriminator="kind")]]):
    """A unit's totals, and the summary of its kind under ``poll``, ``feedback`` or ``survey``."""


def unit_results_out(found: results.UnitResults) -> UnitResultsOut:
    common: dict[str, Any] = {"unit_id": found.unit_id, "title": found.title, "responses": found.responses,
              "awarded": Totals(points=found.points, gs=found.gs)}
    summary = found.summary
    if isinstance(summary, results.PollResults):
        return UnitResultsOut(PollUnitResultsOut(kind="POLL", poll=PollResultsOut.model_validate(summary), **common))
    if isinstance(summary, results.FeedbackResults):
        return UnitResultsOut(FeedbackUnitResultsOut(kind="FEEDBACK", feedback=FeedbackResultsOut.model_validate(
            summary), **common))
    questions = [_question_out(question) for question in summary.questions]
    return UnitResultsOut(SurveyUnitResultsOut(kind="SURVEY", survey=SurveyResultsOut(
        sessions=SessionCountsOut.model_validate(summary.sessions), questions=questions), **common))


def _question_out(question: results.QuestionSummary) -> ChoiceQuestionOut | RatingQuestionOut | TextQuestionOut:
    if question.type == "rating":
        return RatingQuestionOut.model_validate(question)
    if question.type == "text":
        return TextQuestionOut.model_validate(question)
    return ChoiceQuestionOut.model_validate(question)


@blueprint.get("/interactions/<unit_id>/results")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_account(ApiKeyScope.REPORTS)
@document_response(UnitResultsOut)
@refusals(403, 404)
@injected
async def unit_results_json(unit_id: str, now: datetime) -> Response:
    """The unit's results for its owner (the advertiser's signed-in wallet): responses, points and G$ awarded, and
    poll tallies, the rating distribution and average, or a survey's sessions and per-question summaries."""
    unit = await results.owned_unit(unit_id, current_wallet())
    return answer(unit_results_out(await results.unit_results(unit, now)), 200, NO_STORE)


@blueprint.get("/interactions/<unit_id>/results.csv")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_account(ApiKeyScope.REPORTS)
@refusals(403, 404)
@other_answer(200, "Every response as CSV, one row each.", "text/csv", headers=CSV_FILE)
async def unit_results_csv(unit_id: str) -> Response:
    """Every response of the unit as CSV for its owner, one row each, cells safe from spreadsheet formulas."""
    unit = await results.owned_unit(unit_id, current_wallet())
    return csv_file(await results.responses_csv(unit), f"{unit.id}-responses.csv", no_store=True)
