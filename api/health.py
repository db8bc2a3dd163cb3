"""GET /healthz: whether the database and the chain answer, for load balancers and operators."""

from quart import Response, jsonify
from quart_schema import hide

from adnet import db
from adnet.app import runtime
from api import ops_blueprint


@ops_blueprint.get("/healthz")
@hide
async def healthz() -> tuple[Response, int]:
    """Report ``ok`` only when the database and the chain both answer; 503 otherwise."""
    try:
        await db.ping()
        database = "ok"
    except Exception as exc:  # any failure is reported, not raised: this endpoint must always answer
        database = f"unavailable: {type(exc).__name__}"
    chain = runtime().extras.get("chain")
    chain_report = await chain.health() if chain is not None else {"status": "not started"}
    healthy = database == "ok" and chain_report.get("status") == "ok"
    report = {"status": "ok" if healthy else "degraded", "database": database, "chain": chain_report}
    return jsonify(report), 200 if healthy else 503
