"""An advertiser's account and money: registration, deposits into the vault, allocation to campaign budgets and
task pools, and withdrawal of what is not allocated.

The advertiser's unallocated G$ is its ledger account (``ledger.advertiser``). Money moves:

- deposit: the wallet sends the vault's ``deposit`` itself with ``accountRef`` = keccak256 of the advertiserId
  (``prepare_deposit`` builds the approve and deposit transactions); ``deposit`` has ``adnet.deposits`` verify the
  receipt on the chain and credit the advertiser once per transaction hash, as a publisher's top-up is credited;
- allocation: one ``campaign_allocation`` (or ``task_allocation``) booking from the advertiser to the campaign's
  budget (or the task's pool). The ledger's compare-and-swap on a balance that may not go negative makes sure
  allocations never take more than the advertiser holds, however many run at once. A campaign is never funded
  beyond its ``budget``: allocations to one campaign are serialised by a lock on its row (``SELECT … FOR
  UPDATE`` on PostgreSQL; SQLite runs one write transaction at a time) while the funded total is checked;
- return: an ended campaign's or task's unspent money comes back (``adnet.campaigns.release``);
- withdrawal: one database transaction signs a claim (``adnet.claims.issue_claim`` books ``claim_issue`` from the
  advertiser's account) and records the Withdrawal; released back if not redeemed by its deadline.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from tortoise.exceptions import IntegrityError
from tortoise.transactions import in_transaction

from adnet import campaigns, ledger, serving, units
from adnet.chain.client import ChainClient
from adnet.claims import claim_ref_for, issue_claim
from adnet.deposits import TOP_UP_SYMBOL, account_ref_for_advertiser, verify_and_record_deposit
from adnet.errors import ApiError, bad_request, conflict, not_found
from adnet.ids import new_id
from adnet.models import Advertiser, Campaign, CampaignStatus, ClaimPurpose, Deposit, Task, Withdrawal, WithdrawalStatus
from adnet.money import to_decimal_string
from adnet.payouts import WithdrawalResult

log = logging.getLogger(__name__)

TASK_ALLOCATION_KIND = "task_allocation"


@dataclass(frozen=True)
class Registration:
    """The wallet's advertiser record; ``created`` is False when it existed."""

    advertiser: Advertiser
    created: bool


@dataclass(frozen=True)
class DepositPlan:
    """The two transactions the advertiser's wallet sends to deposit: approve the vault, then deposit."""

    advertiser_id: str
    account_ref: str
    amount: int
    approve: dict[str, Any]
    deposit: dict[str, Any]


@dataclass(frozen=True)
class AdvertiserBalance:
    """An advertiser's G$, smallest units: unallocated (withdrawable or allocatable), held in its campaigns'
    budgets and tasks' pools, and in withdrawals not yet redeemed."""

    available: int
    in_campaigns: int
    in_tasks: int
    pending_withdrawals: int


async def register(wallet: str, name: str, now: datetime) -> Registration:
    """The wallet's advertiser record, created on its first call (an insert guarded by the unique wallet)."""
    existing = await Advertiser.get_or_none(wallet=wallet)
    if existing is not None:
        return Registration(existing, created=False)
    try:
        async with in_transaction():
            advertiser = await Advertiser.create(id=new_id("adv"), wallet=wallet, name=name.strip()[:120],
                                                 created_at=now)
    except IntegrityError:
        return Registration(await Advertiser.get(wallet=wallet), created=False)
    log.info("advertiser registered advertiser=%s wallet=%s", advertiser.id, wallet)
    return Registration(advertiser, created=True)


async def advertiser_of(wallet: str) -> Advertiser:
    """The wallet's advertiser record; 404 ``not_found`` before it registered."""
    advertiser = await Advertiser.get_or_none(wallet=wallet)
    if advertiser is None:
        raise not_found("advertiser for this wallet; register first")
    return advertiser


async def balance(advertiser: Advertiser, now: datetime) -> AdvertiserBalance:
    """The advertiser's money, after ending what is due (which may return unspent budget)."""
    await campaigns.settle_due(now, advertiser.id)
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


def prepare_deposit(advertiser: Advertiser, amount: int, chain: ChainClient) -> DepositPlan:
    """The unsigned approve and deposit transactions by which the advertiser's wallet deposits ``amount`` G$."""
    account_ref = account_ref_for_advertiser(advertiser.id)
    return DepositPlan(advertiser_id=advertiser.id, account_ref=account_ref, amount=amount,
                     approve=chain.build_approve_tx(advertiser.wallet, TOP_UP_SYMBOL, amount),
                     deposit=chain.build_deposit_tx(advertiser.wallet, TOP_UP_SYMBOL, amount, account_ref))


async def deposit(advertiser: Advertiser, tx_hash: str, chain: ChainClient, now: datetime) -> Deposit:
    """Credit the advertiser with the G$ deposit ``tx_hash`` its wallet made to the vault, once (see
    ``adnet.deposits.verify_and_record_deposit`` for what is checked and refused)."""
    credited = await verify_and_record_deposit(chain, tx_hash, advertiser.wallet,
                                               account_ref_for_advertiser(advertiser.id), now)
    log.info("advertiser deposit advertiser=%s tx=%s status=%s", advertiser.id, credited.tx_hash,
             credited.status.value)
    return credited


async def allocate_to_campaign(wallet: str, campaign_id: str, amount: int, now: datetime) -> int:
    """Move ``amount`` from the advertiser's unallocated balance into the campaign's budget; returns the
    campaign's remaining budget. Refused: 400 ``insufficient_balance`` (more than unallocated), 409
    ``over_budget`` (the campaign would be funded beyond its budget), 409 ``invalid_transition`` (ended)."""
    campaign = await campaigns.owned_campaign(wallet, campaign_id)
    advertiser_id = campaign.advertiser.id
    await campaigns.settle_due(now, advertiser_id)
    try:
        async with in_transaction():
            locked = await Campaign.select_for_update().get(id=campaign.id)
            if locked.status in (CampaignStatus.ENDED, CampaignStatus.REJECTED):
                raise conflict("invalid_transition", f"A {locked.status.value} campaign cannot be funded.",
                               currentStatus=locked.status.value)
            room = int(locked.budget) - await campaigns.funded(campaign.id)
            if amount > room:
                raise conflict("over_budget", "This would fund the campaign beyond its budget; raise the budget "
                                              "first.", field="amount", unfunded=to_decimal_string(max(room, 0)))
            await ledger.book(campaigns.ALLOCATION_KIND, new_id("ltx"),
                              [(ledger.advertiser(advertiser_id), -amount), (ledger.campaign(campaign.id), amount)],
                              now=now, memo=f"allocated to campaign {campaign.id}")
    except ledger.InsufficientFunds as exc:
        raise _insufficient(exc) from None
    serving.invalidate()
    log.info("campaign funded campaign=%s advertiser=%s amount=%d", campaign.id, advertiser_id, amount)
    return await ledger.balance(ledger.campaign(campaign.id))


async def allocate_to_task(wallet: str, task_id: str, amount: int, now: datetime) -> int:
    """Move ``amount`` from the advertiser's unallocated balance into the task's G$ pool (what its rewards are paid
    from first); returns the pool. 400 ``insufficient_balance``, 409 ``task_ended``."""
    task = await units.owned_task(wallet, task_id)
    if not task.active or (task.campaign is not None and task.campaign.status == CampaignStatus.ENDED):
        raise conflict("task_ended", "This task has ended.")
    try:
        async with in_transaction():
            await ledger.book(TASK_ALLOCATION_KIND, new_id("ltx"),
                              [(ledger.advertiser(task.advertiser.id), -amount), (ledger.task_pool(task.id), amount)],
                              now=now, memo=f"allocated to task {task.id}")
    except ledger.InsufficientFunds as exc:
        raise _insufficient(exc) from None
    log.info("task funded task=%s advertiser=%s amount=%d", task.id, task.advertiser.id, amount)
    return await ledger.balance(ledger.task_pool(task.id))


async def withdraw(advertiser: Advertiser, amount: int, *, minimum: int, chain: ChainClient,
                   now: datetime) -> WithdrawalResult:
    """Debit ``amount`` from the unallocated balance and sign the claim that pays it to the advertiser's wallet.
    400 ``below_minimum`` / ``insufficient_balance`` (nothing changed)."""
    if amount < minimum:
        raise bad_request("below_minimum", f"A withdrawal is at least {to_decimal_string(minimum)}.", field="amount",
                          minimum=to_decimal_string(minimum))
    await campaigns.settle_due(now, advertiser.id)
    withdrawal_id = new_id("wd")
    try:
        async with in_transaction():
            claim = await issue_claim(purpose=ClaimPurpose.WITHDRAWAL, recipient=advertiser.wallet,
                                      token_symbol=TOP_UP_SYMBOL, amount=amount,
                                      claim_ref=claim_ref_for("withdrawal", withdrawal_id),
                                      sources=[(ledger.advertiser(advertiser.id), amount)], now=now, chain=chain)
            withdrawal = await Withdrawal.create(id=withdrawal_id, advertiser=advertiser, wallet=advertiser.wallet,
                                                 token_symbol=TOP_UP_SYMBOL, amount=Decimal(amount), claim=claim,
                                                 created_at=now)
    except ledger.InsufficientFunds as exc:
        raise _insufficient(exc) from None
    log.info("advertiser withdrawal withdrawal=%s advertiser=%s amount=%d claim_ref=%s", withdrawal.id,
             advertiser.id, amount, claim.claim_ref)
    return WithdrawalResult(withdrawal, claim)


def _insufficient(exc: ledger.InsufficientFunds) -> ApiError:
    return bad_request("insufficient_balance", "The amount is more than the advertiser's unallocated balance.",
                       field="amount", available=to_decimal_string(exc.balance))
