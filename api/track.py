"""POST /api/track: an impression or click reported by a publisher's page, open to any origin.

201 ``{"status": "recorded", "eventId", "billable"}`` once the event is committed; 200 ``{"status": "duplicate"}``
for the same fingerprint, campaign and type within the hour. Why an event is not billable is recorded, never
returned (see ``adnet.delivery.tracking``).
"""

from __future__ import annotations

from typing import Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator
from quart import Blueprint, Response, jsonify, request
from quart_cors import route_cors
from quart_rate_limiter import rate_limit
from quart_schema import validate_request

from adnet.delivery.events import TrackRequest
from adnet.delivery.models import EventType
from adnet.delivery.tokens import MAX_TOKEN_LENGTH
from api.http import PREFLIGHT_MAX_AGE, client_ip, public, services
from api.ratelimit import settings_limit

blueprint = Blueprint("api_track", __name__, url_prefix="/api")


class TrackBody(BaseModel):
    """An event as the SDK reports it; ``renderTime`` and ``timestamp`` are milliseconds."""

    model_config = ConfigDict(strict=True, extra="forbid")

    type: Literal["IMPRESSION", "CLICK"]
    campaignId: str = Field(min_length=1, max_length=48)
    adId: str = Field(min_length=1, max_length=48)
    siteId: str = Field(min_length=1, max_length=48)
    fingerprint: str = Field(min_length=1, max_length=128, pattern=r"^[\x21-\x7e]+$")
    rendered: bool = False
    viewportVisible: bool = False
    renderTime: float | None = Field(default=None, ge=0, le=3_600_000)
    timestamp: int | None = Field(default=None, ge=0, le=10**14)
    pageUrl: str = Field(default="", max_length=2048)
    userAgent: str | None = Field(default=None, max_length=512)
    trackingToken: str | None = Field(default=None, min_length=1, max_length=MAX_TOKEN_LENGTH)

    @field_validator("pageUrl")
    @classmethod
    def absolute_url(cls, value: str) -> str:
        parts = urlsplit(value)
        if value and (parts.scheme not in ("http", "https") or not parts.netloc):
            raise ValueError("expected an absolute http(s) URL")
        return value

    def to_request(self) -> TrackRequest:
        """The domain's view of this body, with the client's address and (by default) its User-Agent header."""
        return TrackRequest(
            type=EventType(self.type), campaign_id=self.campaignId, ad_id=self.adId, site_id=self.siteId,
            fingerprint=self.fingerprint, rendered=self.rendered, viewport_visible=self.viewportVisible,
            render_time_ms=None if self.renderTime is None else round(self.renderTime),
            timestamp_ms=self.timestamp, page_url=self.pageUrl,
            user_agent=self.userAgent if self.userAgent is not None else request.headers.get("User-Agent", "")[:512],
            tracking_token=self.trackingToken, ip=client_ip(),
        )


@blueprint.post("/track")
@public
@rate_limit(limits=settings_limit("rate_limit_public"))
@route_cors(allow_origin="*", allow_methods=["POST"], allow_headers=["Content-Type"], max_age=PREFLIGHT_MAX_AGE)
@validate_request(TrackBody)
async def track(data: TrackBody) -> tuple[Response, int]:
    """Record an IMPRESSION or CLICK: 201 once stored (``billable`` says whether it was charged), 200 for a
    duplicate within the hour. Unknown site, campaign or ad: 404."""
    result = await services().tracker.track(data.to_request())
    if result.status == "duplicate":
        return jsonify({"status": "duplicate"}), 200
    return jsonify({"status": "recorded", "eventId": result.event_id, "billable": result.billable}), 201

