"""An operator's decision on one task of a campaign in review (``adnet.campaigns.review`` decides the campaign and
its creatives): a task rejected with a reason its advertiser reads is switched off as an ended task is, so nothing
serves it or pays for it (serving's index and task lookup read ``active``), and its G$ pool returns to the
advertiser, and the advertiser's webhooks hear of it (``task.rejected``); the campaign is then decided with its
other tasks. A task has no approval of its own: it is approved with its campaign."""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any

from tortoise.transactions import in_transaction

from adnet.campaigns.commands import Rejection
from adnet.campaigns.lifecycle import release, tell_advertiser
from adnet.campaigns.models import Campaign, CampaignStatus
from adnet.core import changes
from adnet.core.amounts import to_decimal_string
from adnet.core.errors import Conflict, NotFound
from adnet.core.ids import has_prefix
from adnet.money import ledger
from adnet.tasks.models import Task
from adnet.webhooks.models import WebhookEventType

log = logging.getLogger(__name__)


async def reject_task(operator: str, task_id: Any, rejection: Rejection, now: datetime) -> Task:
    """Reject one task of a campaign in review with a reason: switched off, its pool returned and the advertiser's
    ``task.rejected`` event written, in one transaction. Conflict ``invalid_transition`` unless the task is active
    on a campaign in review."""
    task = await Task.get_or_none(id=task_id) if has_prefix(task_id, "task") else None
    if task is None:
        raise NotFound.of("task")
    async with in_transaction():
        decided = await Task.filter(id=task.id, active=True, campaign__status=CampaignStatus.REVIEW).update(
            active=False, rejection_reason=rejection.reason)
        if not decided:
            raise Conflict("invalid_transition", "Only an active task of a campaign in review is rejected on its own.")
        returned = await release(ledger.task_pool(task.id), task.advertiser_id, now)
        campaign = await Campaign.get(id=task.campaign_id)  # a task of a campaign in review has one
        await tell_advertiser(campaign, WebhookEventType.TASK_REJECTED, now, task_id=task.id,
                              kind=task.kind.value, title=task.title, reason=rejection.reason,
                              returned=to_decimal_string(returned))
    await task.refresh_from_db()
    changes.announce(task.id)
    log.info("task rejected task=%s returned=%d operator=%s", task.id, returned, operator)
    return task
