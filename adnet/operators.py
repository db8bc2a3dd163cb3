"""What operators do: review campaigns and creatives, set the vault's protocol rate, and see platform revenue.

An operator is a wallet listed in ``ADNET_OPERATORS``; over HTTP it proves that with its SIWE session, like any
wallet, and every action here first checks the list (403 ``not_operator``). The ``adnet operators`` command runs
the same functions for someone with shell access to the server.

Review: a submitted campaign is reviewed with its creatives and tasks; approving it approves its creatives still in
review, and it serves from then on (inside its dates, with budget). A creative changed after its campaign was
reviewed waits in the queue on its own. Rejections carry a reason the advertiser sees. Every decision is a
conditional update from ``review``, so two operators deciding at once cannot both win.

The rate: only the vault's owner may call ``setRate``. In production the owner is a multisig, so adnet builds the
unsigned transaction for the owner to send (``rate_transaction``); on the development chain, whose owner is
development account 0, adnet can also send it itself (``send_rate``). Publishers' exchanges read the rate from the
vault, cached for ``adnet.chain.client.RATE_CACHE_SECONDS``.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any

from tortoise.transactions import in_transaction
from web3 import AsyncWeb3

from adnet import campaigns, ledger, serving
from adnet.chain.client import ChainClient, ChainUnavailable
from adnet.chain.devchain import dev_accounts
from adnet.chain.transact import send_transaction
from adnet.config import Settings
from adnet.errors import ApiError, bad_request, conflict, not_found
from adnet.ids import has_prefix
from adnet.models import Campaign, CampaignStatus, Creative, CreativeStatus, LedgerPosting, Task
from adnet.wallets import InvalidWallet, normalize_wallet

log = logging.getLogger(__name__)

MAX_REASON = 500
REVENUE_DAYS = 30
REVENUE_SYMBOL = "G$"  # the platform's share of billing, in the payout token
_VAULT_OWNER_ABI = [{"inputs": [], "name": "owner", "outputs": [{"name": "", "type": "address"}],
                     "stateMutability": "view", "type": "function"}]


@dataclass(frozen=True)
class ReviewQueue:
    """What waits for an operator: campaigns in review (with creatives and tasks), and creatives changed on
    reviewed campaigns."""

    campaigns: list[campaigns.CampaignView]
    creatives: list[Creative]


@dataclass(frozen=True)
class RateChange:
    """A new protocol rate: the unsigned transaction, and its hash when adnet sent it (development only)."""

    rate: int
    vault_owner: str
    transaction: dict[str, Any]
    tx_hash: str | None = None


@dataclass(frozen=True)
class Revenue:
    """The platform's G$: what it holds, what it earned in all, and per UTC day over the last days."""

    balance: int
    earned: int
    days: list[tuple[date, int]]


def check_operator(settings: Settings, wallet: str) -> str:
    """``wallet`` when it is one of the configured operators; 403 ``not_operator`` otherwise."""
    try:
        wallet = normalize_wallet(wallet)
    except InvalidWallet:
        raise _not_operator() from None
    if wallet not in settings.operators:
        raise _not_operator()
    return wallet


def _not_operator() -> ApiError:
    return ApiError(403, "not_operator", "Only adnet's operators (ADNET_OPERATORS) may do this.")


def reason_of(text: Any) -> str:
    """A rejection reason: 1 to 500 characters; 400 otherwise."""
    if not isinstance(text, str) or not text.strip():
        raise bad_request("missing_field", "reason: a rejection needs a reason the advertiser can act on",
                          field="reason")
    if len(text) > MAX_REASON:
        raise bad_request("invalid_field", f"reason: at most {MAX_REASON} characters", field="reason")
    return text.strip()


async def review_queue(now: datetime) -> ReviewQueue:
    """Campaigns in review, oldest first, with their creatives and tasks; then creatives waiting on their own."""
    pending = await Campaign.filter(status=CampaignStatus.REVIEW).order_by("updated_at", "id")
    creatives = await Creative.filter(status=CreativeStatus.REVIEW,
                                      campaign__status__in=list(campaigns.REVIEWED)).order_by("updated_at", "id")
    return ReviewQueue(campaigns=await campaigns.views(pending, now, details=True), creatives=creatives)


async def _campaign(campaign_id: Any) -> Campaign:
    campaign = await Campaign.get_or_none(id=campaign_id) if has_prefix(campaign_id, "cmp") else None
    if campaign is None:
        raise not_found("campaign")
    return campaign


async def _creative(creative_id: Any) -> Creative:
    creative = await Creative.get_or_none(id=creative_id) if has_prefix(creative_id, "ad") else None
    if creative is None:
        raise not_found("ad")
    return creative


async def approve_campaign(operator: str, campaign_id: Any, now: datetime) -> Campaign:
    """Approve a campaign in review and its creatives in review: it serves from now on, inside its dates and with
    budget. 409 ``invalid_transition`` when it is not in review."""
    campaign = await _campaign(campaign_id)
    task_count = await Task.filter(campaign_id=campaign.id).count()
    async with in_transaction():
        campaign = await campaigns.move(campaign, (CampaignStatus.REVIEW,), CampaignStatus.APPROVED, now,
                                        rejection_reason="")
        creatives = await Creative.filter(campaign_id=campaign.id, status=CreativeStatus.REVIEW).update(
            status=CreativeStatus.APPROVED, updated_at=now)
    serving.invalidate()
    log.info("campaign approved campaign=%s operator=%s creatives=%d tasks=%d", campaign.id, operator, creatives,
             task_count)
    return campaign


async def reject_campaign(operator: str, campaign_id: Any, reason: Any, now: datetime) -> Campaign:
    """Reject a campaign in review with a reason; its owner may change it and submit it again."""
    reason = reason_of(reason)
    campaign = await campaigns.move(await _campaign(campaign_id), (CampaignStatus.REVIEW,), CampaignStatus.REJECTED,
                                    now, rejection_reason=reason)
    log.info("campaign rejected campaign=%s operator=%s", campaign.id, operator)
    return campaign


async def approve_creative(operator: str, creative_id: Any, now: datetime) -> Creative:
    """Approve a creative waiting on its own (its campaign already reviewed): it serves from now on."""
    return await _decide_creative(operator, creative_id, CreativeStatus.APPROVED, "", now)


async def reject_creative(operator: str, creative_id: Any, reason: Any, now: datetime) -> Creative:
    """Reject a creative waiting on its own, with a reason; the campaign's other creatives keep serving."""
    return await _decide_creative(operator, creative_id, CreativeStatus.REJECTED, reason_of(reason), now)


async def _decide_creative(operator: str, creative_id: Any, status: CreativeStatus, reason: str,
                           now: datetime) -> Creative:
    creative = await _creative(creative_id)
    decided = await Creative.filter(id=creative.id, status=CreativeStatus.REVIEW,
                                    campaign__status__in=list(campaigns.REVIEWED)).update(
        status=status, rejection_reason=reason, updated_at=now)
    await creative.refresh_from_db()
    if not decided:
        raise conflict("invalid_transition", "Only a creative in review on an approved or paused campaign is decided "
                                             "on its own; a campaign in review is decided whole.",
                       currentStatus=creative.status.value)
    serving.invalidate()
    log.info("creative decided creative=%s status=%s operator=%s", creative.id, status.value, operator)
    return creative


def rate_of(text: Any) -> int:
    """A protocol rate from a decimal string of G$ per SOV (``"2.5"``), in G$ smallest units per 1e18 SOV."""
    return campaigns.amount_of(text, "rate", zero=False)


async def current_rate(chain: ChainClient) -> tuple[int, str]:
    """The vault's rate, read now (not the client's cache), and its owner."""
    owner_view = chain.w3.eth.contract(address=AsyncWeb3.to_checksum_address(chain.vault_address),
                                       abi=_VAULT_OWNER_ABI)
    try:
        rate = int(await ChainClient._guard(chain.vault.functions.rate().call()))
        owner = str(await ChainClient._guard(owner_view.functions.owner().call())).lower()
    except ChainUnavailable:
        raise _chain_unavailable() from None
    return rate, owner


async def rate_transaction(operator: str, chain: ChainClient, rate: int) -> RateChange:
    """The unsigned ``setRate(rate)`` transaction, from the vault's owner (a multisig in production), for the
    owner to send."""
    _, owner = await current_rate(chain)
    data = chain.vault.encode_abi("setRate", args=[rate])
    transaction = ChainClient._wallet_tx(owner, chain.vault_address, data, chain.chain_id)
    log.info("rate transaction built rate=%d owner=%s operator=%s", rate, owner, operator)
    return RateChange(rate=rate, vault_owner=owner, transaction=transaction)


async def send_rate(operator: str, chain: ChainClient, settings: Settings, rate: int) -> RateChange:
    """Set the rate on the development chain with development account 0's key (its vault owner). Refused
    (409 ``send_unavailable``) anywhere else: there the owner sends ``rate_transaction``'s transaction."""
    if settings.production or not settings.embedded_chain:
        raise conflict("send_unavailable", "adnet sends setRate only on the development chain; send the returned "
                                           "transaction from the vault's owner.")
    change = await rate_transaction(operator, chain, rate)
    owner_account = dev_accounts()[0]
    if owner_account.address.lower() != change.vault_owner:
        raise conflict("send_unavailable", "The vault's owner is not the development deployer; send the returned "
                                           "transaction from the owner.")
    receipt = await send_transaction(chain.w3, owner_account, change.transaction)
    tx_hash = receipt["transactionHash"].to_0x_hex()
    log.info("rate set rate=%d tx=%s operator=%s", rate, tx_hash, operator)
    return RateChange(rate=rate, vault_owner=change.vault_owner, transaction=change.transaction, tx_hash=tx_hash)


def _chain_unavailable() -> ApiError:
    return ApiError(503, "chain_unavailable", "The chain cannot be reached; nothing was changed, retry later.",
                    retryAfter=10)


async def revenue(now: datetime, days: int = REVENUE_DAYS) -> Revenue:
    """The platform's G$ balance, its lifetime earnings (its share of billed events, ``ad_billing``), and the
    earnings of each of the last ``days`` UTC days (oldest first)."""
    today = now.astimezone(UTC).date()
    since = datetime.combine(today - timedelta(days=days - 1), datetime.min.time(), tzinfo=UTC)
    account = ledger.platform(REVENUE_SYMBOL)
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
