"""Delivering the outbox: the jobs scheduler's ``webhooks`` job POSTs each due delivery, signed, through the
guarded fetcher (``adnet.accounts.fetching``: no private, loopback or link-local address in production, no
redirect), and logs every attempt.

A worker takes a delivery by a conditional update that counts the attempt and moves ``next_attempt_at`` a lease
ahead, so two workers never send the same attempt, and a worker that dies mid-attempt leaves the delivery to be
taken again once the lease has passed. Each attempt's outcome is one ``WebhookAttempt`` row, unique per attempt
number. A 2xx answer delivers it; anything else (another status, no answer) is retried after an exponential
backoff, ``BASE_DELAY`` doubled each time up to ``MAX_DELAY``, until ``MAX_ATTEMPTS`` attempts have failed.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from adnet.core.ids import new_id
from adnet.webhooks import signing
from adnet.webhooks.models import DeliveryStatus, WebhookAttempt, WebhookDelivery

log = logging.getLogger(__name__)

BASE_DELAY = timedelta(seconds=30)
MAX_DELAY = timedelta(hours=6)
MAX_ATTEMPTS = 10
LEASE = timedelta(seconds=60)
BATCH = 50
MAX_ERROR_TEXT = 300

# POST (url, body, headers) → the answer's status code; raises the failure type when there was no answer.
Post = Callable[[str, bytes, dict[str, str]], Awaitable[int]]


def backoff(attempt: int) -> timedelta:
    """How long after failed attempt number ``attempt`` (1 for the first) the next one is made."""
    return min(BASE_DELAY * 2 ** (attempt - 1), MAX_DELAY)


def body_of(delivery: WebhookDelivery) -> bytes:
    """The JSON a delivery sends: the event's id, type, time and data (its event loaded)."""
    event = delivery.event
    return json.dumps({"id": event.id, "type": event.type.value,
                       "createdAt": event.created_at.isoformat().replace("+00:00", "Z"), "data": event.payload},
                      separators=(",", ":")).encode()


@dataclass
class Deliverer:
    """Sends due deliveries with ``post``; ``failure`` is the exception ``post`` raises when nothing answered."""

    post: Post
    failure: type[Exception]

    async def deliver_due(self, now: datetime, limit: int = BATCH) -> int:
        """Make one attempt of up to ``limit`` due deliveries, oldest first; returns how many were attempted."""
        due = await WebhookDelivery.filter(status=DeliveryStatus.PENDING, next_attempt_at__lte=now).order_by(
            "next_attempt_at", "id").limit(limit).select_related("event", "endpoint")
        attempted = 0
        for delivery in due:
            attempted += await self._attempt(delivery, now)
        return attempted

    async def _attempt(self, delivery: WebhookDelivery, now: datetime) -> int:
        number = delivery.attempts + 1
        taken = await WebhookDelivery.filter(id=delivery.id, status=DeliveryStatus.PENDING,
                                             attempts=delivery.attempts).update(attempts=number,
                                                                                next_attempt_at=now + LEASE)
        if not taken:
            return 0  # another worker took it
        body = body_of(delivery)
        headers = {signing.HEADER: signing.sign(delivery.endpoint.secret, int(now.timestamp()), body),
                   "Adnet-Event-Id": delivery.event.id, "Adnet-Event-Type": delivery.event.type.value,
                   "Adnet-Delivery-Attempt": str(number)}
        status: int | None = None
        error = ""
        try:
            status = await self.post(delivery.endpoint.url, body, headers)
        except self.failure as failure:
            error = str(failure)[:MAX_ERROR_TEXT]
        if status is not None and not 200 <= status < 300:
            error = f"answered {status}"
        await WebhookAttempt.create(id=new_id("wha"), delivery_id=delivery.id, number=number, attempted_at=now,
                                    status_code=status, error=error)
        if not error:
            outcome = {"status": DeliveryStatus.DELIVERED, "delivered_at": now}
        elif number >= MAX_ATTEMPTS:
            outcome = {"status": DeliveryStatus.FAILED}
        else:
            outcome = {"next_attempt_at": now + backoff(number)}
        await WebhookDelivery.filter(id=delivery.id, attempts=number).update(**outcome)
        log.info("webhook attempt delivery=%s event=%s attempt=%d status=%s error=%s", delivery.id,
                 delivery.event.id, number, status, error)
        return 1
