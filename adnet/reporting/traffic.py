"""What tracking kept from billing: recorded events counted by the named reason they were not billed."""

from __future__ import annotations

from datetime import datetime

from tortoise.functions import Count

from adnet.delivery.models import TrackingEvent


async def refusal_counts(*, site_id: str | None = None, since: datetime | None = None) -> dict[str, int]:
    """How many recorded events each reason kept from billing (optionally for one site, since a time)."""
    query = TrackingEvent.filter(billable=False)
    if site_id is not None:
        query = query.filter(site_id=site_id)
    if since is not None:
        query = query.filter(received_at__gte=since)
    rows = await query.annotate(count=Count("id")).group_by("refusal_reason").values_list("refusal_reason", "count")
    return {reason: count for reason, count in rows}
