"""Writing an event to the outbox: called inside the transaction of what it reports, so the event exists exactly
when the change does (a rollback takes both away, a commit keeps both), and nothing is lost if the process dies
before delivery: the delivery job finds the pending rows after any restart.
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any

from pydantic.alias_generators import to_camel

from adnet.core.ids import new_id, new_ordered_id
from adnet.webhooks.models import WebhookDelivery, WebhookEndpoint, WebhookEvent, WebhookEventType

log = logging.getLogger(__name__)


async def record(wallet: str, event_type: WebhookEventType, data: dict[str, Any], now: datetime) -> None:
    """Write the event for ``wallet``'s account and one pending delivery to each of its endpoints that takes this
    type. Call it inside the transaction of the change it reports; it writes nothing when no endpoint listens.
    ``data`` is named in snake_case (``site_id``) and written as the body's ``data`` names it (``siteId``)."""
    endpoints = [endpoint for endpoint in await WebhookEndpoint.filter(wallet=wallet, deleted_at=None)
                 if event_type.value in endpoint.events.split()]
    if not endpoints:
        return
    event = await WebhookEvent.create(id=new_ordered_id("whe"), wallet=wallet, type=event_type,
                                      payload={to_camel(key): value for key, value in data.items()},
                                      created_at=now)
    await WebhookDelivery.bulk_create([
        WebhookDelivery(id=new_id("whd"), event=event, endpoint=endpoint, next_attempt_at=now)
        for endpoint in endpoints])
    log.info("webhook event recorded event=%s type=%s wallet=%s endpoints=%d", event.id, event_type.value, wallet,
             len(endpoints))
