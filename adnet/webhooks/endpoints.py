"""A wallet's webhook endpoints: registering one (its signing secret shown once), listing them with their recent
deliveries and attempts, resuming one its circuit breaker paused, and removing one (its pending deliveries stop).

A wallet holds at most ``MAX_ENDPOINTS`` endpoints in use, a bound the database keeps: each holds one of the
wallet's slots, unique per wallet, which a registration takes by inserting (a concurrent one that took the same
slot makes it try the next) and a removal frees.

A paused endpoint keeps its pending deliveries, and new events queue for it. Resuming it sends them at once, but
those whose event is older than ``PAUSED_RETENTION``, which are given up (``failed``): a receiver back after a long
outage gets the last week, not everything since.
"""

from __future__ import annotations

import logging
import random
from dataclasses import dataclass
from datetime import datetime, timedelta
from urllib.parse import urlsplit

from pydantic import Field
from tortoise.exceptions import IntegrityError
from tortoise.transactions import in_transaction

from adnet.core.errors import Conflict, Forbidden, Invalid, NotFound
from adnet.core.ids import has_prefix, new_id
from adnet.core.inputs import Command, WebUrl
from adnet.webhooks.models import (
    DeliveryStatus,
    WebhookAttempt,
    WebhookDelivery,
    WebhookEndpoint,
    WebhookEventType,
)

log = logging.getLogger(__name__)

SECRET_BYTES = 32
RECENT_DELIVERIES = 20
MAX_ENDPOINTS = 10
PAUSED_RETENTION = timedelta(days=7)


class NewWebhookEndpoint(Command):
    """An endpoint to register: its URL and the event types it receives."""

    url: WebUrl
    events: list[WebhookEventType] = Field(min_length=1, max_length=len(WebhookEventType))


@dataclass(frozen=True)
class RegisteredEndpoint:
    """An endpoint just registered, with its secret (the only time it is shown)."""

    endpoint: WebhookEndpoint
    secret: str


def events_of(endpoint: WebhookEndpoint) -> list[WebhookEventType]:
    """The endpoint's event types, in the order ``WebhookEventType`` lists them."""
    held = set(endpoint.events.split())
    return [event for event in WebhookEventType if event.value in held]


@dataclass(frozen=True)
class Resumed:
    """An endpoint resumed: how many of its deliveries are sent now, and how many were given up as too old."""

    endpoint: WebhookEndpoint
    scheduled: int
    expired: int


async def add_endpoint(wallet: str, command: NewWebhookEndpoint, now: datetime, rng: random.Random, *,
                       production: bool) -> RegisteredEndpoint:
    """Register an endpoint for ``wallet``; in production its URL must be https (Invalid ``invalid_url``), and
    where it resolves is checked at each delivery. Conflict ``too_many_webhook_endpoints`` when the wallet holds
    ``MAX_ENDPOINTS`` already."""
    if production and urlsplit(command.url).scheme != "https":
        raise Invalid("invalid_url", "url: a webhook endpoint must be an https URL", field="url")
    secret = rng.randbytes(SECRET_BYTES).hex()
    events = " ".join(event.value for event in WebhookEventType if event in command.events)
    held = set(await WebhookEndpoint.filter(wallet=wallet, slot__isnull=False).values_list("slot", flat=True))
    for slot in (slot for slot in range(MAX_ENDPOINTS) if slot not in held):
        try:
            endpoint = await WebhookEndpoint.create(id=new_id("wh"), wallet=wallet, url=command.url, secret=secret,
                                                    created_at=now, events=events, slot=slot)
        except IntegrityError:
            continue  # a concurrent registration took this slot
        log.info("webhook endpoint added endpoint=%s wallet=%s events=%s", endpoint.id, wallet, endpoint.events)
        return RegisteredEndpoint(endpoint, secret)
    raise Conflict("too_many_webhook_endpoints", f"An account holds at most {MAX_ENDPOINTS} webhook endpoints; "
                   "remove one before adding another.", limit=MAX_ENDPOINTS)


async def wallet_endpoints(wallet: str) -> list[WebhookEndpoint]:
    """The wallet's endpoints in use, oldest first."""
    return await WebhookEndpoint.filter(wallet=wallet, deleted_at=None).order_by("created_at", "id")


async def owned_endpoint(wallet: str, endpoint_id: str) -> WebhookEndpoint:
    """The wallet's endpoint in use ``endpoint_id``: NotFound, or Forbidden ``not_owner`` for another wallet's."""
    endpoint = await WebhookEndpoint.get_or_none(id=endpoint_id, deleted_at=None) if has_prefix(
        endpoint_id, "wh") else None
    if endpoint is None:
        raise NotFound.of("webhook endpoint")
    if endpoint.wallet != wallet:
        raise Forbidden("not_owner", "This webhook endpoint belongs to another wallet.", field="endpointId")
    return endpoint


async def remove_endpoint(wallet: str, endpoint_id: str, now: datetime) -> None:
    """Stop sending to the wallet's endpoint: it receives no new event, and its pending deliveries are given up."""
    endpoint = await owned_endpoint(wallet, endpoint_id)
    await WebhookEndpoint.filter(id=endpoint.id, deleted_at=None).update(deleted_at=now, slot=None)
    await WebhookDelivery.filter(endpoint_id=endpoint.id, status=DeliveryStatus.PENDING).update(
        status=DeliveryStatus.FAILED)
    log.info("webhook endpoint removed endpoint=%s wallet=%s", endpoint.id, wallet)


async def resume_endpoint(wallet: str, endpoint_id: str, now: datetime) -> Resumed:
    """Close the circuit breaker of the wallet's paused endpoint: its pending deliveries are due now, those whose
    event is older than ``PAUSED_RETENTION`` given up. An endpoint that is not paused is left as it is."""
    endpoint = await owned_endpoint(wallet, endpoint_id)
    async with in_transaction():
        if not await WebhookEndpoint.filter(id=endpoint.id, paused_at__isnull=False).update(
                paused_at=None, consecutive_failures=0, held_until=None):
            return Resumed(endpoint, scheduled=0, expired=0)
        stale = await WebhookDelivery.filter(endpoint_id=endpoint.id, status=DeliveryStatus.PENDING,
                                             event__created_at__lt=now - PAUSED_RETENTION).values_list("id", flat=True)
        expired = await WebhookDelivery.filter(id__in=list(stale), status=DeliveryStatus.PENDING).update(
            status=DeliveryStatus.FAILED) if stale else 0
        scheduled = await WebhookDelivery.filter(endpoint_id=endpoint.id, status=DeliveryStatus.PENDING).update(
            next_attempt_at=now)
    await endpoint.refresh_from_db()
    log.info("webhook endpoint resumed endpoint=%s wallet=%s scheduled=%d expired=%d", endpoint.id, wallet,
             scheduled, expired)
    return Resumed(endpoint, scheduled=scheduled, expired=expired)


@dataclass(frozen=True)
class DeliveryLog:
    """A delivery (its event loaded) and its attempts, oldest first."""

    delivery: WebhookDelivery
    attempts: list[WebhookAttempt]


async def recent_deliveries(endpoint: WebhookEndpoint, limit: int = RECENT_DELIVERIES) -> list[DeliveryLog]:
    """The endpoint's latest deliveries, newest first, with their attempts."""
    deliveries = await WebhookDelivery.filter(endpoint_id=endpoint.id).order_by("-event__created_at", "-id").limit(
        limit).select_related("event")
    attempts: dict[str, list[WebhookAttempt]] = {delivery.id: [] for delivery in deliveries}
    for attempt in await WebhookAttempt.filter(delivery_id__in=list(attempts)).order_by("number"):
        attempts[attempt.delivery_id].append(attempt)
    return [DeliveryLog(delivery, attempts[delivery.id]) for delivery in deliveries]
