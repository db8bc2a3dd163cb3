"""POST /api/track: an impression or click reported by a publisher's page, open to any origin.

201 ``{"status": "recorded", "eventId", "billable"}`` once the event is committed; 200 ``{"status": "duplicate"}``
for the same fingerprint, campaign and type within the hour. Why an event is not billable is recorded, never
returned (see ``adnet.delivery.tracking``).
"""

from __future__ import annotations

from quart import Blueprint, Response, jsonify, request
from quart_cors import route_cors
from quart_rate_limiter import rate_limit
from quart_schema import validate_request

from adnet.delivery.commands import MAX_USER_AGENT_LENGTH, TrackEvent
from adnet.delivery.events import Client
from api.http import PREFLIGHT_MAX_AGE, client_ip, public, services
from api.ratelimit import settings_limit

blueprint = Blueprint("api_track", __name__, url_prefix="/api")


@blueprint.post("/track")
@public
@rate_limit(limits=settings_limit("rate_limit_public"))
@route_cors(allow_origin="*", allow_methods=["POST"], allow_headers=["Content-Type"], max_age=PREFLIGHT_MAX_AGE)
@validate_request(TrackEvent)
async def track(data: TrackEvent) -> tuple[Response, int]:
    """Record an IMPRESSION or CLICK: 201 once stored (``billable`` says whether it was charged), 200 for a
    duplicate within the hour. Unknown site, campaign or ad: 404."""
    client = Client(ip=client_ip(), user_agent=request.headers.get("User-Agent", "")[:MAX_USER_AGENT_LENGTH])
    result = await services().tracker.track(data, client)
    if result.status == "duplicate":
        return jsonify({"status": "duplicate"}), 200
    return jsonify({"status": "recorded", "eventId": result.event_id, "billable": result.billable}), 201

