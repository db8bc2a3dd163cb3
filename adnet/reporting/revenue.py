"""The platform's revenue, as operators read it: its share of billed events, in G$."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

from adnet.money import ledger
from adnet.money.models import LedgerPosting

REVENUE_DAYS = 30


@dataclass(frozen=True)
class Revenue:
    """The platform's G$: what it holds, what it earned in all, and per UTC day over the last days."""

    balance: int
    earned: int
    days: list[tuple[date, int]]


async def revenue(now: datetime, days: int = REVENUE_DAYS) -> Revenue:
    """The platform's G$ balance, its lifetime earnings (its share of billed events, ``ad_billing``), and the
    earnings of each of the last ``days`` UTC days (oldest first)."""
    today = now.astimezone(UTC).date()
    since = datetime.combine(today - timedelta(days=days - 1), datetime.min.time(), tzinfo=UTC)
    account = ledger.platform()
    rows = await LedgerPosting.filter(account__kind=account.kind, account__token=account.token,
                                      transaction__kind="ad_billing").values_list("amount", "created_at")
    per_day: dict[date, int] = defaultdict(int)
    earned = 0
    for amount, created_at in rows:
        earned += int(amount)
        if created_at >= since:
            per_day[created_at.astimezone(UTC).date()] += int(amount)
    series = [(today - timedelta(days=offset), per_day.get(today - timedelta(days=offset), 0))
              for offset in range(days - 1, -1, -1)]
    return Revenue(balance=await ledger.balance(account), earned=earned, days=series)
