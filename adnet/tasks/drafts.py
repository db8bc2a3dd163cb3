"""Deleting what was never served, and duplicating a campaign as a new draft.

Only an unreviewed campaign (draft or rejected) has never served: serving and task completion use approved
campaigns only, and a campaign never returns from approved to review (an edited creative goes back to review
alone). So a campaign can be deleted while it is unreviewed, and so can a creative or a task of it: exactly when
their content may change. Once a campaign has been approved, what it showed is referred to by events, completions,
interactions and ledger entries, and stays; it can be ended instead.

The database decides, not a check before the write: each deletion runs in one transaction that first locks the
campaign's row (``SELECT … FOR UPDATE`` on PostgreSQL; SQLite runs one write transaction at a time) and reads its
status under that lock, so a submission racing with the deletion either waits for it or makes it refuse. The tasks'
rows are locked too, so a concurrent allocation to a task's pool waits and then finds no task. Money a draft was
given (its budget, its tasks' pools) returns to the advertiser's unallocated balance in the same transaction; the
deletion is refused when it cannot all be returned. The foreign keys of events, completions and interactions
(``RESTRICT``) refuse the deletion of anything they refer to as a last guard.

A duplicate is a new draft with the campaign's settings, its creatives (in review again) and its tasks, without
money: nothing is funded, and the copy is reviewed like any new campaign.

Neither changes what is served (an unreviewed campaign is in no serving index), so nothing is announced.
"""

from __future__ import annotations

import logging
from datetime import datetime

from tortoise.exceptions import IntegrityError
from tortoise.transactions import in_transaction

from adnet.campaigns import campaigns
from adnet.campaigns.commands import MAX_NAME
from adnet.campaigns.creatives import owned_creative
from adnet.campaigns.lifecycle import release
from adnet.campaigns.models import Campaign, Creative, CreativeStatus
from adnet.core.errors import Conflict, NotFound
from adnet.core.ids import new_id
from adnet.money import ledger
from adnet.tasks.authoring import owned_task
from adnet.tasks.models import Task

log = logging.getLogger(__name__)

COPY_SUFFIX = " (copy)"


async def _lock_unreviewed(campaign_id: str, what: str) -> Campaign:
    """The campaign's row, locked for the transaction, when it is unreviewed; Conflict ``campaign_locked``
    otherwise, NotFound when it is gone."""
    locked = await Campaign.select_for_update().get_or_none(id=campaign_id)
    if locked is None:
        raise NotFound.of("campaign")
    if locked.status not in campaigns.UNREVIEWED:
        raise Conflict("campaign_locked", f"{what} of a campaign in {locked.status.value} cannot be deleted: it may "
                                          "have served. End it instead.", currentStatus=locked.status.value)
    return locked


async def _return_all(account: ledger.AccountKey, advertiser_id: str, now: datetime) -> int:
    """Return everything ``account`` holds to the advertiser; Conflict when its balance moved meanwhile."""
    returned = await release(account, advertiser_id, now)
    if await ledger.balance(account):
        raise Conflict("changed_meanwhile", "Money moved while deleting; nothing was deleted, retry.")
    return returned


async def delete_campaign(wallet: str, campaign_id: str, now: datetime) -> int:
    """Delete the wallet's unreviewed campaign with its creatives and tasks; returns the G$ its budget and task pools
    held, now back in the advertiser's unallocated balance. Conflict ``campaign_locked`` once it was submitted."""
    campaign = await campaigns.owned_campaign(wallet, campaign_id)
    advertiser_id = campaign.advertiser.id
    try:
        async with in_transaction():
            await _lock_unreviewed(campaign.id, "A campaign")
            task_ids = [task.id for task in await Task.select_for_update().filter(campaign_id=campaign.id)]
            returned = await _return_all(ledger.campaign(campaign.id), advertiser_id, now)
            for task_id in task_ids:
                returned += await _return_all(ledger.task_pool(task_id), advertiser_id, now)
            await Campaign.filter(id=campaign.id).delete()
    except IntegrityError:
        raise _served("campaign") from None
    log.info("campaign deleted campaign=%s returned=%d", campaign.id, returned)
    return returned


async def delete_creative(wallet: str, creative_id: str) -> None:
    """Delete a creative of the wallet's unreviewed campaign (Conflict ``campaign_locked`` otherwise)."""
    creative = await owned_creative(wallet, creative_id)
    try:
        async with in_transaction():
            await _lock_unreviewed(creative.campaign.id, "A creative")
            await Creative.filter(id=creative.id).delete()
    except IntegrityError:
        raise _served("creative") from None
    log.info("creative deleted creative=%s campaign=%s", creative.id, creative.campaign.id)


async def delete_task(wallet: str, task_id: str, now: datetime) -> int:
    """Delete a task or unit of the wallet's unreviewed campaign; returns the G$ its pool held, back in the
    advertiser's unallocated balance. Conflict ``campaign_locked`` once the campaign was submitted."""
    task = await owned_task(wallet, task_id)
    if task.campaign is None:
        raise Conflict("campaign_locked", "This task belongs to no campaign and cannot be deleted here.")
    try:
        async with in_transaction():
            await _lock_unreviewed(task.campaign.id, "A task")
            if await Task.select_for_update().get_or_none(id=task.id) is None:
                raise NotFound.of("task")
            returned = await _return_all(ledger.task_pool(task.id), task.advertiser.id, now)
            await Task.filter(id=task.id).delete()
    except IntegrityError:
        raise _served("task") from None
    log.info("task deleted task=%s campaign=%s returned=%d", task.id, task.campaign.id, returned)
    return returned


def _served(what: str) -> Conflict:
    return Conflict("already_served", f"This {what} has served or been answered and cannot be deleted; end it "
                                      "instead.")


async def duplicate_campaign(wallet: str, campaign_id: str, now: datetime) -> Campaign:
    """A new draft of the wallet with the settings, creatives (in review) and tasks of one of its campaigns, in any
    status, and no money."""
    source = await campaigns.owned_campaign(wallet, campaign_id)
    name = source.name[:MAX_NAME - len(COPY_SUFFIX)] + COPY_SUFFIX
    async with in_transaction():
        copy = await Campaign.create(
            id=new_id("cmp"), advertiser_id=source.advertiser.id, name=name, starts_at=source.starts_at,
            ends_at=source.ends_at, cpm=source.cpm, cpc=source.cpc, budget=source.budget, daily_cap=source.daily_cap,
            sizes=source.sizes, placements=source.placements, site_allow=source.site_allow,
            site_deny=source.site_deny, rotation=source.rotation, frequency_cap=source.frequency_cap,
            frequency_hours=source.frequency_hours, targeting=source.targeting, click_param=source.click_param,
            category=source.category, category_iab_id=source.category_iab_id, created_at=now, updated_at=now)
        for creative in await Creative.filter(campaign_id=source.id).order_by("created_at", "id"):
            await Creative.create(
                id=new_id("ad"), campaign=copy, banner_url=creative.banner_url, target_url=creative.target_url,
                description=creative.description, media_type=creative.media_type, width=creative.width,
                height=creative.height, weight=creative.weight, status=CreativeStatus.REVIEW, created_at=now,
                updated_at=now)
        for task in await Task.filter(campaign_id=source.id).order_by("created_at", "id"):
            await Task.create(
                id=new_id("task"), advertiser_id=source.advertiser.id, campaign=copy, kind=task.kind,
                surface=task.surface, title=task.title, description=task.description, config=task.config,
                reward_points=task.reward_points, reward_gs=task.reward_gs, max_per_wallet=task.max_per_wallet,
                max_per_fingerprint=task.max_per_fingerprint, starts_at=task.starts_at, ends_at=task.ends_at,
                created_at=now)
    log.info("campaign duplicated campaign=%s from=%s", copy.id, source.id)
    return copy
