"""GET /healthz: whether the database and the chain answer, for load balancers and operators."""

from quart import Blueprint, Response, current_app, jsonify
from quart_schema import hide

from adnet.db import config as database

blueprint = Blueprint("api_health", __name__)


@blueprint.get("/healthz")
@hide
async def healthz() -> tuple[Response, int]:
    """Report ``ok`` only when the database and the chain both answer; 503 otherwise."""
    try:
        await database.ping()
        database_report = "ok"
    except Exception as exc:  # any failure is reported, not raised: this endpoint must always answer
        database_report = f"unavailable: {type(exc).__name__}"
    running = current_app.extensions.get("adnet")  # not before the app has started
    chain_report = await running.chain.health() if running is not None else {"status": "not started"}
    healthy = database_report == "ok" and chain_report.get("status") == "ok"
    report = {"status": "ok" if healthy else "degraded", "database": database_report, "chain": chain_report}
    return jsonify(report), 200 if healthy else 503
