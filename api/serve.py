"""GET /api/serve: what a publisher's page shows (a banner, a standalone unit, or nothing), open to any origin."""

from __future__ import annotations

from quart import Blueprint, Response, jsonify
from quart_cors import route_cors
from quart_rate_limiter import rate_limit
from quart_schema import validate_querystring

from adnet.delivery import serving
from adnet.delivery.commands import ServeQuery
from api.http import PREFLIGHT_MAX_AGE, public, services
from api.ratelimit import settings_limit

blueprint = Blueprint("api_serve", __name__, url_prefix="/api")


@blueprint.get("/serve")
@public
@rate_limit(limits=settings_limit("rate_limit_public"))
@route_cors(allow_origin="*", allow_methods=["GET"], allow_headers=["Content-Type"], max_age=PREFLIGHT_MAX_AGE)
@validate_querystring(ServeQuery)
async def serve(query_args: ServeQuery) -> Response:
    """A banner (``kind`` BANNER with ``ad``, ``bannerClickActive``, ``attachedTasks``), a standalone unit
    (``kind`` POLL, FEEDBACK or SURVEY with ``task``), or ``{"kind": "NONE"}``. Unknown site: 404."""
    return jsonify(await serving.serve(services().serving, query_args))
