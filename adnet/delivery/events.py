"""An event on its way through tracking: who reported it, what tracking decided about it before the batch, and
what the batch made of it."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from adnet.delivery.commands import TrackEvent
from adnet.delivery.tokens import TokenClaims


@dataclass(frozen=True)
class Client:
    """Who reported an event: the client's address and the User-Agent header it sent."""

    ip: str
    user_agent: str


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

    reported: TrackEvent
    client: Client
    received_at: datetime
    price: int
    reason: str | None
    claims: TokenClaims | None
    token_ref: str | None

    @property
    def user_agent(self) -> str:
        """The User-Agent the event is recorded with: the one the embed reported, else the request's header."""
        return self.reported.user_agent if self.reported.user_agent is not None else self.client.user_agent
