"""A campaign's lifecycle, stored in ``Campaign.status``::

    draft ──submit──► review ──approve──► approved ◄──pause / resume──► paused
                        │                    │                            │
                        └─reject (reason)─► rejected ──submit──► review   └──► ended (owner, date, budget spent)

Every move is one conditional update from the statuses it may start from, so two requests racing to move the same
campaign cannot both succeed (the loser gets Conflict ``invalid_transition``). Only operators approve and reject
(``adnet.campaigns.review``); only the owning wallet and the members its account lets manage do the rest.

What serving shows follows from this: ``adnet.delivery`` indexes ``approved`` campaigns with their ``approved``
creatives, inside the campaign's dates, with budget left.

Ending: the owner ends a campaign at any time; ``settle_due`` (a periodic job) ends campaigns whose end date has
passed and those whose whole budget is funded and spent, and returns what is left in an ended campaign's budget,
and in the G$ pools of its tasks, to the advertiser's unallocated balance. It is safe to run any number of times,
concurrently: each return is a ledger booking of the balance it read, which the ledger refuses if the balance moved
meanwhile, and the next run returns what is left (a reward claim that expires after the end returns its amount to
the campaign first).

The advertiser's webhooks hear ``campaign.approved``, ``campaign.rejected`` and ``campaign.ended`` (with its
``reason``: ``ended`` by the owner, ``end_date`` passed or ``out_of_budget``), each written to the outbox in the
transaction of the move (``adnet.webhooks.outbox``).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from tortoise.exceptions import DoesNotExist
from tortoise.transactions import in_transaction

from adnet.accounts.models import Advertiser
from adnet.campaigns.budgets import RETURN_KIND, funded_totals
from adnet.campaigns.campaigns import REVIEWED, UNREVIEWED, can_pay, owned_campaign
from adnet.campaigns.models import Campaign, CampaignStatus, Creative, CreativeStatus
from adnet.core import changes
from adnet.core.errors import Conflict, Invalid, NotFound
from adnet.core.ids import new_id
from adnet.money import ledger
from adnet.webhooks import outbox
from adnet.webhooks.models import WebhookEventType

log = logging.getLogger(__name__)


async def move(campaign: Campaign, allowed: Iterable[CampaignStatus], target: CampaignStatus, now: datetime,
               **fields: Any) -> Campaign:
    """Move ``campaign`` to ``target`` by one conditional update from the ``allowed`` statuses; Conflict
    ``invalid_transition`` (with the current ``currentStatus``) when it is in none of them by the time of the update."""
    allowed = tuple(allowed)
    moved = await Campaign.filter(id=campaign.id, status__in=allowed).update(status=target, updated_at=now, **fields)
    try:
        await campaign.refresh_from_db()
    except DoesNotExist:  # deleted meanwhile (a draft's deletion, adnet.tasks.drafts)
        raise NotFound.of("campaign") from None
    if not moved:
        raise Conflict("invalid_transition",
                       f"A campaign in {campaign.status.value} cannot become {target.value}.",
                       currentStatus=campaign.status.value)
    changes.announce(campaign.id)
    log.info("campaign moved campaign=%s to=%s", campaign.id, target.value)
    return campaign


async def tell_advertiser(campaign: Campaign, event_type: WebhookEventType, now: datetime, **data: Any) -> None:
    """Write a webhook event about ``campaign`` for its advertiser (inside the transaction of the change)."""
    wallet = await Advertiser.filter(id=campaign.advertiser_id).first().values_list(
        "wallet", flat=True)
    await outbox.record(str(wallet), event_type, {"campaign_id": campaign.id, "name": campaign.name,
                                                  "status": campaign.status.value, **data}, now)


async def submit(wallet: str, campaign_id: str, now: datetime) -> Campaign:
    """Send a draft or rejected campaign to review. It needs something to show (a creative or a task) and an end
    date still ahead (Conflict ``campaign_incomplete`` / ``invalid_dates``); its creatives are reviewed with it."""
    campaign = await owned_campaign(wallet, campaign_id)
    if campaign.status in UNREVIEWED:
        if not (await Creative.exists(campaign_id=campaign.id) or await campaign.tasks.all().exists()):
            raise Conflict("campaign_incomplete", "Add a creative or a task before submitting the campaign.")
        if campaign.ends_at is not None and campaign.ends_at <= now:
            raise Invalid("invalid_dates", "The campaign's end date has passed; move it first.", field="endsAt")
    async with in_transaction():
        campaign = await move(campaign, UNREVIEWED, CampaignStatus.REVIEW, now, rejection_reason="")
        await Creative.filter(campaign_id=campaign.id, status=CreativeStatus.REJECTED).update(
            status=CreativeStatus.REVIEW, rejection_reason="", updated_at=now)
    return campaign


async def pause(wallet: str, campaign_id: str, now: datetime) -> Campaign:
    """Stop serving an approved campaign for now; its budget stays allocated."""
    return await move(await owned_campaign(wallet, campaign_id), (CampaignStatus.APPROVED,), CampaignStatus.PAUSED,
                      now)


async def resume(wallet: str, campaign_id: str, now: datetime) -> Campaign:
    """Serve a paused campaign again (Conflict ``invalid_dates`` once its end date has passed: it has ended)."""
    campaign = await owned_campaign(wallet, campaign_id)
    if campaign.status == CampaignStatus.PAUSED and campaign.ends_at is not None and campaign.ends_at <= now:
        raise Invalid("invalid_dates", "The campaign's end date has passed.", field="endsAt")
    return await move(campaign, (CampaignStatus.PAUSED,), CampaignStatus.APPROVED, now)


async def end(wallet: str, campaign_id: str, now: datetime) -> Campaign:
    """End the wallet's campaign for good and return its unspent budget (and its tasks' pools) to the advertiser.
    A draft, rejected, in-review, approved or paused campaign can end; an ended one cannot end again (Conflict)."""
    campaign = await owned_campaign(wallet, campaign_id)
    allowed = [status for status in CampaignStatus if status != CampaignStatus.ENDED]
    ends_at = now if campaign.ends_at is None or campaign.ends_at > now else campaign.ends_at
    async with in_transaction():
        campaign = await move(campaign, allowed, CampaignStatus.ENDED, now, ends_at=ends_at)
        await tell_advertiser(campaign, WebhookEventType.CAMPAIGN_ENDED, now, reason="ended")
    await return_unspent(campaign, now)
    return campaign


async def settle_due(now: datetime) -> list[str]:
    """End the campaigns whose end date has passed or whose budget is fully funded and spent, and return the
    unspent money of every ended campaign. Returns the ids of campaigns ended now."""
    campaigns = await Campaign.filter(status__in=[*REVIEWED, CampaignStatus.ENDED])
    remaining = await ledger.balances("campaign")
    funded = await funded_totals([campaign.id for campaign in campaigns if campaign.status == CampaignStatus.APPROVED])
    ended_now: list[str] = []
    for campaign in campaigns:
        if campaign.status == CampaignStatus.ENDED:
            continue
        by_date = campaign.ends_at is not None and campaign.ends_at <= now
        by_budget = (campaign.status == CampaignStatus.APPROVED and now >= campaign.starts_at
                     and funded.get(campaign.id, 0) >= int(campaign.budget)
                     and not can_pay(campaign, remaining.get(campaign.id, 0)))
        if not (by_date or by_budget):
            continue
        async with in_transaction():
            if not await Campaign.filter(id=campaign.id, status=campaign.status).update(
                    status=CampaignStatus.ENDED, updated_at=now):
                continue
            campaign.status = CampaignStatus.ENDED
            await tell_advertiser(campaign, WebhookEventType.CAMPAIGN_ENDED, now,
                                  reason="end_date" if by_date else "out_of_budget")
        ended_now.append(campaign.id)
        log.info("campaign ended campaign=%s by=%s", campaign.id, "date" if by_date else "budget")
    if ended_now:
        changes.announce(*ended_now)
    for campaign in campaigns:
        if campaign.status == CampaignStatus.ENDED:
            await return_unspent(campaign, now)
    return ended_now


async def return_unspent(campaign: Campaign, now: datetime) -> int:
    """Return an ended campaign's remaining budget and its tasks' pools to the advertiser, and switch its tasks
    off. Returns the amount moved now."""
    advertiser_id = campaign.advertiser_id
    tasks = await campaign.tasks.all().values_list("id", flat=True)
    if tasks:
        await campaign.tasks.filter(active=True).update(active=False)
    returned = await release(ledger.campaign(campaign.id), advertiser_id, now)
    for task_id in tasks:
        returned += await release(ledger.task_pool(str(task_id)), advertiser_id, now)
    return returned


async def release(account: ledger.AccountKey, advertiser_id: str, now: datetime) -> int:
    """Move what ``account`` holds back to the advertiser's unallocated balance; returns the amount. When the
    balance moves between the read and the booking (billing, a reward, a concurrent release), the ledger refuses
    the booking and nothing moves; the next call returns what is left."""
    amount = await ledger.balance(account)
    if amount <= 0:
        return 0
    try:
        async with in_transaction():
            await ledger.book(RETURN_KIND, new_id("ltx"), [(account, -amount),
                                                           (ledger.advertiser(advertiser_id), amount)],
                              now=now, memo=f"unspent {account.kind} {account.owner} returned")
    except ledger.InsufficientFunds:
        return 0
    log.info("unspent returned account=%s:%s advertiser=%s amount=%d", account.kind, account.owner, advertiser_id,
             amount)
    return amount


