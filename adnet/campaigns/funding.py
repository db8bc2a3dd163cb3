"""Funding a campaign: G$ moved from the advertiser's unallocated balance into the campaign's budget.

One ``campaign_allocation`` booking moves it; the ledger's compare-and-swap on a balance that may not go negative
makes sure allocations never take more than the advertiser holds, however many run at once. A campaign is never
funded beyond its ``budget``: allocations to one campaign are serialised by a lock on its row (``SELECT … FOR
UPDATE`` on PostgreSQL; SQLite runs one write transaction at a time) while the funded total is checked, and in the
same transaction a campaign that has ended, by its status or by its end date, refuses the money.
"""

from __future__ import annotations

import logging
from datetime import datetime

from tortoise.transactions import in_transaction

from adnet.campaigns.budgets import ALLOCATION_KIND, funded
from adnet.campaigns.campaigns import owned_campaign
from adnet.campaigns.models import Campaign, CampaignStatus
from adnet.core import changes
from adnet.core.amounts import to_decimal_string
from adnet.core.errors import Conflict, NotFound
from adnet.core.ids import new_id
from adnet.money import ledger
from adnet.money.holders import advertiser_holder
from adnet.money.withdrawals import insufficient

log = logging.getLogger(__name__)


async def allocate_to_campaign(wallet: str, campaign_id: str, amount: int, now: datetime) -> int:
    """Move ``amount`` from the advertiser's unallocated balance into the campaign's budget; returns the
    campaign's remaining budget. Refused: Invalid ``insufficient_balance`` (more than unallocated), Conflict
    ``over_budget`` (the campaign would be funded beyond its budget), Conflict ``invalid_transition`` (ended or
    rejected)."""
    campaign = await owned_campaign(wallet, campaign_id)
    advertiser = campaign.advertiser
    try:
        async with in_transaction():
            locked = await Campaign.select_for_update().get_or_none(id=campaign.id)
            if locked is None:  # deleted meanwhile (adnet.tasks.drafts)
                raise NotFound.of("campaign")
            status = CampaignStatus.ENDED if locked.ends_at is not None and locked.ends_at <= now else locked.status
            if status in (CampaignStatus.ENDED, CampaignStatus.REJECTED):
                raise Conflict("invalid_transition", f"A {status.value} campaign cannot be funded.",
                               currentStatus=status.value)
            room = int(locked.budget) - await funded(campaign.id)
            if amount > room:
                raise Conflict("over_budget", "This would fund the campaign beyond its budget; raise the budget "
                                              "first.", field="amount", unfunded=to_decimal_string(max(room, 0)))
            await ledger.book(ALLOCATION_KIND, new_id("ltx"),
                              [(ledger.advertiser(advertiser.id), -amount), (ledger.campaign(campaign.id), amount)],
                              now=now, memo=f"allocated to campaign {campaign.id}")
    except ledger.InsufficientFunds as exc:
        raise insufficient(advertiser_holder(advertiser), exc) from None
    changes.announce(campaign.id)
    log.info("campaign funded campaign=%s advertiser=%s amount=%d", campaign.id, advertiser.id, amount)
    return await ledger.balance(ledger.campaign(campaign.id))
