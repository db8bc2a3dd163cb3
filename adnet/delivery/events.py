"""An event on its way through tracking: who reported it, what tracking decided about it before the batch, and
what the batch made of it."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from adnet.delivery.clients import Client
from adnet.delivery.commands import TrackEvent
from adnet.delivery.tokens import TokenClaims


@dataclass(frozen=True)
class TrackResult:
    """``recorded`` (with the event id and whether it was billed) or ``duplicate``."""

    status: str
    event_id: str | None = None
    billable: bool = False
    reason: str | None = None


@dataclass
class PendingEvent:
    """An event on its way into a batch: everything decided so far, its price should it be billed, and where and on
    what kind of device its client is (for the reports)."""

    reported: TrackEvent
    client: Client
    received_at: datetime
    price: int
    reason: str | None
    claims: TokenClaims | None
    token_ref: str | None
    country: str = ""
    device: str = ""
