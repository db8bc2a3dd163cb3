"""GET /readyz: whether a load balancer should send this host traffic; GET /healthz: whether this process can do
all its work, with every reason it cannot, for operators and monitors (``adnet.jobs.health``)."""

from quart import Blueprint, Response, current_app, jsonify
from quart_schema import document_response

from api.schemas import HealthOut, ReadyOut

blueprint = Blueprint("api_health", __name__)


@blueprint.get("/healthz")
@document_response(HealthOut, 200)
@document_response(HealthOut, 503)
async def healthz() -> tuple[Response, int]:
    """200 ``{"status": "ok", "reasons": [], "chain": {...}}``, or 503 with ``"status": "degraded"`` and each reason
    (``database_unreachable``, ``chain_unreachable``, ``wrong_chain``, ``signer_unauthorized``, ``vault_short``,
    those of ``/readyz``, and ``draining`` from SIGTERM until the process stops, while every answer closes its
    connection). ``redis_unreachable`` makes the status ``degraded`` but leaves the answer 200: the process works
    without Redis. Only the database is asked now; the chain's figures are those of its last check."""
    running = current_app.extensions.get("adnet")  # not before the app has started
    if running is None:
        return jsonify({"status": "degraded", "reasons": ["not_started"]}), 503
    report = await running.health.report()
    chain = {**report.chain.node, "signer": running.chain.signer.address,
             "checkedAt": report.chain.checked_at.isoformat()}
    body = {"status": "degraded" if report.reasons else "ok", "reasons": report.reasons, "chain": chain}
    return jsonify(body), 200 if report.ok else 503


@blueprint.get("/readyz")
@document_response(ReadyOut, 200)
@document_response(ReadyOut, 503)
async def readyz() -> tuple[Response, int]:
    """200 ``{"status": "ready", "reasons": []}`` when this host can serve and record what it serves: its database
    answers, or its tracking spool can keep events until it does. 503 ``{"status": "unready", "reasons": [...]}``
    otherwise (``database_unreachable``, ``disk_unwritable``, ``spool_full``, ``tracking_failing``, ``draining``).
    The chain and Redis never make it 503: the probe for a load balancer."""
    running = current_app.extensions.get("adnet")  # not before the app has started
    reasons = ["not_started"] if running is None else await running.health.readiness()
    return jsonify({"status": "unready" if reasons else "ready", "reasons": reasons}), 503 if reasons else 200
