"""CTA tasks over HTTP: POST /api/tasks/complete, the visit link and the message of a task, and the viewer's
completions (rules in adnet.tasks). Public: open to any origin without credentials, rate limited."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from quart import Blueprint, Response, redirect
from quart_rate_limiter import rate_limit
from quart_schema import document_response
from werkzeug.wrappers.response import Response as WerkzeugResponse

from adnet.services import Services
from adnet.tasks import completion, messages, visits
from adnet.tasks.commands import CompleteTask, CompletionsQuery, MessageRequest, VisitStart
from api.http import answer, with_body, with_query
from api.openapi import other_answer
from api.schemas import Address, Awarded, ClaimOut, Schema, Time, claim_out, refusals
from web.limits import settings_limit

blueprint = Blueprint("api_tasks", __name__, url_prefix="/api")


class CompletionOut(Schema):
    """The completion, what it earned, and the signed claim that pays its G$ (null when the task's budgets are
    empty: points only)."""

    success: Literal[True]
    completion_id: str
    awarded: Awarded
    transaction: ClaimOut | None


class ViewerCompletionOut(Schema):
    task_id: str
    campaign_id: str | None
    kind: str
    completion_id: str
    completed_at: Time
    awarded: Awarded
    claim_status: str | None
    claim_ref: str | None


class CompletionsOut(Schema):
    """The completions, and where the wallet gets an issued claim again: its rewards (``rewardsApi``, after a
    rewards sign-in, see docs/rewards.md) or adnet's rewards page (``rewardsPage``)."""

    completions: list[ViewerCompletionOut]
    rewards_api: str
    rewards_page: str


class MessageOut(Schema):
    """The message to sign and its single-use nonce."""

    task_id: str
    wallet: Address
    message: str
    nonce: str
    expires_at: Time


@blueprint.post("/tasks/complete")
@rate_limit(limits=settings_limit("rate_limit_public"))
@with_body(CompleteTask)
@document_response(CompletionOut, 201)
@refusals(400, 401, 404, 409, 429, 503)
async def complete(data: CompleteTask, run: Services, now: datetime) -> Response:
    """Verify a completion's proof and answer with the awarded points and G$ and the signed claim that pays them
    (``transaction``, null when the task's budgets are empty). A repeat past the limit is 409 ``already_completed``
    with the earlier ``completionId`` and its ``transaction``; a SIGN_MESSAGE signature that is not the wallet's,
    401 ``invalid_signature``; a site where the task's campaign may not pay, 409 ``not_allowed_on_site``."""
    result = await completion.complete_task(data, now=now, chain=run.chain, writer=run.completions)
    done = result.completion
    return answer(CompletionOut(success=True, completion_id=done.id,
                                awarded=Awarded(points=done.points, gs=int(done.gs_amount)),
                                transaction=claim_out(result.claim)), 201)


@blueprint.get("/tasks/status")
@rate_limit(limits=settings_limit("rate_limit_public"))
@with_query(CompletionsQuery)
@document_response(CompletionsOut)
@refusals(400, 429)
async def status(query_args: CompletionsQuery, run: Services) -> Response:
    """The completions of a wallet and/or a device fingerprint (``?wallet=&fingerprint=&campaignId=``), newest
    first, so a site can mark tasks done. The claim itself is shown only to its wallet: an ``issued`` one is listed
    with its ``claimRef``, and the wallet gets it again from its rewards (``rewardsApi``, ``rewardsPage``)."""
    rows = await completion.viewer_completions(query_args)
    base_url = run.settings.public_url
    return answer(CompletionsOut(completions=[
        ViewerCompletionOut(task_id=row.task_id, campaign_id=row.campaign_id, kind=row.kind,
                            completion_id=row.completion_id, completed_at=row.completed_at,
                            awarded=Awarded(points=row.points, gs=row.gs), claim_status=row.claim_status,
                            claim_ref=row.claim_ref)
        for row in rows], rewards_api=f"{base_url}/api/rewards", rewards_page=f"{base_url}/rewards"))


@blueprint.get("/tasks/<task_id>/visit")
@rate_limit(limits=settings_limit("rate_limit_public"))
@with_query(VisitStart)
@refusals(400, 404, 409, 429)
@other_answer(302, "The visit has started: on to the advertiser's page.", headers={"Location": "The task's URL."})
async def visit(task_id: str, query_args: VisitStart, now: datetime) -> WerkzeugResponse:
    """Start the dwell of a VISIT_URL task for ``?fingerprint=`` and redirect (302) to the advertiser's page."""
    target = await visits.start_visit(task_id, query_args, now)
    return redirect(target, 302)


@blueprint.get("/tasks/<task_id>/message")
@rate_limit(limits=settings_limit("rate_limit_public"))
@with_query(MessageRequest)
@document_response(MessageOut)
@refusals(400, 404, 409, 429)
async def message(task_id: str, query_args: MessageRequest, run: Services, now: datetime) -> Response:
    """The exact message ``?wallet=`` must sign (EIP-191) to complete a SIGN_MESSAGE task, with its single-use
    nonce (valid 10 minutes)."""
    issued = await messages.issue_message(task_id, query_args, now=now, rng=run.random)
    return answer(MessageOut.model_validate(issued))
