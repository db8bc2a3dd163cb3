"""Signed claims: the only way value leaves adnet.

A claim is an EIP-712 voucher (domain ``{name: "adnet", version: "1", chainId, verifyingContract: vault}``, type
``Claim(address recipient,address token,uint256 amount,bytes32 claimRef,uint256 nonce,uint256 deadline)``) that
its recipient redeems on the vault. Its life in the books:

- ``issue_claim`` books ``claim_issue``: the amount leaves its sources (a task's pool, a site's earnings) for the
  ``claims`` account, in the caller's database transaction, so a completion or withdrawal and its claim commit
  together or not at all;
- the watcher sees the vault's ``Claimed`` event and calls ``mark_redeemed``, which books ``claim_redeem``
  (``claims`` → ``external``): the tokens have left the vault;
- a claim not redeemed by its deadline is expired by ``expire_due``, which books ``claim_expire``, the exact
  reverse of its ``claim_issue``: a withdrawal returns to the site, a reward to its pool.

``expire_due`` must be given the chain's time (the timestamp of a confirmed block), never the wall clock: the vault
refuses a claim once ``block.timestamp > deadline``, and every later block is later still, so a claim expired on
that basis can never be redeemed afterwards. Only a reorganisation deeper than the confirmations could undo that
block; ``mark_redeemed`` then takes the amount back from where the expiry returned it (see its docstring).

Each claimRef is signed once: asking again returns the stored claim. Nonces are a per-signer sequence taken by an
atomic increment, so concurrent claims never share one and all of them stay redeemable.

Signing is on the hot path of every paid completion, so it does the EIP-712 arithmetic directly: the domain
separator is computed once per (chain, vault), the struct hash is one keccak over fixed 32-byte words (eth-hash's
keccak, the one eth-utils wraps in argument conversions that cost as much as the hash), and the signer's
libsecp256k1 key (coincurve) is built once per process. ``claim_typed_data`` stays the definition: the tests
check that both give the same digest and signature.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from functools import lru_cache
from typing import Any

import coincurve
from eth_account.signers.local import LocalAccount
from eth_hash.auto import keccak
from eth_utils import to_checksum_address
from tortoise.exceptions import IntegrityError
from tortoise.transactions import in_transaction

from adnet.chain.client import ChainClient
from adnet.core.amounts import Token, to_decimal_string
from adnet.core.ids import new_id
from adnet.core.wallets import normalize_wallet
from adnet.db import sql
from adnet.money import ledger
from adnet.money.models import (
    Claim,
    ClaimPurpose,
    ClaimStatus,
    LedgerPosting,
    SignerNonce,
    Withdrawal,
    WithdrawalStatus,
)
from adnet.webhooks import outbox
from adnet.webhooks.models import WebhookEventType

log = logging.getLogger(__name__)

DOMAIN_NAME = "adnet"
DOMAIN_VERSION = "1"
CLAIM_TYPES = {
    "EIP712Domain": [
        {"name": "name", "type": "string"},
        {"name": "version", "type": "string"},
        {"name": "chainId", "type": "uint256"},
        {"name": "verifyingContract", "type": "address"},
    ],
    "Claim": [
        {"name": "recipient", "type": "address"},
        {"name": "token", "type": "address"},
        {"name": "amount", "type": "uint256"},
        {"name": "claimRef", "type": "bytes32"},
        {"name": "nonce", "type": "uint256"},
        {"name": "deadline", "type": "uint256"},
    ],
}
_BYTES32 = re.compile(r"^0x[0-9a-f]{64}$")
_PURPOSES = frozenset(item.value for item in ClaimPurpose)


def _type_hash(name: str) -> bytes:
    fields = ",".join(f"{field['type']} {field['name']}" for field in CLAIM_TYPES[name])
    return keccak(f"{name}({fields})".encode())


_DOMAIN_TYPE_HASH = _type_hash("EIP712Domain")
_CLAIM_TYPE_HASH = _type_hash("Claim")


class ClaimConflict(Exception):
    """A claimRef already names a claim with other terms: a bug in the caller, never a client's doing."""


def claim_ref_for(purpose: str, record_id: str) -> str:
    """The claimRef of a completion, withdrawal or interaction: keccak256 of a domain-separated string, so two
    records (or two purposes) never share one, and the same record always gets the same one."""
    if purpose not in _PURPOSES:
        raise ValueError(f"unknown claim purpose {purpose!r}")
    return "0x" + keccak(f"adnet/claim-ref/v1/{purpose}/{record_id}".encode()).hex()


def claim_typed_data(*, chain_id: int, vault: str, recipient: str, token: str, amount: int, claim_ref: str,
                     nonce: int, deadline: int) -> dict[str, Any]:
    """The EIP-712 message of a claim, as eth-account and wallets take it."""
    return {
        "types": CLAIM_TYPES,
        "primaryType": "Claim",
        "domain": {"name": DOMAIN_NAME, "version": DOMAIN_VERSION, "chainId": chain_id,
                   "verifyingContract": to_checksum_address(vault)},
        "message": {"recipient": to_checksum_address(recipient), "token": to_checksum_address(token),
                    "amount": amount, "claimRef": bytes.fromhex(claim_ref[2:]), "nonce": nonce,
                    "deadline": deadline},
    }


def claim_digest(**fields: Any) -> str:
    """The 32-byte hash the signer signs (hex); equals the vault's ``claimDigest`` for the same fields."""
    return "0x" + claim_hash(**fields).hex()


def claim_hash(*, chain_id: int, vault: str, recipient: str, token: str, amount: int, claim_ref: str, nonce: int,
               deadline: int) -> bytes:
    """EIP-712 ``hashTypedDataV4`` of a claim: every field of ``Claim`` is one 32-byte word, so the struct hash is
    a single keccak of their concatenation."""
    struct = keccak(b"".join((_CLAIM_TYPE_HASH, _address_word(recipient), _address_word(token),
                              amount.to_bytes(32, "big"), bytes.fromhex(claim_ref[2:]), nonce.to_bytes(32, "big"),
                              deadline.to_bytes(32, "big"))))
    return keccak(b"\x19\x01" + domain_separator(chain_id, vault.lower()) + struct)


@lru_cache(maxsize=16)
def domain_separator(chain_id: int, vault: str) -> bytes:
    """The EIP-712 domain separator of adnet's claims on one chain and vault (the vault's ``_domainSeparatorV4``)."""
    return keccak(b"".join((_DOMAIN_TYPE_HASH, keccak(DOMAIN_NAME.encode()), keccak(DOMAIN_VERSION.encode()),
                            chain_id.to_bytes(32, "big"), _address_word(vault))))


def sign_claim_hash(signer: LocalAccount, digest: bytes) -> str:
    """The 65-byte signature ``r ‖ s ‖ v`` (v 27 or 28, as eth-account and OpenZeppelin's ECDSA take it), hex.
    libsecp256k1 signs deterministically (RFC 6979) with a low ``s``, as eth-account does."""
    signature = _signing_key(signer).sign_recoverable(digest, hasher=None)
    return "0x" + (signature[:64] + bytes((signature[64] + 27,))).hex()


@lru_cache(maxsize=4)
def _signing_key(signer: LocalAccount) -> coincurve.PrivateKey:
    # Building a key derives its public key (an EC multiplication), which eth-keys does again for every signature.
    return coincurve.PrivateKey(bytes(signer.key))


def _address_word(address: str) -> bytes:
    return bytes(12) + bytes.fromhex(address[2:])


@dataclass(frozen=True)
class ClaimTerms:
    """What one claim of ``issue_claims`` pays, to whom, from which sources, and when it is issued."""

    purpose: ClaimPurpose
    recipient: str
    token_symbol: str
    amount: int
    claim_ref: str
    sources: list[tuple[ledger.AccountKey, int]]
    now: datetime


async def issue_claim(
    *,
    purpose: ClaimPurpose,
    recipient: str,
    token_symbol: str,
    amount: int,
    claim_ref: str,
    sources: list[tuple[ledger.AccountKey, int]],
    now: datetime,
    chain: ChainClient,
) -> Claim:
    """Sign a claim paying ``amount`` of ``token_symbol`` to ``recipient`` and book it from ``sources``.

    Call inside the caller's ``in_transaction()``, with the record the claim pays for. The signer's next nonce,
    the signature, the Claim row and the ``claim_issue`` booking happen in one savepoint; a failure (for example
    ``ledger.InsufficientFunds`` from a source) leaves nothing behind, the nonce included. A claimRef that was
    issued before returns its stored claim unchanged (never a second signature); with other terms it raises
    ClaimConflict."""
    recipient = normalize_wallet(recipient)
    terms = ClaimTerms(purpose, recipient, token_symbol, amount, claim_ref, sources, now)
    try:
        # The claimRef's unique key answers "issued before?" (no read first): a repeat fails on the insert, before
        # any money moves, and its savepoint takes the nonce back.
        async with in_transaction():
            claim = (await issue_claims([terms], chain=chain))[0]
    except IntegrityError:
        # This claimRef was issued before (or just now by a concurrent request): that claim stands, unchanged.
        existing = await Claim.get_or_none(claim_ref=claim_ref)
        if existing is None:
            raise
        return _same_terms(existing, purpose, recipient, token_symbol, amount)
    return claim


async def issue_claims(claims: list[ClaimTerms], *, chain: ChainClient) -> list[Claim]:
    """Sign and book several claims at once, in the caller's transaction and without a savepoint of their own:
    consecutive nonces from one increment, the Claim rows in one insert, their ``claim_issue`` bookings through
    ``ledger.book_many``. Recipients are lower-case addresses (``normalize_wallet``). Any failure (a claimRef
    issued before: IntegrityError; a source short of funds) raises, and the caller's transaction must then be
    dropped; ``issue_claim`` is this for one claim, in a savepoint, with a repeat answered by the stored claim."""
    if not claims:
        return []
    for terms in claims:
        _check_terms(terms.purpose, terms.token_symbol, terms.amount, terms.claim_ref, terms.sources)
    signer = chain.signer.address.lower()
    first_nonce = await _take_nonces(signer, len(claims))
    rows = []
    for nonce, terms in enumerate(claims, start=first_nonce):
        token = chain.token_address(terms.token_symbol)
        deadline = int(terms.now.timestamp()) + chain.claim_deadline_seconds
        digest = claim_hash(chain_id=chain.chain_id, vault=chain.vault_address, recipient=terms.recipient,
                            token=token, amount=terms.amount, claim_ref=terms.claim_ref, nonce=nonce,
                            deadline=deadline)
        rows.append({
            "id": new_id("clm"), "claim_ref": terms.claim_ref, "purpose": terms.purpose, "chain_id": chain.chain_id,
            "vault": chain.vault_address, "signer": signer, "nonce": nonce, "recipient": terms.recipient,
            "token": token, "token_symbol": terms.token_symbol, "amount": Decimal(terms.amount), "deadline": deadline,
            "signature": sign_claim_hash(chain.signer, digest), "status": ClaimStatus.ISSUED,
            "created_at": terms.now, "redeemed_at": None, "redeemed_tx": None,
        })
    issued = await sql.insert_rows(Claim, rows)
    await ledger.book_many([
        ledger.Booking("claim_issue", terms.claim_ref,
                       [*((source, -share) for source, share in terms.sources),
                        (ledger.outstanding_claims(terms.token_symbol), terms.amount)],
                       terms.now, memo=f"{terms.purpose.value} claim to {terms.recipient}")
        for terms in claims])
    for claim in issued:
        log.info("claim issued claim_ref=%s purpose=%s nonce=%d amount=%d token=%s", claim.claim_ref,
                 claim.purpose.value, claim.nonce, int(claim.amount), claim.token_symbol)
    return issued


async def mark_redeemed(claim_ref: str, tx_hash: str, now: datetime) -> bool:
    """Record that the vault paid ``claim_ref`` (its ``Claimed`` event, in ``tx_hash``). Returns whether this call
    recorded it; a second call, or a claimRef that is not ours, changes nothing.

    Normally the claim is ``issued``: it becomes ``redeemed`` and ``claim_redeem`` moves the amount from
    ``claims`` to ``external``. A claim already ``expired`` in the books can only be redeemed after a chain
    reorganisation deeper than the confirmations (see the module docstring); its amount went back to its sources,
    so ``claim_redeem`` takes it from them again. If a source no longer holds it, ``ledger.InsufficientFunds``
    is raised and nothing changes: an operator must settle that loss by hand."""
    async with in_transaction():
        if await Claim.filter(claim_ref=claim_ref, status=ClaimStatus.ISSUED).update(
                status=ClaimStatus.REDEEMED, redeemed_at=now, redeemed_tx=tx_hash):
            claim = await Claim.get(claim_ref=claim_ref)
            amount = int(claim.amount)
            await ledger.book("claim_redeem", claim_ref, [(ledger.outstanding_claims(claim.token_symbol), -amount),
                                                          (ledger.external(claim.token_symbol), amount)], now=now)
            if await Withdrawal.filter(claim_id=claim.id, status=WithdrawalStatus.ISSUED).update(
                    status=WithdrawalStatus.REDEEMED, settled_at=now):
                await _tell_withdrawal(claim.id, WebhookEventType.WITHDRAWAL_REDEEMED, now, tx_hash=tx_hash)
            log.info("claim redeemed claim_ref=%s tx=%s", claim_ref, tx_hash)
            return True
        if await Claim.filter(claim_ref=claim_ref, status=ClaimStatus.EXPIRED).update(
                status=ClaimStatus.REDEEMED, redeemed_at=now, redeemed_tx=tx_hash):
            claim = await Claim.get(claim_ref=claim_ref)
            sources = [(key, amount) for key, amount in await _issue_legs(claim_ref) if amount < 0]
            await ledger.book("claim_redeem", claim_ref,
                              [*sources, (ledger.external(claim.token_symbol), int(claim.amount))], now=now,
                              memo="redeemed after expiry in the books (chain reorganisation)")
            await Withdrawal.filter(claim_id=claim.id, status=WithdrawalStatus.RELEASED).update(
                status=WithdrawalStatus.REDEEMED, settled_at=now)
            log.error("claim redeemed after it expired in the books claim_ref=%s tx=%s", claim_ref, tx_hash)
            return True
    return False


async def _tell_withdrawal(claim_id: Any, event_type: WebhookEventType, now: datetime, **data: Any) -> None:
    """Write a webhook event about the withdrawal a claim paid (inside the transaction that settled it)."""
    withdrawal = await Withdrawal.get(claim_id=claim_id)
    holder = {"site_id": withdrawal.site_id} if withdrawal.site_id else {
        "advertiser_id": withdrawal.advertiser_id}
    await outbox.record(withdrawal.wallet, event_type, {
        "withdrawal_id": withdrawal.id, **holder, "token": withdrawal.token_symbol,
        "amount": to_decimal_string(int(withdrawal.amount)), "status": withdrawal.status.value, **data}, now)


async def expire_due(now: datetime) -> int:
    """Expire every issued claim whose deadline is before ``now``, which must be the chain's time (the timestamp
    of a confirmed block), and return how many. Each expiry books ``claim_expire``, the exact reverse of the
    claim's ``claim_issue``, and releases its withdrawal; each claim is expired at most once, also when several
    watchers run this at the same time."""
    cutoff = int(now.timestamp())
    due = await Claim.filter(status=ClaimStatus.ISSUED, deadline__lt=cutoff).values_list("id", "claim_ref")
    expired = 0
    for claim_id, claim_ref in due:
        async with in_transaction():
            if not await Claim.filter(id=claim_id, status=ClaimStatus.ISSUED).update(status=ClaimStatus.EXPIRED):
                continue
            reversal = [(key, -amount) for key, amount in await _issue_legs(claim_ref)]
            await ledger.book("claim_expire", claim_ref, reversal, now=now)
            if await Withdrawal.filter(claim_id=claim_id, status=WithdrawalStatus.ISSUED).update(
                    status=WithdrawalStatus.RELEASED, settled_at=now):
                await _tell_withdrawal(claim_id, WebhookEventType.WITHDRAWAL_RELEASED, now)
        expired += 1
        log.info("claim expired claim_ref=%s", claim_ref)
    return expired


_TAKE_NONCES = "UPDATE signer_nonce SET next_nonce = next_nonce + :count WHERE signer = :signer RETURNING next_nonce"


async def _take_nonces(signer: str, count: int) -> int:
    """Take the signer's next ``count`` nonces and return the first: one atomic increment of its row that returns
    the new value (the row is created, ignoring a conflict, on the signer's first claim), so concurrent
    transactions get distinct nonces and a rolled-back one gives its nonces back."""
    rows = await sql.fetch(_TAKE_NONCES, count=count, signer=signer)
    if not rows:
        await SignerNonce.bulk_create([SignerNonce(signer=signer, next_nonce=0)], ignore_conflicts=True)
        rows = await sql.fetch(_TAKE_NONCES, count=count, signer=signer)
    return int(rows[0]["next_nonce"]) - count


async def _issue_legs(claim_ref: str) -> list[tuple[ledger.AccountKey, int]]:
    """The postings of a claim's ``claim_issue`` transaction."""
    rows = await LedgerPosting.filter(transaction__kind="claim_issue", transaction__reference=claim_ref).values_list(
        "account__kind", "account__owner", "account__token", "amount")
    return [(ledger.AccountKey(kind, owner, token), int(amount)) for kind, owner, token, amount in rows]


def _check_terms(purpose: ClaimPurpose, token_symbol: str, amount: int, claim_ref: str,
                 sources: list[tuple[ledger.AccountKey, int]]) -> None:
    if not isinstance(purpose, ClaimPurpose):
        raise ValueError(f"unknown claim purpose {purpose!r}")
    if token_symbol not in Token.__members__.values():
        raise ValueError(f"unknown token {token_symbol!r}")
    if type(amount) is not int or amount <= 0:
        raise ValueError(f"a claim pays a positive integer amount, got {amount!r}")
    if not _BYTES32.match(claim_ref):
        raise ValueError(f"a claimRef is 0x and 64 lower-case hex digits, got {claim_ref!r}")
    if any(key.token != token_symbol or type(share) is not int or share <= 0 for key, share in sources):
        raise ValueError("every source pays a positive integer share in the claim's token")
    if sum(share for _, share in sources) != amount:
        raise ValueError("the sources must add up to the claim's amount")


def _same_terms(claim: Claim, purpose: ClaimPurpose, recipient: str, token_symbol: str, amount: int) -> Claim:
    if (claim.purpose, claim.recipient, claim.token_symbol, int(claim.amount)) != (
            purpose, recipient, token_symbol, amount):
        raise ClaimConflict(f"claimRef {claim.claim_ref} was issued with other terms")
    return claim


async def release_expired(chain: ChainClient) -> int:
    """Expire the claims whose deadline the confirmed chain time has passed (``expire_due``) and return how many:
    the chain's time is the timestamp of the newest block with ``chain.confirmations`` blocks on top."""
    confirmed = await chain.block_number() - chain.confirmations
    if confirmed < chain.deployment.deployed_block:
        return 0
    return await expire_due(datetime.fromtimestamp(await chain.block_timestamp(confirmed), UTC))
