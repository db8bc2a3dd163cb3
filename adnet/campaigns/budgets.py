"""What has moved through a campaign's budget, read from its ledger postings, defined once for every page and
answer (``adnet.campaigns.views.CampaignView``, docs/advertisers.md#money-of-a-campaign):

- **budget**: the most the campaign may ever be funded with (a setting, not money);
- **funded**: everything ever put into the budget account: allocations from the advertiser's balance (and the
  demo's or a test's funding), never what a reward that expired gave back;
- **returned**: what went back to the advertiser's balance when the campaign ended;
- **remaining**: what the budget account holds now (``adnet.money.ledger``);
- **spent**: what paid for events, conversions and rewards: funded - remaining - returned.

So funded = spent + remaining + returned on every page, and an advertiser's money "in campaign budgets" is the sum
of its campaigns' remaining.
"""

from __future__ import annotations

from adnet.money.models import LedgerPosting

ALLOCATION_KIND = "campaign_allocation"
RETURN_KIND = "budget_return"
# A reward's claim that expired unredeemed gives its amount back to the account that paid it: spending undone, not
# funding (``adnet.money.claims``).
_SPENDING_UNDONE = "claim_expire"


async def funded(campaign_id: str) -> int:
    """Everything ever put into the campaign's budget."""
    return (await funded_totals([campaign_id])).get(campaign_id, 0)


async def funded_totals(campaign_ids: list[str]) -> dict[str, int]:
    """Everything ever put into each campaign's budget: every credit of its account but the expiries that undo a
    reward."""
    if not campaign_ids:
        return {}
    rows = await LedgerPosting.filter(account__kind="campaign", account__owner__in=campaign_ids, amount__gt=0).exclude(
        transaction__kind=_SPENDING_UNDONE).values_list("account__owner", "amount")
    return _summed(rows)


async def returned_totals(campaign_ids: list[str]) -> dict[str, int]:
    """Everything returned from each campaign's budget to its advertiser."""
    if not campaign_ids:
        return {}
    rows = await LedgerPosting.filter(account__kind="campaign", account__owner__in=campaign_ids,
                                      transaction__kind=RETURN_KIND).values_list("account__owner", "amount")
    return _summed(rows)


def _summed(rows: list[tuple[str, int]]) -> dict[str, int]:
    """The absolute amounts of postings, summed by account owner."""
    totals: dict[str, int] = {}
    for owner, amount in rows:
        totals[owner] = totals.get(owner, 0) + abs(int(amount))
    return totals
