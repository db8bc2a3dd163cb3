"""Deposits: tokens a wallet sends to the vault, credited to a site or an advertiser exactly once.

A wallet calls the vault's ``deposit(token, amount, accountRef)``; ``accountRef`` is keccak256 of the siteId or
advertiserId (``account_ref_for_site`` / ``account_ref_for_advertiser``), so the event itself says whose account
to credit. Two paths lead here and both may see the same transaction: the watcher (every ``Deposited`` event, once
confirmed) and the publisher API's top-up (``verify_and_record_deposit``, as soon as the wallet has the hash).

Guarantees, by the database: one Deposit row per transaction hash (unique key), credited by one conditional update
``pending → credited`` together with one ``deposit`` ledger transaction whose reference is the hash (unique too).
A deposit is ``pending`` until it has ``chain.confirmations`` blocks on top of its own.

Limits: one transaction credits one deposit (the first ``Deposited`` event of the vault in it); a deposit whose
accountRef names no site or advertiser is recorded and stays pending, for an operator to resolve.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal

from eth_utils import keccak
from tortoise.exceptions import IntegrityError
from tortoise.transactions import in_transaction

from adnet import ledger
from adnet.chain.client import ChainClient, ChainUnavailable, DepositEvent
from adnet.errors import ApiError, bad_request, conflict
from adnet.ids import new_id
from adnet.models import Advertiser, Deposit, DepositStatus, Site
from adnet.wallets import InvalidWallet, normalize_wallet

log = logging.getLogger(__name__)

_TX_HASH = re.compile(r"^0x[0-9a-fA-F]{64}$")
TOP_UP_SYMBOL = "G$"
# accountRef -> ("site" | "advertiser", id); rebuilt from the database on a miss.
_owners: dict[str, tuple[str, str]] = {}


@dataclass(frozen=True)
class RecordedDeposit:
    """A deposit as recorded, and whether this call is the one that credited it."""

    deposit: Deposit
    credited_now: bool


def account_ref_for_site(site_id: str) -> str:
    """The vault ``accountRef`` that credits a site: keccak256 of its siteId (UTF-8), 0x-hex."""
    return "0x" + keccak(text=site_id).hex()


def account_ref_for_advertiser(advertiser_id: str) -> str:
    """The vault ``accountRef`` that credits an advertiser: keccak256 of its advertiserId (UTF-8), 0x-hex."""
    return "0x" + keccak(text=advertiser_id).hex()


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
    await deposit.refresh_from_db()
    if credited:
        log.info("deposit credited tx=%s account=%s amount=%d token=%s", deposit.tx_hash, account, amount,
                 account.token)
    return RecordedDeposit(deposit, bool(credited))


async def verify_and_record_deposit(chain: ChainClient, tx_hash: str, expected_sender: str,
                                    expected_account_ref: str, now: datetime) -> Deposit:
    """Check on the chain that ``tx_hash`` is a G$ deposit to the vault by ``expected_sender`` for
    ``expected_account_ref``, and credit it once. Returns the Deposit: ``credited``, or ``pending`` while its
    confirmations are missing (answer 202 and let the client ask again).

    Raises ApiError: 400 ``invalid_tx_hash`` / ``invalid_deposit`` (the transaction is not such a deposit: failed,
    not to the vault, other sender, token or account), 404 ``transaction_not_found`` (not mined, or not on this
    chain), 409 ``already_credited`` (credited before this call), 503 ``chain_unavailable``."""
    if not isinstance(tx_hash, str) or not _TX_HASH.match(tx_hash):
        raise bad_request("invalid_tx_hash", "txHash is 0x followed by 64 hexadecimal digits.", field="txHash")
    tx_hash = tx_hash.lower()
    try:
        expected_sender = normalize_wallet(expected_sender)
    except InvalidWallet as exc:
        raise bad_request("invalid_wallet", str(exc), field="wallet") from None
    existing = await Deposit.get_or_none(tx_hash=tx_hash)
    if existing is not None and existing.status == DepositStatus.CREDITED:
        raise _already_credited(existing)
    try:
        receipt = await chain.get_receipt(tx_hash)
        head = await chain.block_number()
    except ChainUnavailable:
        raise ApiError(503, "chain_unavailable", "The chain cannot be reached; nothing was changed, retry later.",
                       retryAfter=10) from None
    if receipt is None:
        raise ApiError(404, "transaction_not_found",
                       "No mined transaction has this hash on adnet's chain; if it was just sent, retry once mined.")
    if receipt["status"] != 1:
        raise _invalid("The transaction failed on the chain.")
    if (receipt.get("to") or "").lower() != chain.vault_address:
        raise _invalid("The transaction was not sent to adnet's vault.")
    events = chain.deposits_in(receipt)
    if not events:
        raise _invalid("The transaction made no deposit to the vault.")
    event = events[0]
    if event.sender != expected_sender:
        raise _invalid("The deposit was made by another wallet.")
    if event.token_symbol != TOP_UP_SYMBOL:
        raise _invalid("Top-ups are in G$; this deposit is in another token.")
    if event.account_ref != expected_account_ref.lower():
        raise _invalid("The deposit credits another account; use the accountRef of this site.")
    recorded = await record_deposit(event, confirmed=head - event.block_number >= chain.confirmations, now=now)
    if recorded.deposit.status == DepositStatus.CREDITED and not recorded.credited_now:
        raise _already_credited(recorded.deposit)
    return recorded.deposit


def _ledger_account(owner: tuple[str, str] | None, token_symbol: str) -> ledger.AccountKey | None:
    if owner is None or token_symbol not in ledger.TOKENS:
        return None
    kind, owner_id = owner
    return ledger.site(owner_id, token_symbol) if kind == "site" else ledger.advertiser(owner_id, token_symbol)


async def _owner_of(account_ref: str) -> tuple[str, str] | None:
    """Whose account an accountRef names. Hashes cannot be reversed, so the map is built from every site and
    advertiser id, and rebuilt when a ref is unknown (a site registered since)."""
    account_ref = account_ref.lower()
    if account_ref not in _owners:
        for site_id in await Site.all().values_list("id", flat=True):
            _owners.setdefault(account_ref_for_site(str(site_id)), ("site", str(site_id)))
        for advertiser_id in await Advertiser.all().values_list("id", flat=True):
            _owners.setdefault(account_ref_for_advertiser(str(advertiser_id)), ("advertiser", str(advertiser_id)))
    return _owners.get(account_ref)


def _invalid(message: str) -> ApiError:
    return bad_request("invalid_deposit", message, field="txHash")


def _already_credited(deposit: Deposit) -> ApiError:
    return conflict("already_credited", "This transaction has already been credited.", depositId=deposit.id)
