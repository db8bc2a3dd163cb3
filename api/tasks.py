"""CTA tasks over HTTP: POST /api/tasks/complete, the visit link and the message of a task, and the viewer's
completions (rules in adnet.tasks). Public: open to any origin without credentials, rate limited."""

from __future__ import annotations

from quart import Blueprint, Response, jsonify, redirect
from quart_cors import route_cors
from quart_rate_limiter import rate_limit
from quart_schema import validate_querystring, validate_request
from werkzeug.wrappers.response import Response as WerkzeugResponse

from adnet.tasks import completion, messages, visits
from adnet.tasks.commands import CompleteTask, CompletionsQuery, MessageRequest, VisitStart
from api.auth import iso
from api.http import services
from api.ratelimit import settings_limit

blueprint = Blueprint("api_tasks", __name__, url_prefix="/api")


@blueprint.post("/tasks/complete")
@route_cors(allow_origin="*", allow_methods=["POST"], allow_headers=["Content-Type"])
@rate_limit(limits=settings_limit("rate_limit_public"))
@validate_request(CompleteTask)
async def complete(data: CompleteTask) -> tuple[Response, int]:
    """Verify a completion's proof and answer with the awarded points and G$ and the signed claim that pays them
    (``transaction``, null when the task's budgets are empty). A repeat past the limit is 409 ``already_completed``
    with the earlier ``completionId`` and its ``transaction``."""
    run = services()
    result = await completion.complete_task(data, now=run.clock.now(), chain=run.chain, writer=run.completions)
    return jsonify(completion.completion_payload(result.completion, result.claim)), 201


@blueprint.get("/tasks/status")
@route_cors(allow_origin="*", allow_methods=["GET"])
@rate_limit(limits=settings_limit("rate_limit_public"))
@validate_querystring(CompletionsQuery)
async def status(query_args: CompletionsQuery) -> Response:
    """The completions of a wallet and/or a device fingerprint (``?wallet=&fingerprint=&campaignId=``), newest
    first, so a site can mark tasks done."""
    rows = await completion.viewer_completions(query_args)
    response = jsonify({"completions": [{**row, "completedAt": iso(row["completedAt"])} for row in rows]})
    response.headers["Cache-Control"] = "no-store"
    return response


@blueprint.get("/tasks/<task_id>/visit")
@rate_limit(limits=settings_limit("rate_limit_public"))
@validate_querystring(VisitStart)
async def visit(task_id: str, query_args: VisitStart) -> WerkzeugResponse:
    """Start the dwell of a VISIT_URL task for ``?fingerprint=`` and redirect to the advertiser's page."""
    target = await visits.start_visit(task_id, query_args, services().clock.now())
    response = redirect(target, 302)
    response.headers["Cache-Control"] = "no-store"
    return response


@blueprint.get("/tasks/<task_id>/message")
@route_cors(allow_origin="*", allow_methods=["GET"])
@rate_limit(limits=settings_limit("rate_limit_public"))
@validate_querystring(MessageRequest)
async def message(task_id: str, query_args: MessageRequest) -> Response:
    """The exact message ``?wallet=`` must sign (EIP-191) to complete a SIGN_MESSAGE task, with its single-use
    nonce (valid 10 minutes)."""
    run = services()
    issued = await messages.issue_message(task_id, query_args, now=run.clock.now(), rng=run.random)
    response = jsonify({"taskId": issued.task_id, "wallet": issued.wallet, "message": issued.message,
                        "nonce": issued.nonce, "expiresAt": iso(issued.expires_at)})
    response.headers["Cache-Control"] = "no-store"
    return response
