"""Webhooks in the portal (``/portal/webhooks``): the wallet's endpoints with their state, recent deliveries and
every attempt, registering one (its secret shown on the answer, this once), resuming one its circuit breaker
paused, and removing one; the rules are ``adnet.webhooks``'s, the same as ``/api/webhooks``."""

from __future__ import annotations

from typing import Any

from quart import Response, render_template, url_for

from adnet.core.errors import DomainError
from adnet.webhooks import delivery, endpoints
from adnet.webhooks.endpoints import NewWebhookEndpoint
from adnet.webhooks.models import WebhookEventType
from portal.forms import command_of
from portal.pages import account_form, account_page, form_error, page, portal_blueprint, see_other, wants_fragment
from portal.views import Sent, form_view
from web.sessions import current_wallet

blueprint = portal_blueprint("webhooks")


async def webhooks_context(**extra: Any) -> dict[str, Any]:
    """What the page shows: each endpoint with its recent deliveries, the event types one may receive, and the
    bounds the page explains."""
    found = await endpoints.wallet_endpoints(current_wallet())
    return {"endpoints": [(endpoint, await endpoints.recent_deliveries(endpoint)) for endpoint in found],
            "event_types": list(WebhookEventType), "events_of": endpoints.events_of,
            "max_endpoints": endpoints.MAX_ENDPOINTS, "breaker_failures": delivery.BREAKER_FAILURES,
            "retention_days": endpoints.PAUSED_RETENTION.days, **extra}


@blueprint.get("/portal/webhooks")
@account_page
async def webhooks_page() -> tuple[str, int]:
    """The wallet's webhook endpoints, their deliveries and attempts, and the form that registers one."""
    return await page("portal/webhooks.html", "portal/_webhooks.html", **await webhooks_context())


def _endpoint_values(sent: Sent) -> dict[str, Any]:
    return {"url": sent.form.get("url", ""), "events": sent.form.getlist("events")}


async def _endpoint_refused(error: DomainError, sent: Sent) -> Response:
    return await form_error("portal/_webhook_form.html", "#add-webhook", error, "portal/webhooks.html",
                            webhooks_context, values=_endpoint_values(sent))


@blueprint.post("/portal/webhooks")
@account_form
@form_view(_endpoint_refused)
async def add_endpoint(sent: Sent) -> Response:
    """Register an endpoint: the answer shows its secret once; a refusal is shown beside the form."""
    values = _endpoint_values(sent)
    command = command_of(NewWebhookEndpoint, {"url": values["url"], "events": " ".join(values["events"])})
    registered = await endpoints.add_endpoint(sent.wallet, command, sent.now, sent.run.random,
                                              production=sent.run.settings.production)
    body, status = await page("portal/webhooks.html", "portal/_webhooks.html", 201,
                              **await webhooks_context(registered=registered))
    return Response(body, status)


@blueprint.post("/portal/webhooks/<endpoint_id>/resume")
@account_form
@form_view()
async def resume_endpoint(sent: Sent, endpoint_id: str) -> Response:
    """Resume a paused endpoint (its pending deliveries are sent now): htmx gets the list back, a browser without
    JavaScript a 303 to the page."""
    await endpoints.resume_endpoint(sent.wallet, endpoint_id, sent.now)
    return await _endpoints_changed()


@blueprint.post("/portal/webhooks/<endpoint_id>/delete")
@account_form
@form_view()
async def remove_endpoint(sent: Sent, endpoint_id: str) -> Response:
    """Stop sending to an endpoint: htmx gets the list back, a browser without JavaScript a 303 to the page."""
    await endpoints.remove_endpoint(sent.wallet, endpoint_id, sent.now)
    return await _endpoints_changed()


async def _endpoints_changed() -> Response:
    if not wants_fragment():
        return see_other(url_for("portal_webhooks.webhooks_page"))
    return Response(await render_template("portal/_webhooks.html", **await webhooks_context()))
