"""POST /api/track: an impression or click reported by a publisher's page, open to any origin.

201 ``{"status": "recorded", "eventId", "billable"}`` once the event is committed; 200 ``{"status": "duplicate"}``
for the same fingerprint, campaign and type within the hour. Why an event is not billable is recorded, never
returned (see ``adnet.delivery.tracking``).
"""

from __future__ import annotations

from typing import Literal

from quart import Blueprint, Response, request
from quart_rate_limiter import rate_limit
from quart_schema import document_response

from adnet.delivery.commands import MAX_USER_AGENT_LENGTH, TrackEvent
from adnet.delivery.events import Client
from api.http import answer, client_ip, services, with_body
from api.ratelimit import settings_limit
from api.schemas import Schema, refusals

blueprint = Blueprint("api_track", __name__, url_prefix="/api")


class RecordedOut(Schema):
    """The event is stored; ``billable`` says whether it was charged."""

    status: Literal["recorded"]
    event_id: str
    billable: bool


class DuplicateOut(Schema):
    """The same fingerprint reported this campaign's event of this type within the hour: nothing was stored."""

    status: Literal["duplicate"]


@blueprint.post("/track")
@rate_limit(limits=settings_limit("rate_limit_public"))
@with_body(TrackEvent)
@document_response(RecordedOut, 201)
@document_response(DuplicateOut, 200)
@refusals(400, 404, 413, 415, 429)
async def track(data: TrackEvent) -> Response:
    """Record an IMPRESSION or CLICK: 201 once stored (``billable`` says whether it was charged), 200 for a
    duplicate within the hour. Unknown site, campaign or ad: 404."""
    client = Client(ip=client_ip(), user_agent=request.headers.get("User-Agent", "")[:MAX_USER_AGENT_LENGTH])
    result = await services().tracker.track(data, client)
    if result.event_id is None:
        return answer(DuplicateOut(status="duplicate"), 200)
    return answer(RecordedOut(status="recorded", event_id=result.event_id, billable=result.billable), 201)

