"""POST /api/interactions: a viewer's answer to a POLL, FEEDBACK or SURVEY unit (rules in
adnet.interactions.submission); public: any origin, no credentials, rate limited."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import Field, RootModel
from quart import Blueprint, Response
from quart_rate_limiter import rate_limit
from quart_schema import document_response

from adnet.interactions import submission
from adnet.interactions.commands import Submission
from adnet.services import Services
from adnet.tasks.config import SurveyQuestion
from api.http import answer, with_body
from api.schemas import Awarded, ClaimOut, Schema, claim_out, refusals
from web.limits import settings_limit

blueprint = Blueprint("api_interactions", __name__, url_prefix="/api")


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


@blueprint.post("/interactions")
@rate_limit(limits=settings_limit("rate_limit_public"))
@with_body(Submission)
@document_response(InteractionOut, 201)
@refusals(400, 403, 404, 409, 429)
async def submit_interaction(data: Submission, run: Services, now: datetime) -> Response:
    """Answer a unit: 201 ``recorded`` (poll, feedback) or, for a survey, ``in_progress`` with ``sessionId``,
    ``step``, ``totalSteps`` and the next ``question``, then ``completed``. A recorded response carries
    ``awarded`` and ``transaction`` (the claim paying its G$, or null). A second response of the respondent, or
    one past the unit's ``maxPerFingerprint`` responses on the device whatever the wallet: 409
    ``already_completed`` with the earlier ``interactionId``; a site where the unit's campaign may not pay, 409
    ``not_allowed_on_site``."""
    return answer(interaction_out(await submission.submit(data, now=now, chain=run.chain)), 201)
