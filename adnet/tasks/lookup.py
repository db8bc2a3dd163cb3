"""Finding a task a viewer may act on now: known, of the expected kind, active, and inside its dates and its
campaign's."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime

from tortoise import connections

from adnet.db import placeholders
from adnet.errors import bad_request, conflict, not_found
from adnet.ids import has_prefix
from adnet.models import Campaign, CampaignStatus, Task, TaskKind

CTA_KINDS = frozenset({TaskKind.VISIT_URL, TaskKind.SIGN_MESSAGE, TaskKind.ONCHAIN_EVENT, TaskKind.QUIZ})


async def live_task(task_id: str, now: datetime, *, kinds: Collection[TaskKind] = CTA_KINDS) -> Task:
    """The task ``task_id``, if it can be done at ``now``.

    Raises ApiError: 404 for an unknown task, 400 ``invalid_field`` for a task of another kind (a poll is answered
    at /api/interactions), 409 ``task_inactive`` (switched off, or its campaign is not running), ``task_not_started``
    or ``task_ended``."""
    task = await Task.get_or_none(id=task_id) if has_prefix(task_id, "task") else None
    if task is None:
        raise not_found("task")
    if task.kind not in kinds:
        raise bad_request("invalid_field", f"This is a {task.kind.value} task, which is not done here.",
                          field="taskId")
    campaign = await _campaign_window(task.campaign_id) if task.campaign_id is not None else None  # type: ignore[attr-defined]
    if not task.active or (campaign is not None and campaign.status != CampaignStatus.APPROVED):
        raise conflict("task_inactive", "This task is not active.")
    if task.starts_at > now or (campaign is not None and campaign.starts_at > now):
        raise conflict("task_not_started", "This task has not started yet.")
    if _ended(task.ends_at, now) or (campaign is not None and _ended(campaign.ends_at, now)):
        raise conflict("task_ended", "This task has ended.")
    return task


@dataclass(frozen=True)
class _CampaignWindow:
    status: CampaignStatus
    starts_at: datetime
    ends_at: datetime | None


async def _campaign_window(campaign_id: str) -> _CampaignWindow:
    """The status and dates of a task's campaign: three columns in one plain read (loading the whole campaign
    through the ORM cost more than the rest of a completion's reads together)."""
    connection = connections.get("default")
    sql = f"SELECT status, starts_at, ends_at FROM campaign WHERE id = {placeholders(connection, 1)[0]}"  # noqa: S608
    row = (await connection.execute_query_dict(sql, [campaign_id]))[0]
    field = Campaign._meta.fields_map
    return _CampaignWindow(status=CampaignStatus(row["status"]),
                           starts_at=field["starts_at"].to_python_value(row["starts_at"]),
                           ends_at=field["ends_at"].to_python_value(row["ends_at"]))


def _ended(ends_at: datetime | None, now: datetime) -> bool:
    return ends_at is not None and ends_at <= now

