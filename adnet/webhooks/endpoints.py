"""A wallet's webhook endpoints: registering one (its signing secret shown once), listing them with their recent
deliveries and attempts, and removing one (its pending deliveries stop)."""

from __future__ import annotations

import logging
import random
from dataclasses import dataclass
from datetime import datetime
from urllib.parse import urlsplit

from pydantic import Field

from adnet.core.errors import Forbidden, Invalid, NotFound
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


async def add_endpoint(wallet: str, command: NewWebhookEndpoint, now: datetime, rng: random.Random, *,
                       production: bool) -> RegisteredEndpoint:
    """Register an endpoint for ``wallet``; in production its URL must be https (Invalid ``invalid_url``), and
    where it resolves is checked at each delivery."""
    if production and urlsplit(command.url).scheme != "https":
        raise Invalid("invalid_url", "url: a webhook endpoint must be an https URL", field="url")
    secret = rng.randbytes(SECRET_BYTES).hex()
    endpoint = await WebhookEndpoint.create(
        id=new_id("wh"), wallet=wallet, url=command.url, secret=secret, created_at=now,
        events=" ".join(event.value for event in WebhookEventType if event in command.events))
    log.info("webhook endpoint added endpoint=%s wallet=%s events=%s", endpoint.id, wallet, endpoint.events)
    return RegisteredEndpoint(endpoint, secret)


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
    await WebhookEndpoint.filter(id=endpoint.id, deleted_at=None).update(deleted_at=now)
    await WebhookDelivery.filter(endpoint_id=endpoint.id, status=DeliveryStatus.PENDING).update(
        status=DeliveryStatus.FAILED)
    log.info("webhook endpoint removed endpoint=%s wallet=%s", endpoint.id, wallet)


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
        attempts[attempt.delivery_id].append(attempt)  # type: ignore[attr-defined]
    return [DeliveryLog(delivery, attempts[delivery.id]) for delivery in deliveries]
