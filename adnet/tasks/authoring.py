"""Creating and editing an advertiser's CTA tasks (attached to a campaign's banner) and standalone units (poll,
feedback, survey), with their settings and rewards.

Every task and unit belongs to one of the advertiser's campaigns, and so to its review: the serving index and task
completion only use tasks of approved campaigns, so nothing an advertiser writes reaches a viewer before an
operator has seen it. For the same reason a task's content (kind, title, description, config, dates) can change only
while its campaign is unreviewed (draft or rejected); its rewards and limits, which are money and not content, can
change until the campaign ends. Configs are validated by the schema of their kind (``adnet.tasks.config``) and
stored normalised, so a stored config is always valid. A task runs inside its campaign's dates.

Funding a task moves G$ from the advertiser's unallocated balance into its pool, which pays its rewards first (a
``task_allocation`` booking the ledger refuses beyond what the advertiser holds). Ending a task switches it off and
returns its pool to the advertiser's unallocated balance.
"""

from __future__ import annotations

import logging
from datetime import datetime
from decimal import Decimal
from typing import Any

from tortoise.exceptions import IntegrityError
from tortoise.transactions import in_transaction

from adnet.accounts.members import require_role, role_in
from adnet.accounts.models import MemberRole
from adnet.campaigns import campaigns
from adnet.campaigns.lifecycle import release
from adnet.campaigns.models import Campaign, CampaignStatus
from adnet.core import changes
from adnet.core.errors import Conflict, Invalid, NotFound
from adnet.core.ids import has_prefix, new_id
from adnet.money import ledger
from adnet.money.holders import advertiser_holder
from adnet.money.withdrawals import insufficient
from adnet.tasks.commands import NewTask, TaskChanges
from adnet.tasks.config import checked_config
from adnet.tasks.lookup import CTA_KINDS
from adnet.tasks.models import Task, TaskKind, TaskSurface

log = logging.getLogger(__name__)

TASK_ALLOCATION_KIND = "task_allocation"


def _stored(values: dict[str, Any], kind: TaskKind) -> dict[str, Any]:
    """Task fields as the model stores them: the config checked by its kind's schema and normalised, the surface
    its kind's, the reward in its decimal column."""
    if "config" in values:
        values["config"] = checked_config(kind, values["config"])
    if "kind" in values:
        values["surface"] = TaskSurface.ATTACHED if kind in CTA_KINDS else TaskSurface.STANDALONE
    if "reward_gs" in values:
        values["reward_gs"] = Decimal(values["reward_gs"])
    return values


def _check_window(values: dict[str, Any], campaign: Campaign, task: Task | None) -> None:
    """A task runs inside its campaign's dates, and ends after it starts."""
    starts_at = values.get("starts_at", task.starts_at if task else campaign.starts_at)
    ends_at = values["ends_at"] if "ends_at" in values else (task.ends_at if task else campaign.ends_at)
    if starts_at < campaign.starts_at:
        raise Invalid("invalid_dates", "startsAt: not before the campaign starts.", field="startsAt")
    if campaign.ends_at is not None and (ends_at is None or ends_at > campaign.ends_at):
        raise Invalid("invalid_dates", "endsAt: not after the campaign ends.", field="endsAt")
    if ends_at is not None and ends_at <= starts_at:
        raise Invalid("invalid_dates", "endsAt must be after startsAt.", field="endsAt")


def _check_content_editable(campaign: Campaign) -> None:
    if campaign.status not in campaigns.UNREVIEWED:
        raise Conflict("campaign_locked", f"Tasks of a campaign in {campaign.status.value} cannot be added or "
                                          "changed; only their rewards and limits can.",
                       currentStatus=campaign.status.value)


async def create_task(wallet: str, campaign_id: str, task: NewTask, now: datetime) -> Task:
    """A new task or unit of the wallet's unreviewed campaign (Conflict ``campaign_locked`` otherwise). Its dates
    default to the campaign's. Invalid ``invalid_config`` when the config does not fit its kind."""
    campaign = await campaigns.owned_campaign(wallet, campaign_id)
    values = _stored({name: value for name, value in task.model_dump().items() if value is not None}, task.kind)
    _check_content_editable(campaign)
    _check_window(values, campaign, None)
    values.setdefault("starts_at", campaign.starts_at)
    values.setdefault("ends_at", campaign.ends_at)
    try:
        created = await Task.create(id=new_id("task"), advertiser_id=campaign.advertiser.id, campaign=campaign,
                                    created_at=now, **values)
    except IntegrityError:  # the draft was deleted meanwhile (adnet.tasks.drafts)
        raise NotFound.of("campaign") from None
    log.info("task created task=%s kind=%s campaign=%s", created.id, created.kind.value, campaign.id)
    return created


async def owned_task(wallet: str, task_id: Any, need: MemberRole = MemberRole.MANAGER) -> Task:
    """The task ``task_id`` (with its campaign) when ``wallet`` owns its advertiser account or holds at least
    ``need`` on it: NotFound / Forbidden ``not_owner`` or ``insufficient_role``."""
    if not isinstance(task_id, str) or not has_prefix(task_id, "task"):
        raise NotFound.of("task")
    task = await Task.get_or_none(id=task_id).select_related("advertiser", "campaign")
    if task is None:
        raise NotFound.of("task")
    require_role(await role_in(task.advertiser, wallet), need, "task")
    return task


async def edit_task(wallet: str, task_id: str, edit: TaskChanges) -> Task:
    """Change a task: content while its campaign is unreviewed, rewards and limits until it ends (Conflict
    ``campaign_locked`` / ``task_ended``). The kind stays unless the config changes with it."""
    task = await owned_task(wallet, task_id)
    values = _stored(edit.changed(), edit.kind or task.kind)
    campaign: Campaign | None = task.campaign
    if campaign is None:
        raise Conflict("campaign_locked", "This task belongs to no campaign and cannot be edited here.")
    if campaign.status == CampaignStatus.ENDED or not task.active:
        raise Conflict("task_ended", "This task has ended.")
    if set(values) & TaskChanges.CONTENT:
        _check_content_editable(campaign)
        _check_window(values, campaign, task)
    await Task.filter(id=task.id).update(**values)
    await task.refresh_from_db()
    changes.announce(task.id)
    log.info("task edited task=%s fields=%s", task.id, ",".join(sorted(edit.model_fields_set)))
    return task


async def end_task(wallet: str, task_id: str, now: datetime) -> int:
    """Switch a task off for good and return its G$ pool to the advertiser; returns the amount returned.
    Conflict ``task_ended`` when it was off already."""
    task = await owned_task(wallet, task_id)
    if not await Task.filter(id=task.id, active=True).update(active=False):
        raise Conflict("task_ended", "This task has ended.")
    changes.announce(task.id)
    returned = await release(ledger.task_pool(task.id), task.advertiser.id, now)
    log.info("task ended task=%s returned=%d", task.id, returned)
    return returned


async def allocate_to_task(wallet: str, task_id: str, amount: int, now: datetime) -> int:
    """Move ``amount`` from the advertiser's unallocated balance into the task's G$ pool (what its rewards are paid
    from first); returns the pool. Invalid ``insufficient_balance``, Conflict ``task_ended``."""
    task = await owned_task(wallet, task_id)
    if not task.active or (task.campaign is not None and task.campaign.status == CampaignStatus.ENDED):
        raise Conflict("task_ended", "This task has ended.")
    try:
        async with in_transaction():
            # The task's row is locked while its pool is funded, so a deletion (adnet.tasks.drafts) waits for the
            # allocation and returns its money, or the allocation waits for the deletion and finds no task.
            if await Task.select_for_update().get_or_none(id=task.id) is None:
                raise NotFound.of("task")
            await ledger.book(TASK_ALLOCATION_KIND, new_id("ltx"),
                              [(ledger.advertiser(task.advertiser.id), -amount), (ledger.task_pool(task.id), amount)],
                              now=now, memo=f"allocated to task {task.id}")
    except ledger.InsufficientFunds as exc:
        raise insufficient(advertiser_holder(task.advertiser), exc) from None
    log.info("task funded task=%s advertiser=%s amount=%d", task.id, task.advertiser.id, amount)
    return await ledger.balance(ledger.task_pool(task.id))
