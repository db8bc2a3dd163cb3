"""An event on its way through tracking: who reported it, what tracking decided about it before the batch, and
what the batch made of it."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from adnet.core.ids import new_ordered_id
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
    """An event on its way into a batch: everything decided so far, its price should it be billed, where and on
    what kind of device its client is (for the reports), whether its page's consent signals limit it
    (``adnet.delivery.consent``: then its token's viewer is dropped and no viewer id is stored), and the id it is
    stored under if it is recorded. The id is made when the event arrives, so an event kept in the spool
    (``adnet.delivery.spool``) is answered with the id it is stored under later, and an event written twice (a
    replay) is recognised by it."""

    reported: TrackEvent
    client: Client
    received_at: datetime
    price: int
    reason: str | None
    claims: TokenClaims | None
    token_ref: str | None
    country: str = ""
    device: str = ""
    consent_limited: bool = False
    event_id: str = field(default_factory=lambda: new_ordered_id("ev"))
