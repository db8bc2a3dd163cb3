"""Finding a task a viewer may act on now: known, of the expected kind, active, and inside its dates and its
campaign's.

Every completion, visit and message starts here, so the task and its campaign's window are read with one plain
statement: through the ORM (query building, the whole campaign row) this read cost more than the rest of a
completion's reads together. The row is read every time, so a task or campaign switched off or ended is seen at
once; what is made of it (the Task, its dates, its parsed config) is kept per task while the row read is the same.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime
from functools import cached_property
from typing import Any

from adnet.campaigns.models import Campaign, CampaignStatus
from adnet.core.errors import Conflict, Invalid, NotFound
from adnet.core.ids import has_prefix
from adnet.db import sql
from adnet.tasks.config import parse_config
from adnet.tasks.models import Task, TaskKind

CTA_KINDS = frozenset({TaskKind.VISIT_URL, TaskKind.SIGN_MESSAGE, TaskKind.ONCHAIN_EVENT, TaskKind.QUIZ})
# Tasks whose row is kept made up at once, at most (the oldest go first).
MAX_CACHED_TASKS = 1024

# What a statement that reads a task for ``live_from_row`` selects, and from where (the caller adds its WHERE).
TASK_COLUMNS = ("task.*, campaign.status AS campaign_status, campaign.starts_at AS campaign_starts_at, "
                "campaign.ends_at AS campaign_ends_at")
TASK_TABLES = "task LEFT JOIN campaign ON campaign.id = task.campaign_id"


async def live_task(task_id: str, now: datetime, *, kinds: Collection[TaskKind] = CTA_KINDS) -> Task:
    """The task ``task_id``, if it can be done at ``now``.

    Raises NotFound for an unknown task, Invalid ``invalid_field`` for a task of another kind (a poll is answered
    at /api/interactions), Conflict ``task_inactive`` (switched off, or its campaign is not running),
    ``task_not_started`` or ``task_ended``."""
    return (await live_task_and_config(task_id, now, kinds=kinds))[0]


async def live_task_and_config(task_id: str, now: datetime, *,
                               kinds: Collection[TaskKind] = CTA_KINDS) -> tuple[Task, Any]:
    """``live_task`` with the task's parsed config (``adnet.tasks.config.parse_config``). The Task is shared by
    the requests that read the same row: read it, never change it."""
    row = None
    if has_prefix(task_id, "task"):
        rows = await sql.fetch(f"SELECT {TASK_COLUMNS} FROM {TASK_TABLES} WHERE task.id = :task_id",  # noqa: S608
                               task_id=task_id)
        row = rows[0] if rows else None
    return live_from_row(task_id, row, now, kinds=kinds)


def live_from_row(task_id: str, row: dict[str, Any] | None, now: datetime, *,
                  kinds: Collection[TaskKind] = CTA_KINDS) -> tuple[Task, Any]:
    """``live_task_and_config`` of a row the caller read with ``TASK_COLUMNS`` (None: no such task), for a caller
    that reads more in the same statement. The row is made into a Task, campaign window and config only when it
    differs from the last one read of the task."""
    if row is None:
        raise NotFound.of("task")
    found = _made_of(task_id, row)
    task, campaign = found.task, found.campaign
    if task.kind not in kinds:
        raise Invalid("invalid_field", f"This is a {task.kind.value} task, which is not done here.",
                      field="taskId")
    if not task.active or (campaign is not None and campaign.status != CampaignStatus.APPROVED):
        raise Conflict("task_inactive", "This task is not active.")
    if task.starts_at > now or (campaign is not None and campaign.starts_at > now):
        raise Conflict("task_not_started", "This task has not started yet.")
    if _ended(task.ends_at, now) or (campaign is not None and _ended(campaign.ends_at, now)):
        raise Conflict("task_ended", "This task has ended.")
    return task, found.config


@dataclass(frozen=True)
class _CampaignWindow:
    status: CampaignStatus
    starts_at: datetime
    ends_at: datetime | None


class _Found:
    """A task row with its campaign's window, as read at once, made up into what the callers use."""

    def __init__(self, row: dict[str, Any]) -> None:
        self.task = sql.loaded(Task, row)
        self.campaign: _CampaignWindow | None = None
        if row["campaign_status"] is not None:
            field = Campaign._meta.fields_map
            self.campaign = _CampaignWindow(status=CampaignStatus(row["campaign_status"]),
                                            starts_at=field["starts_at"].to_python_value(row["campaign_starts_at"]),
                                            ends_at=field["ends_at"].to_python_value(row["campaign_ends_at"]))

    @cached_property
    def config(self) -> Any:
        return parse_config(self.task.kind, self.task.config)


# task id -> (the row's values as read, what was made of them)
_made: dict[str, tuple[tuple[Any, ...], _Found]] = {}


def _made_of(task_id: str, row: dict[str, Any]) -> _Found:
    values = tuple(row.values())
    cached = _made.get(task_id)
    if cached is not None and cached[0] == values:
        return cached[1]
    found = _Found(row)
    if len(_made) >= MAX_CACHED_TASKS:
        del _made[next(iter(_made))]
    _made[task_id] = (values, found)
    return found


def _ended(ends_at: datetime | None, now: datetime) -> bool:
    return ends_at is not None and ends_at <= now

