"""Review: what operators (``adnet.accounts.operators``) decide before anything an advertiser wrote is served.

A submitted campaign is reviewed with its creatives and tasks, and with the category its advertiser chose, which an
operator corrects at any time (publishers block categories, so a correction is announced to serving). Each of its
creatives may be approved or rejected on its own first; approving the campaign approves its creatives still in review
(never one rejected), and it serves from then on (inside its dates, with budget) with its approved creatives only. A
creative changed after its campaign was reviewed waits in the queue on its own. Rejections carry a reason the
advertiser sees, and the advertiser's webhooks hear of each (``campaign.rejected``, ``creative.rejected``). Every
decision is a conditional update from ``review``, so two operators deciding at once cannot both win.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from tortoise.transactions import in_transaction

from adnet.campaigns import taxonomy
from adnet.campaigns.campaigns import REVIEWED
from adnet.campaigns.commands import Recategorization, Rejection
from adnet.campaigns.lifecycle import move, tell_advertiser
from adnet.campaigns.models import Campaign, CampaignStatus, Creative, CreativeStatus
from adnet.campaigns.views import CampaignView, views
from adnet.core import changes
from adnet.core.errors import Conflict, NotFound
from adnet.core.ids import has_prefix
from adnet.webhooks.models import WebhookEventType

log = logging.getLogger(__name__)

@dataclass(frozen=True)
class ReviewQueue:
    """What waits for an operator: campaigns in review (with creatives and tasks), and creatives changed on
    reviewed campaigns."""

    campaigns: list[CampaignView]
    creatives: list[Creative]


async def review_queue(now: datetime) -> ReviewQueue:
    """Campaigns in review, oldest first, with their creatives and tasks; then creatives waiting on their own."""
    pending = await Campaign.filter(status=CampaignStatus.REVIEW).order_by("updated_at", "id")
    creatives = await Creative.filter(status=CreativeStatus.REVIEW,
                                      campaign__status__in=list(REVIEWED)).order_by(
        "updated_at", "id").select_related("campaign")
    return ReviewQueue(campaigns=await views(pending, now, details=True), creatives=creatives)


async def _campaign(campaign_id: Any) -> Campaign:
    campaign = await Campaign.get_or_none(id=campaign_id) if has_prefix(campaign_id, "cmp") else None
    if campaign is None:
        raise NotFound.of("campaign")
    return campaign


async def _creative(creative_id: Any) -> Creative:
    creative = await Creative.get_or_none(id=creative_id) if has_prefix(creative_id, "ad") else None
    if creative is None:
        raise NotFound.of("ad")
    return creative


async def approve_campaign(operator: str, campaign_id: Any, now: datetime) -> Campaign:
    """Approve a campaign in review and its creatives in review: it serves from now on, inside its dates and with
    budget. Conflict ``invalid_transition`` when it is not in review."""
    campaign = await _campaign(campaign_id)
    task_count = await campaign.tasks.all().count()
    async with in_transaction():
        campaign = await move(campaign, (CampaignStatus.REVIEW,), CampaignStatus.APPROVED, now, rejection_reason="")
        creatives = await Creative.filter(campaign_id=campaign.id, status=CreativeStatus.REVIEW).update(
            status=CreativeStatus.APPROVED, updated_at=now)
        await tell_advertiser(campaign, WebhookEventType.CAMPAIGN_APPROVED, now)
    changes.announce(campaign.id)
    log.info("campaign approved campaign=%s operator=%s creatives=%d tasks=%d", campaign.id, operator, creatives,
             task_count)
    return campaign


async def recategorize_campaign(operator: str, campaign_id: Any, change: Recategorization, now: datetime) -> Campaign:
    """Give a campaign the category it really has, whatever its status; serving hears of it at once."""
    campaign = await _campaign(campaign_id)
    if campaign.category != change.category:
        await Campaign.filter(id=campaign.id).update(category=change.category,
                                                      category_iab_id=taxonomy.iab_id(change.category),
                                                      updated_at=now)
        log.info("campaign recategorized campaign=%s category=%s was=%s operator=%s", campaign.id,
                 change.category.value, campaign.category.value, operator)
        campaign.category, campaign.category_iab_id = change.category, taxonomy.iab_id(change.category)
        changes.announce(campaign.id)
    return campaign


async def reject_campaign(operator: str, campaign_id: Any, rejection: Rejection, now: datetime) -> Campaign:
    """Reject a campaign in review with a reason; its owner may change it and submit it again."""
    async with in_transaction():
        campaign = await move(await _campaign(campaign_id), (CampaignStatus.REVIEW,), CampaignStatus.REJECTED,
                              now, rejection_reason=rejection.reason)
        await tell_advertiser(campaign, WebhookEventType.CAMPAIGN_REJECTED, now, reason=rejection.reason)
    log.info("campaign rejected campaign=%s operator=%s", campaign.id, operator)
    return campaign


async def approve_creative(operator: str, creative_id: Any, now: datetime) -> Creative:
    """Approve a creative in review, on a campaign in review (it serves once the campaign is approved) or one
    already reviewed (it serves from now on)."""
    return await _decide_creative(operator, creative_id, CreativeStatus.APPROVED, "", now)


async def reject_creative(operator: str, creative_id: Any, rejection: Rejection, now: datetime) -> Creative:
    """Reject a creative in review with a reason the advertiser sees: it never serves (serving reads approved
    creatives only) while the campaign's other creatives do; approving its campaign leaves it rejected."""
    return await _decide_creative(operator, creative_id, CreativeStatus.REJECTED, rejection.reason, now)


async def _decide_creative(operator: str, creative_id: Any, status: CreativeStatus, reason: str,
                           now: datetime) -> Creative:
    creative = await _creative(creative_id)
    async with in_transaction():
        decided = await Creative.filter(id=creative.id, status=CreativeStatus.REVIEW,
                                        campaign__status__in=[CampaignStatus.REVIEW, *REVIEWED]).update(
            status=status, rejection_reason=reason, updated_at=now)
        if decided and status is CreativeStatus.REJECTED:
            await tell_advertiser(await creative.campaign, WebhookEventType.CREATIVE_REJECTED, now,
                                  creative_id=creative.id, size=f"{creative.width}x{creative.height}",
                                  reason=reason)
    await creative.refresh_from_db()
    if not decided:
        raise Conflict("invalid_transition", "Only a creative in review is decided, on a campaign in review, "
                                             "approved or paused.",
                       currentStatus=creative.status.value)
    changes.announce(creative.id)
    log.info("creative decided creative=%s status=%s operator=%s", creative.id, status.value, operator)
    return creative


