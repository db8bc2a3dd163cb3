"""Interactions over HTTP: POST /api/interactions (public: any origin, no credentials, rate limited) answers a
POLL, FEEDBACK or SURVEY unit (rules in adnet.interactions.submission); GET /api/interactions/<taskId>/results
and /results.csv give the unit's owner its results (a session of the advertiser's wallet; rules in
adnet.interactions.results)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, RootModel
from quart import Blueprint, Response
from quart_cors import route_cors
from quart_rate_limiter import rate_limit
from quart_schema import document_response

from adnet.interactions import results, submission
from adnet.interactions.commands import Submission
from adnet.tasks.config import SurveyQuestion
from api.http import PREFLIGHT_MAX_AGE, answer, public, services, with_body
from api.ratelimit import settings_limit
from api.schemas import AmountText, Awarded, ClaimOut, Schema, Time, claim_out, refusals
from api.sessions import current_wallet, require_session

blueprint = Blueprint("api_interactions", __name__, url_prefix="/api")

NO_STORE = {"Cache-Control": "no-store"}


class RecordedOut(Schema):
    """A poll's or feedback's response, what it earned and the claim paying its G$ (null: points only)."""

    status: Literal["recorded"]
    interaction_id: str
    awarded: Awarded
    transaction: ClaimOut | None


class SurveyStepOut(Schema):
    """A survey answer saved: ``step`` questions done of ``totalSteps``; answer ``question`` next, naming
    ``sessionId``."""

    status: Literal["in_progress"]
    interaction_id: None
    session_id: str
    step: int
    total_steps: int
    question: SurveyQuestion


class SurveyCompletedOut(Schema):
    """The survey's last answer: the response is recorded, with what it earned and its claim."""

    status: Literal["completed"]
    interaction_id: str
    awarded: Awarded
    transaction: ClaimOut | None
    session_id: str
    step: int
    total_steps: int
    question: None


class InteractionOut(RootModel[Annotated[RecordedOut | SurveyStepOut | SurveyCompletedOut,
                                         Field(discriminator="status")]]):
    """What the answer did, by ``status``."""


def interaction_out(outcome: submission.Outcome) -> InteractionOut:
    interaction, session = outcome.interaction, outcome.session
    if session is None:
        assert interaction is not None  # noqa: S101 - a poll's or feedback's answer is recorded at once
        return InteractionOut(RecordedOut(
            status="recorded", interaction_id=interaction.id,
            awarded=Awarded(points=interaction.points, gs=int(interaction.gs_amount)),
            transaction=claim_out(outcome.claim)))
    if interaction is None:
        assert outcome.next_question is not None  # noqa: S101 - a survey in progress has a next question
        return InteractionOut(SurveyStepOut(status="in_progress", interaction_id=None, session_id=session.id,
                                            step=session.step, total_steps=outcome.total_steps,
                                            question=outcome.next_question))
    return InteractionOut(SurveyCompletedOut(
        status="completed", interaction_id=interaction.id,
        awarded=Awarded(points=interaction.points, gs=int(interaction.gs_amount)),
        transaction=claim_out(outcome.claim), session_id=session.id, step=session.step,
        total_steps=outcome.total_steps, question=None))


# A unit's results -------------------------------------------------------------------------------------------------

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


@blueprint.post("/interactions")
@public
@rate_limit(limits=settings_limit("rate_limit_public"))
@route_cors(allow_origin="*", allow_methods=["POST"], allow_headers=["Content-Type"], max_age=PREFLIGHT_MAX_AGE)
@with_body(Submission)
@document_response(InteractionOut, 201)
@refusals(400, 403, 404, 409, 429)
async def submit_interaction(data: Submission) -> Response:
    """Answer a unit: 201 ``recorded`` (poll, feedback) or, for a survey, ``in_progress`` with ``sessionId``,
    ``step``, ``totalSteps`` and the next ``question``, then ``completed``. A recorded response carries
    ``awarded`` and ``transaction`` (the claim paying its G$, or null). A second response: 409
    ``already_completed`` with the earlier ``interactionId``."""
    run = services()
    return answer(interaction_out(await submission.submit(data, now=run.clock.now(), chain=run.chain)), 201)


@blueprint.get("/interactions/<unit_id>/results")
@rate_limit(limits=settings_limit("rate_limit_account"))
@require_session
@document_response(UnitResultsOut)
@refusals(403, 404)
async def unit_results_json(unit_id: str) -> Response:
    """The unit's results for its owner (the advertiser's signed-in wallet): responses, points and G$ awarded, and
    poll tallies, the rating distribution and average, or a survey's sessions and per-question summaries."""
    unit = await results.owned_unit(unit_id, current_wallet())
    return answer(unit_results_out(await results.unit_results(unit, services().clock.now())), 200, NO_STORE)


@blueprint.get("/interactions/<unit_id>/results.csv")
@rate_limit(limits=settings_limit("rate_limit_account"))
@require_session
@refusals(403, 404)
async def unit_results_csv(unit_id: str) -> Response:
    """Every response of the unit as CSV for its owner, one row each, cells safe from spreadsheet formulas."""
    unit = await results.owned_unit(unit_id, current_wallet())
    return Response(await results.responses_csv(unit), mimetype="text/csv", headers={
        "Content-Disposition": f'attachment; filename="{unit.id}-responses.csv"', **NO_STORE})
