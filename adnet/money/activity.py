"""A holder's recent money movements, newest first, as the portal lists them: deposits, withdrawals and (for a
site) exchanges."""

from __future__ import annotations

from dataclasses import dataclass

from adnet.money.holders import Holder
from adnet.money.models import Deposit, Exchange, Withdrawal

RECENT_ITEMS = 10


@dataclass(frozen=True)
class Activity:
    """The latest deposits, withdrawals (with their claims) and exchanges of a site or an advertiser (advertisers
    make no exchanges)."""

    deposits: list[Deposit]
    withdrawals: list[Withdrawal]
    exchanges: list[Exchange]


async def recent(holder: Holder) -> Activity:
    """The holder's latest ``RECENT_ITEMS`` deposits, withdrawals and exchanges."""
    newest = ("-created_at", "-id")
    return Activity(
        deposits=await Deposit.filter(**holder.record).order_by(*newest).limit(RECENT_ITEMS),
        withdrawals=await Withdrawal.filter(**holder.record).order_by(*newest).limit(RECENT_ITEMS).select_related(
            "claim"),
        exchanges=(await Exchange.filter(**holder.record).order_by(*newest).limit(RECENT_ITEMS)
                   if holder.kind == "site" else []),
    )
