"""Webhook endpoints under /api/webhooks: register one (its signing secret shown once), list them, resume one its
circuit breaker paused, remove one, and read an endpoint's recent deliveries with every attempt (rules in
adnet.webhooks; delivery, isolation and signatures in docs/webhooks.md).

These routes need the wallet's own session (an API key gets 403 ``session_required``): an endpoint's secret is
what proves adnet's deliveries, so only the wallet itself makes or removes one.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field
from quart import Blueprint, Response
from quart_rate_limiter import rate_limit
from quart_schema import document_response

from adnet.services import Services
from adnet.webhooks import endpoints
from adnet.webhooks.endpoints import DeliveryLog, NewWebhookEndpoint
from adnet.webhooks.models import DeliveryStatus, WebhookEndpoint, WebhookEventType
from api.http import answer, with_body
from api.schemas import Schema, Time, refusals
from api.sessions import require_session
from web.context import injected
from web.limits import ACCOUNT_LIMIT
from web.sessions import current_wallet

blueprint = Blueprint("api_webhooks", __name__, url_prefix="/api")


class EndpointOut(Schema):
    """An endpoint as its wallet sees it (never its secret): ``paused`` once its circuit breaker opened."""

    endpoint_id: str
    url: str
    events: list[WebhookEventType]
    created_at: Time
    state: Literal["active", "paused"] = Field(description="paused: nothing is sent until it is resumed")
    paused_at: Time | None
    consecutive_failures: int = Field(description="failed attempts since its last 2xx answer")


class RegisteredEndpointOut(EndpointOut):
    """An endpoint just registered and its ``secret``, shown this once: check each delivery's
    ``Adnet-Signature`` with it."""

    secret: str


class EndpointsOut(Schema):
    endpoints: list[EndpointOut]


class AttemptOut(Schema):
    """One attempt: when, the endpoint's status code (null when it did not answer) and what failed."""

    number: int
    attempted_at: Time
    status_code: int | None
    error: str


class DeliveryOut(Schema):
    delivery_id: str
    event_id: str
    type: WebhookEventType
    status: DeliveryStatus
    next_attempt_at: Time | None
    delivered_at: Time | None
    attempts: list[AttemptOut]


class DeliveriesOut(Schema):
    endpoint_id: str
    deliveries: list[DeliveryOut]


class ResumedOut(EndpointOut):
    """The endpoint resumed: ``scheduled`` deliveries are sent now, ``expired`` were given up as too old."""

    scheduled: int
    expired: int


class RemovedOut(Schema):
    endpoint_id: str
    removed: bool


def endpoint_out(endpoint: WebhookEndpoint) -> EndpointOut:
    return EndpointOut(endpoint_id=endpoint.id, url=endpoint.url, events=endpoints.events_of(endpoint),
                       created_at=endpoint.created_at, state="active" if endpoint.paused_at is None else "paused",
                       paused_at=endpoint.paused_at, consecutive_failures=endpoint.consecutive_failures)


def delivery_out(log: DeliveryLog) -> DeliveryOut:
    delivery = log.delivery
    return DeliveryOut(delivery_id=delivery.id, event_id=delivery.event.id, type=delivery.event.type,
                       status=delivery.status, delivered_at=delivery.delivered_at,
                       next_attempt_at=delivery.next_attempt_at if delivery.status == DeliveryStatus.PENDING else None,
                       attempts=[AttemptOut.model_validate(attempt) for attempt in log.attempts])


@blueprint.post("/webhooks")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_session
@with_body(NewWebhookEndpoint)
@document_response(RegisteredEndpointOut, 201)
@refusals(400, 409)
async def add_endpoint(data: NewWebhookEndpoint, run: Services, now: datetime) -> Response:
    """Register an endpoint for ``events`` (in production an https URL on a public address, port 443). Its
    ``secret`` is in this answer only. 409 ``too_many_webhook_endpoints`` past 10 endpoints."""
    registered = await endpoints.add_endpoint(current_wallet(), data, now, run.random,
                                              production=run.settings.production)
    return answer(RegisteredEndpointOut(**endpoint_out(registered.endpoint).model_dump(), secret=registered.secret),
                  201)


@blueprint.get("/webhooks")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_session
@document_response(EndpointsOut)
async def list_endpoints() -> Response:
    """The wallet's endpoints in use, oldest first."""
    return answer(EndpointsOut(endpoints=[endpoint_out(endpoint)
                                          for endpoint in await endpoints.wallet_endpoints(current_wallet())]))


@blueprint.get("/webhooks/<endpoint_id>/deliveries")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_session
@document_response(DeliveriesOut)
@refusals(404)
async def deliveries(endpoint_id: str) -> Response:
    """The endpoint's latest 20 deliveries, newest first, each with every attempt."""
    endpoint = await endpoints.owned_endpoint(current_wallet(), endpoint_id)
    return answer(DeliveriesOut(endpoint_id=endpoint.id, deliveries=[
        delivery_out(log) for log in await endpoints.recent_deliveries(endpoint)]))


@blueprint.post("/webhooks/<endpoint_id>/resume")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_session
@document_response(ResumedOut)
@refusals(404)
@injected
async def resume_endpoint(endpoint_id: str, now: datetime) -> Response:
    """Resume an endpoint its circuit breaker paused: its pending deliveries are sent now, those whose event is
    older than 7 days given up. An active endpoint is answered as it is."""
    resumed = await endpoints.resume_endpoint(current_wallet(), endpoint_id, now)
    return answer(ResumedOut(**endpoint_out(resumed.endpoint).model_dump(), scheduled=resumed.scheduled,
                             expired=resumed.expired))


@blueprint.post("/webhooks/<endpoint_id>/delete")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_session
@document_response(RemovedOut)
@refusals(404)
@injected
async def remove_endpoint(endpoint_id: str, now: datetime) -> Response:
    """Stop sending to the endpoint: no new event goes to it, and its pending deliveries are given up."""
    await endpoints.remove_endpoint(current_wallet(), endpoint_id, now)
    return answer(RemovedOut(endpoint_id=endpoint_id, removed=True))
