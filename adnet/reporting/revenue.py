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
    """The platform's G$: what it holds, what it earned in all, and per UTC day over a range of days."""

    balance: int
    earned: int
    days: list[tuple[date, int]]


async def revenue(now: datetime, first: date | None = None, last: date | None = None) -> Revenue:
    """The platform's G$ balance, its lifetime earnings (its share of billed events, ``ad_billing``), and the
    earnings of each UTC day from ``first`` to ``last`` (oldest first; by default the last ``REVENUE_DAYS`` days up
    to today)."""
    last = last or now.astimezone(UTC).date()
    first = first or last - timedelta(days=REVENUE_DAYS - 1)
    since = datetime.combine(first, datetime.min.time(), tzinfo=UTC)
    until = datetime.combine(last + timedelta(days=1), datetime.min.time(), tzinfo=UTC)
    account = ledger.platform()
    rows = await LedgerPosting.filter(account__kind=account.kind, account__token=account.token,
                                      transaction__kind="ad_billing").values_list("amount", "created_at")
    per_day: dict[date, int] = defaultdict(int)
    earned = 0
    for amount, created_at in rows:
        earned += int(amount)
        if since <= created_at < until:
            per_day[created_at.astimezone(UTC).date()] += int(amount)
    series = [(first + timedelta(days=offset), per_day.get(first + timedelta(days=offset), 0))
              for offset in range((last - first).days + 1)]
    return Revenue(balance=await ledger.balance(account), earned=earned, days=series)
