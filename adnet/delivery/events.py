"""An event on its way through tracking: the request as validated, what tracking decided about it before the
batch, and what the batch made of it."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from adnet.delivery.models import EventType
from adnet.delivery.tokens import TokenClaims


@dataclass(frozen=True)
class TrackRequest:
    """A validated ``POST /api/track`` body plus the client's address."""

    type: EventType
    campaign_id: str
    ad_id: str
    site_id: str
    fingerprint: str
    rendered: bool
    viewport_visible: bool
    render_time_ms: int | None
    timestamp_ms: int | None
    page_url: str
    user_agent: str
    tracking_token: str | None
    ip: str


@dataclass(frozen=True)
class TrackResult:
    """``recorded`` (with the event id and whether it was billed) or ``duplicate``."""

    status: str
    event_id: str | None = None
    billable: bool = False
    reason: str | None = None


@dataclass
class PendingEvent:
    """An event on its way into a batch: everything decided so far, and its price should it be billed."""

    request: TrackRequest
    received_at: datetime
    price: int
    reason: str | None
    claims: TokenClaims | None
    token_ref: str | None
