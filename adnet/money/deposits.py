"""Deposits: tokens a wallet sends to the vault, credited to a site or an advertiser exactly once.

A wallet calls the vault's ``deposit(token, amount, accountRef)``; ``accountRef`` is keccak256 of the siteId or
advertiserId (``adnet.money.holders``), so the event itself says whose account to credit. ``prepare`` builds the
approve and deposit transactions for the wallet to send. Two paths lead to crediting and both may see the same
transaction: the watcher (every ``Deposited`` event, once confirmed) and ``credit`` (the portal's top-up and the
APIs' deposit routes, as soon as the wallet has the hash).

Guarantees, by the database: one Deposit row per transaction hash (unique key), credited by one conditional update
``pending → credited`` together with one ``deposit`` ledger transaction whose reference is the hash (unique too).
A deposit is ``pending`` until it has ``chain.confirmations`` blocks on top of its own. Posting a hash is
idempotent for its holder: whichever path credited it first (the watcher, a concurrent post, an earlier post), the
holder's wallet posting its own deposit's hash again is answered with that deposit, so a client cannot mistake
money that arrived for a failure; anyone else posting it is refused.

Limits: one transaction credits one deposit (the first ``Deposited`` event of the vault in it); a deposit whose
accountRef names no site or advertiser is recorded and stays pending, for an operator to resolve.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any, Literal

from tortoise.exceptions import IntegrityError
from tortoise.transactions import in_transaction

from adnet.accounts.models import Advertiser, Site
from adnet.chain.client import ChainClient, ChainUnavailable, DepositEvent
from adnet.core.amounts import Token, to_decimal_string
from adnet.core.errors import Conflict, Invalid, NotFound, chain_unavailable
from adnet.core.ids import new_id
from adnet.money import ledger
from adnet.money.holders import Holder, account_ref
from adnet.money.models import Deposit, DepositStatus
from adnet.webhooks import outbox
from adnet.webhooks.models import WebhookEventType

log = logging.getLogger(__name__)

# accountRef -> the site or advertiser it credits; rebuilt from the database on a miss.
_owners: dict[str, tuple[str, str]] = {}


@dataclass(frozen=True)
class DepositPlan:
    """The two transactions a wallet sends to deposit G$ for a holder: approve the vault, then deposit."""

    holder: Holder
    amount: int
    approve: dict[str, Any]
    deposit: dict[str, Any]


@dataclass(frozen=True)
class RecordedDeposit:
    """A deposit as recorded, and whether this call is the one that credited it."""

    deposit: Deposit
    credited_now: bool


@dataclass(frozen=True)
class DepositProgress:
    """Where a deposit stands: ``sent`` (not mined yet), ``confirming`` (mined, ``confirmations`` of
    ``required``), or ``credited`` (the holder holds ``amount``)."""

    state: Literal["sent", "confirming", "credited"]
    tx_hash: str
    confirmations: int = 0
    required: int = 0
    amount: int = 0


async def prepare(holder: Holder, amount: int, chain: ChainClient) -> DepositPlan:
    """The unsigned approve and deposit transactions by which the holder's wallet deposits ``amount`` G$, once the
    chain shows the wallet holds that much, so the wallet is never asked to approve a deposit that would revert.
    Refused: Invalid ``insufficient_wallet_balance`` (the wallet holds less; ``walletBalance`` says how much),
    Unavailable ``chain_unavailable``."""
    try:
        held = await chain.token_balance(Token.GS, holder.wallet)
    except ChainUnavailable:
        raise chain_unavailable() from None
    if amount > held:
        raise Invalid("insufficient_wallet_balance",
                      f"Your wallet holds {to_decimal_string(held)} {Token.GS}; the amount is more than that.",
                      field="amount", walletBalance=to_decimal_string(held))
    return DepositPlan(holder=holder, amount=amount,
                       approve=chain.build_approve_tx(holder.wallet, Token.GS, amount),
                       deposit=chain.build_deposit_tx(holder.wallet, Token.GS, amount, holder.account_ref))


async def credit(holder: Holder, tx_hash: str, chain: ChainClient, now: datetime) -> RecordedDeposit:
    """Credit the holder with the G$ deposit ``tx_hash`` (lower-case, see ``TxHash``) its wallet made to the vault,
    once: ``credited`` by this call (``credited_now``) or before it (by the watcher, a concurrent call or an earlier
    one: the same deposit, credited once), or ``pending`` while its confirmations are missing (the watcher credits
    it then).

    Refused: Invalid ``invalid_deposit`` (the transaction is not such a deposit: failed, not to
    the vault, another sender, token or account), NotFound ``transaction_not_found`` (not mined, or not on this
    chain), Conflict ``already_credited`` (credited before, and not as this holder's own deposit), Unavailable
    ``chain_unavailable``."""
    existing = await Deposit.get_or_none(tx_hash=tx_hash)
    if existing is not None and existing.status == DepositStatus.CREDITED:
        return _credited_before(holder, existing)
    try:
        receipt = await chain.get_receipt(tx_hash)
        head = await chain.block_number()
    except ChainUnavailable:
        raise chain_unavailable() from None
    if receipt is None:
        raise NotFound("transaction_not_found",
                       "No mined transaction has this hash on adnet's chain; if it was just sent, retry once mined.")
    if receipt["status"] != 1:
        raise _invalid("The transaction failed on the chain.")
    if (receipt.get("to") or "").lower() != chain.vault_address:
        raise _invalid("The transaction was not sent to adnet's vault.")
    events = chain.deposits_in(receipt)
    if not events:
        raise _invalid("The transaction made no deposit to the vault.")
    event = events[0]
    if event.sender != holder.wallet:
        raise _invalid("The deposit was made by another wallet.")
    if event.token_symbol != Token.GS:
        raise _invalid("Top-ups are in G$; this deposit is in another token.")
    if event.account_ref != holder.account_ref:
        raise _invalid(f"The deposit credits another account; use the accountRef of this {holder.kind}.")
    recorded = await record_deposit(event, confirmed=head - event.block_number >= chain.confirmations, now=now)
    log.info("deposit checked %s=%s tx=%s status=%s credited_now=%s", holder.kind, holder.id,
             recorded.deposit.tx_hash, recorded.deposit.status.value, recorded.credited_now)
    return recorded


def _credited_before(holder: Holder, deposit: Deposit) -> RecordedDeposit:
    """A deposit credited before this call: the holder's own (its wallet's G$ deposit for its account), answered as
    it stands; anyone else's, Conflict ``already_credited``."""
    own = (deposit.sender.lower() == holder.wallet and deposit.account_ref.lower() == holder.account_ref
           and deposit.token_symbol == Token.GS)
    if not own:
        raise Conflict("already_credited",
                       "This transaction was credited before, not as this wallet's deposit to this account.",
                       field="txHash", depositId=deposit.id)
    return RecordedDeposit(deposit, credited_now=False)


async def progress(holder: Holder, tx_hash: str, chain: ChainClient, now: datetime) -> DepositProgress:
    """``credit`` the deposit ``tx_hash`` if the chain shows it, and say where it stands: not mined yet is ``sent``,
    the holder's deposit credited before is ``credited``; other refusals propagate."""
    try:
        deposit = (await credit(holder, tx_hash, chain, now)).deposit
    except NotFound as exc:
        if exc.code != "transaction_not_found":
            raise
        return DepositProgress("sent", tx_hash)
    if deposit.status == DepositStatus.CREDITED:
        return DepositProgress("credited", deposit.tx_hash, amount=int(deposit.amount))
    try:
        confirmations = max(0, await chain.block_number() - deposit.block_number)
    except ChainUnavailable:
        confirmations = 0
    return DepositProgress("confirming", deposit.tx_hash, confirmations=confirmations, required=chain.confirmations,
                           amount=int(deposit.amount))


async def record_deposit(event: DepositEvent, *, confirmed: bool, now: datetime) -> RecordedDeposit:
    """Record a vault ``Deposited`` event and, once ``confirmed``, credit it to the site or advertiser its
    accountRef names. Safe to call any number of times, concurrently, from the watcher and the API."""
    owner = await _owner_of(event.account_ref)
    try:
        async with in_transaction():
            deposit = await Deposit.create(
                id=new_id("dep"), tx_hash=event.tx_hash, log_index=event.log_index, block_number=event.block_number,
                sender=event.sender, token=event.token, token_symbol=event.token_symbol or "?",
                amount=Decimal(event.amount), account_ref=event.account_ref,
                site_id=owner[1] if owner and owner[0] == "site" else None,
                advertiser_id=owner[1] if owner and owner[0] == "advertiser" else None,
                status=DepositStatus.PENDING, created_at=now,
            )
    except IntegrityError:
        deposit = await Deposit.get(tx_hash=event.tx_hash)
        if deposit.log_index != event.log_index:
            log.warning("second deposit in one transaction not credited tx=%s log_index=%d", event.tx_hash,
                        event.log_index)
            return RecordedDeposit(deposit, False)
    if not confirmed or deposit.status != DepositStatus.PENDING:
        return RecordedDeposit(deposit, False)
    account = _ledger_account(owner, deposit.token_symbol)
    if account is None:
        log.warning("deposit to an unknown account stays pending tx=%s account_ref=%s", deposit.tx_hash,
                    deposit.account_ref)
        return RecordedDeposit(deposit, False)
    amount = int(deposit.amount)
    async with in_transaction():
        credited = await Deposit.filter(id=deposit.id, status=DepositStatus.PENDING).update(
            status=DepositStatus.CREDITED, credited_at=now)
        if credited:
            await ledger.book("deposit", deposit.tx_hash, [(ledger.external(account.token), -amount),
                                                           (account, amount)], now=now,
                              memo=f"deposit from {deposit.sender}")
            await outbox.record(await _holder_wallet(account), WebhookEventType.DEPOSIT_CREDITED, {
                "deposit_id": deposit.id, f"{account.kind}_id": account.owner, "tx_hash": deposit.tx_hash,
                "token": account.token, "amount": to_decimal_string(amount)}, now)
    await deposit.refresh_from_db()
    if credited:
        log.info("deposit credited tx=%s account=%s amount=%d token=%s", deposit.tx_hash, account, amount,
                 account.token)
    return RecordedDeposit(deposit, bool(credited))


async def _holder_wallet(account: ledger.AccountKey) -> str:
    """The wallet of the site (its publisher's) or advertiser whose ledger account ``account`` is."""
    if account.kind == "site":
        found = await Site.filter(id=account.owner).first().values_list("publisher__wallet", flat=True)
    else:
        found = await Advertiser.filter(id=account.owner).first().values_list("wallet", flat=True)
    return str(found)


def _ledger_account(owner: tuple[str, str] | None, token_symbol: str) -> ledger.AccountKey | None:
    if owner is None or token_symbol not in Token.__members__.values():
        return None
    kind, owner_id = owner
    token = Token(token_symbol)
    return ledger.site(owner_id, token) if kind == "site" else ledger.advertiser(owner_id, token)


async def _owner_of(ref: str) -> tuple[str, str] | None:
    """Whose account an accountRef names. Hashes cannot be reversed, so the map is built from every site and
    advertiser id, and rebuilt when a ref is unknown (a site registered since)."""
    ref = ref.lower()
    if ref not in _owners:
        for site_id in await Site.all().values_list("id", flat=True):
            _owners.setdefault(account_ref(str(site_id)), ("site", str(site_id)))
        for advertiser_id in await Advertiser.all().values_list("id", flat=True):
            _owners.setdefault(account_ref(str(advertiser_id)), ("advertiser", str(advertiser_id)))
    return _owners.get(ref)


def _invalid(message: str) -> Invalid:
    return Invalid("invalid_deposit", message, field="txHash")
