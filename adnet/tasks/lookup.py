"""Finding a task a viewer may act on now: known, of the expected kind, active, and inside its dates and its
campaign's."""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime

from adnet.errors import bad_request, conflict, not_found
from adnet.ids import has_prefix
from adnet.models import CampaignStatus, Task, TaskKind

CTA_KINDS = frozenset({TaskKind.VISIT_URL, TaskKind.SIGN_MESSAGE, TaskKind.ONCHAIN_EVENT, TaskKind.QUIZ})


async def live_task(task_id: str, now: datetime, *, kinds: Collection[TaskKind] = CTA_KINDS) -> Task:
    """The task ``task_id`` with its campaign loaded, if it can be done at ``now``.

    Raises ApiError: 404 for an unknown task, 400 ``invalid_field`` for a task of another kind (a poll is answered
    at /api/interactions), 409 ``task_inactive`` (switched off, or its campaign is not running), ``task_not_started``
    or ``task_ended``."""
    task = await Task.get_or_none(id=task_id).select_related("campaign") if has_prefix(task_id, "task") else None
    if task is None:
        raise not_found("task")
    if task.kind not in kinds:
        raise bad_request("invalid_field", f"This is a {task.kind.value} task, which is not done here.",
                          field="taskId")
    campaign = task.campaign
    if not task.active or (campaign is not None and campaign.status != CampaignStatus.APPROVED):
        raise conflict("task_inactive", "This task is not active.")
    if task.starts_at > now or (campaign is not None and campaign.starts_at > now):
        raise conflict("task_not_started", "This task has not started yet.")
    if _ended(task.ends_at, now) or (campaign is not None and _ended(campaign.ends_at, now)):
        raise conflict("task_ended", "This task has ended.")
    return task


def _ended(ends_at: datetime | None, now: datetime) -> bool:
    return ends_at is not None and ends_at <= now

