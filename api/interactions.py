"""Interactions over HTTP: POST /api/interactions (public: any origin, no credentials, rate limited) answers a
POLL, FEEDBACK or SURVEY unit (rules in adnet.interactions.submission); GET /api/interactions/<taskId>/results
and /results.csv give the unit's owner its results (a session of the advertiser's wallet; rules in
adnet.interactions.results)."""

from __future__ import annotations

from quart import Blueprint, Response, jsonify
from quart_cors import route_cors
from quart_rate_limiter import rate_limit
from quart_schema import validate_request

from adnet.interactions import results, submission
from adnet.interactions.commands import Submission
from api.http import PREFLIGHT_MAX_AGE, public, services
from api.ratelimit import settings_limit
from api.sessions import current_wallet, require_session

blueprint = Blueprint("api_interactions", __name__, url_prefix="/api")


@blueprint.post("/interactions")
@public
@rate_limit(limits=settings_limit("rate_limit_public"))
@route_cors(allow_origin="*", allow_methods=["POST"], allow_headers=["Content-Type"], max_age=PREFLIGHT_MAX_AGE)
@validate_request(Submission)
async def submit_interaction(data: Submission) -> tuple[Response, int]:
    """Answer a unit: 201 ``recorded`` (poll, feedback) or, for a survey, ``in_progress`` with ``sessionId``,
    ``step``, ``totalSteps`` and the next ``question``, then ``completed``. A recorded response carries
    ``awarded`` and ``transaction`` (the claim paying its G$, or null). A second response: 409
    ``already_completed`` with the earlier ``interactionId``."""
    run = services()
    outcome = await submission.submit(data, now=run.clock.now(), chain=run.chain)
    return jsonify(submission.interaction_payload(outcome)), 201


@blueprint.get("/interactions/<unit_id>/results")
@rate_limit(limits=settings_limit("rate_limit_account"))
@require_session
async def unit_results_json(unit_id: str) -> Response:
    """The unit's results for its owner (the advertiser's signed-in wallet): responses, points and G$ awarded, and
    poll tallies, the rating distribution and average, or a survey's sessions and per-question summaries."""
    run = services()
    unit = await results.owned_unit(unit_id, current_wallet())
    response = jsonify(await results.unit_results(unit, run.clock.now()))
    response.headers["Cache-Control"] = "no-store"
    return response


@blueprint.get("/interactions/<unit_id>/results.csv")
@rate_limit(limits=settings_limit("rate_limit_account"))
@require_session
async def unit_results_csv(unit_id: str) -> Response:
    """Every response of the unit as CSV for its owner, one row each, cells safe from spreadsheet formulas."""
    unit = await results.owned_unit(unit_id, current_wallet())
    return Response(await results.responses_csv(unit), mimetype="text/csv", headers={
        "Content-Disposition": f'attachment; filename="{unit.id}-responses.csv"', "Cache-Control": "no-store"})
