"""GET /api/serve: what a publisher's page shows (a banner, a standalone unit, or nothing), open to any origin."""

from __future__ import annotations

from pydantic import BaseModel, Field
from quart import Blueprint, Response, jsonify, request
from quart_cors import route_cors
from quart_rate_limiter import rate_limit
from quart_schema import document_querystring

from adnet.delivery import serving
from api.http import PREFLIGHT_MAX_AGE, public, services
from api.ratelimit import settings_limit

blueprint = Blueprint("api_serve", __name__, url_prefix="/api")


class ServeQuery(BaseModel):
    """The query string of GET /api/serve (checked by ``adnet.delivery.serving.parse_serve_query``)."""

    siteId: str = Field(description="site asking for content")
    kind: str = Field(default="BANNER", description="comma-separated BANNER, POLL, FEEDBACK, SURVEY")
    size: str | None = Field(default=None, description="WIDTHxHEIGHT, such as 300x250")
    placement: str | None = Field(default=None, max_length=64, description="free-form label for analytics")
    wallet: str | None = Field(default=None, description="binds the tracking token to this wallet")
    attached: str | None = Field(default=None, description="1: include up to two attached CTA tasks")


@blueprint.get("/serve")
@public
@rate_limit(limits=settings_limit("rate_limit_public"))
@document_querystring(ServeQuery)
@route_cors(allow_origin="*", allow_methods=["GET"], allow_headers=["Content-Type"], max_age=PREFLIGHT_MAX_AGE)
async def serve() -> Response:
    """A banner (``kind`` BANNER with ``ad``, ``bannerClickActive``, ``attachedTasks``), a standalone unit
    (``kind`` POLL, FEEDBACK or SURVEY with ``task``), or ``{"kind": "NONE"}``. Unknown site: 404."""
    query = serving.parse_serve_query(request.args)
    return jsonify(await serving.serve(services().serving, query))
