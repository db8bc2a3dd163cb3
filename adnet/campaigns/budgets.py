"""What has moved through a campaign's budget, read from its ledger postings: everything allocated to it, and
everything returned from it when it ended. What is left is the budget account's balance (``adnet.money.ledger``);
what was spent follows from the three."""

from __future__ import annotations

from adnet.money.models import LedgerPosting

ALLOCATION_KIND = "campaign_allocation"
RETURN_KIND = "budget_return"


async def funded(campaign_id: str) -> int:
    """Everything ever allocated to the campaign's budget."""
    return (await funded_totals([campaign_id])).get(campaign_id, 0)


async def funded_totals(campaign_ids: list[str]) -> dict[str, int]:
    """Everything ever allocated to each campaign's budget."""
    return await _posted(campaign_ids, ALLOCATION_KIND)


async def returned_totals(campaign_ids: list[str]) -> dict[str, int]:
    """Everything returned from each campaign's budget to its advertiser."""
    return await _posted(campaign_ids, RETURN_KIND)


async def _posted(campaign_ids: list[str], kind: str) -> dict[str, int]:
    """The sum of the postings of one transaction kind on each campaign's account (absolute value)."""
    if not campaign_ids:
        return {}
    rows = await LedgerPosting.filter(account__kind="campaign", account__owner__in=campaign_ids,
                                      transaction__kind=kind).values_list("account__owner", "amount")
    totals: dict[str, int] = {}
    for owner, amount in rows:
        totals[owner] = totals.get(owner, 0) + abs(int(amount))
    return totals
