"""Balances as their holders read them: a site's earnings and claimable money, an advertiser's G$ by where it is.
Reading only: money that settling would return (an ended campaign's budget) shows once the jobs have settled it."""

from __future__ import annotations

from dataclasses import dataclass

from adnet.accounts.models import Advertiser, MemberRole
from adnet.accounts.sites import owned_site
from adnet.campaigns.models import Campaign
from adnet.core.amounts import Token
from adnet.money import ledger
from adnet.money.models import Withdrawal, WithdrawalStatus
from adnet.reporting.earnings import earned
from adnet.tasks.models import Task


@dataclass(frozen=True)
class SiteBalance:
    """A site's money, in the smallest unit of each token: ``earned`` is the lifetime ad revenue credited to the
    site, ``claimable`` what can be withdrawn or exchanged now, ``pending_withdrawals`` the withdrawals whose
    claim is signed and neither redeemed nor released."""

    site_id: str
    earned: int
    claimable: int
    pending_withdrawals: int
    sov_claimable: int
    sov_pending_withdrawals: int


@dataclass(frozen=True)
class AdvertiserBalance:
    """An advertiser's G$, smallest units: unallocated (withdrawable or allocatable), held in its campaigns'
    budgets and tasks' pools, and in withdrawals not yet redeemed."""

    available: int
    in_campaigns: int
    in_tasks: int
    pending_withdrawals: int


async def site_balance(wallet: str, site_id: object) -> SiteBalance:
    """The money of a site ``wallet`` owns (the refusals of ``owned_site`` otherwise)."""
    site = await owned_site(wallet, site_id, MemberRole.VIEWER)
    pending = {token: 0 for token in Token}
    for token, amount in await Withdrawal.filter(site_id=site.id, status=WithdrawalStatus.ISSUED).values_list(
            "token_symbol", "amount"):
        pending[Token(token)] += int(amount)
    return SiteBalance(
        site_id=site.id,
        earned=(await earned([site.id])).get(site.id, 0),
        claimable=await ledger.balance(ledger.site(site.id)),
        pending_withdrawals=pending[Token.GS],
        sov_claimable=await ledger.balance(ledger.site(site.id, Token.SOV)),
        sov_pending_withdrawals=pending[Token.SOV],
    )


async def advertiser_balance(advertiser: Advertiser) -> AdvertiserBalance:
    """The advertiser's G$: unallocated, in campaign budgets, in task pools, and in withdrawals not yet redeemed."""
    campaign_ids = {str(item) for item in await Campaign.filter(advertiser_id=advertiser.id).values_list(
        "id", flat=True)}
    task_ids = {str(item) for item in await Task.filter(advertiser_id=advertiser.id).values_list("id", flat=True)}
    in_campaigns = sum(amount for owner, amount in (await ledger.balances("campaign")).items()
                       if owner in campaign_ids)
    in_tasks = sum(amount for owner, amount in (await ledger.balances("task")).items() if owner in task_ids)
    pending = await Withdrawal.filter(advertiser_id=advertiser.id, status=WithdrawalStatus.ISSUED)
    return AdvertiserBalance(available=await ledger.balance(ledger.advertiser(advertiser.id)),
                             in_campaigns=in_campaigns, in_tasks=in_tasks,
                             pending_withdrawals=sum(int(withdrawal.amount) for withdrawal in pending))
