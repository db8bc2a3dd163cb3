"""A site's ad revenue, read from the ledger: every posting on the site's G$ account except those of money
movements that are not revenue (``NOT_EARNINGS``: top-ups, exchanges and the claims of withdrawals). The API's
site list, the balance and the portal's dashboard all count earnings this one way, so they never disagree."""

from __future__ import annotations

from datetime import datetime

from adnet.core.amounts import Token
from adnet.money.models import LedgerAccount, LedgerPosting

# Ledger transaction kinds that move a site's money without being ad revenue.
NOT_EARNINGS = frozenset({"deposit", "exchange", "claim_issue", "claim_expire", "claim_redeem"})


async def earned(site_ids: list[str]) -> dict[str, int]:
    """Lifetime ad revenue per site: the G$ balance minus every non-earning posting, which reads the few
    non-earning postings rather than one posting per billed event."""
    balances = await LedgerAccount.filter(kind="site", token=Token.GS, owner__in=site_ids).values_list(
        "owner", "balance")
    rows = await LedgerPosting.filter(account__kind="site", account__token=Token.GS, account__owner__in=site_ids,
                                      transaction__kind__in=NOT_EARNINGS).values_list("account__owner", "amount")
    totals = {owner: int(balance) for owner, balance in balances}
    for owner, amount in rows:
        totals[owner] = totals.get(owner, 0) - int(amount)
    return totals


async def earnings_since(site_ids: list[str], since: datetime,
                         until: datetime | None = None) -> list[tuple[str, int, datetime]]:
    """Every ad revenue posting of the sites from ``since`` on (and before ``until`` when given): (site id, amount,
    when it was booked)."""
    before = {} if until is None else {"created_at__lt": until}
    rows = await LedgerPosting.filter(account__kind="site", account__token=Token.GS, account__owner__in=site_ids,
                                      created_at__gte=since, **before).exclude(
        transaction__kind__in=NOT_EARNINGS).values_list("account__owner", "amount", "created_at")
    return [(owner, int(amount), booked_at) for owner, amount, booked_at in rows]
