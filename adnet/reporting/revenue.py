"""The platform's revenue, as operators read it: its share of billed events, in G$."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

from adnet.money import ledger
from adnet.money.models import LedgerPosting
from adnet.reporting.buckets import Buckets, Granularity

REVENUE_DAYS = 30


@dataclass(frozen=True)
class Revenue:
    """The platform's G$: what it holds, what it earned in all, and per UTC day (or hour) over a range of days."""

    balance: int
    earned: int
    days: list[tuple[date, int]]


async def revenue(now: datetime, first: date | None = None, last: date | None = None,
                  granularity: Granularity = Granularity.DAY) -> Revenue:
    """The platform's G$ balance, its lifetime earnings (its share of billed events, ``ad_billing``), and the
    earnings of each UTC day (or hour: its start) from ``first`` to ``last`` (oldest first; by default the last
    ``REVENUE_DAYS`` days up to today)."""
    last = last or now.astimezone(UTC).date()
    first = first or last - timedelta(days=REVENUE_DAYS - 1)
    buckets = Buckets(granularity, first, last)
    account = ledger.platform()
    rows = await LedgerPosting.filter(account__kind=account.kind, account__token=account.token,
                                      transaction__kind="ad_billing").values_list("amount", "created_at")
    earned_in = dict.fromkeys(buckets.starts(), 0)
    earned = 0
    for amount, created_at in rows:
        earned += int(amount)
        if buckets.since <= created_at < buckets.until:
            earned_in[buckets.of(created_at)] += int(amount)
    series: list[tuple[date, int]] = [(start if granularity == Granularity.HOUR else start.date(), amount)
                                      for start, amount in earned_in.items()]
    return Revenue(balance=await ledger.balance(account), earned=earned, days=series)
