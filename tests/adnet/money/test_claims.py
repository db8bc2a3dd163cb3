"""Claims: one signature per claimRef, distinct nonces under concurrency, exact bookings on issue, redemption
and expiry (on the app's development chain, whose blocks follow the test clock)."""

from __future__ import annotations

import asyncio
import random
from datetime import UTC, datetime
from decimal import Decimal

import pytest
from eth_abi import encode
from eth_account import Account
from eth_account.messages import encode_typed_data
from eth_keys.datatypes import PrivateKey
from eth_utils import keccak
from tortoise.exceptions import IntegrityError
from tortoise.transactions import in_transaction

from adnet.core.ids import new_id
from adnet.money import ledger
from adnet.money.claims import (
    ClaimConflict,
    ClaimTerms,
    claim_digest,
    claim_hash,
    claim_ref_for,
    claim_typed_data,
    expire_due,
    issue_claim,
    issue_claims,
    mark_redeemed,
    sign_claim_hash,
)
from adnet.money.models import Claim, ClaimPurpose, ClaimStatus, LedgerTransaction, Withdrawal, WithdrawalStatus
from tests.chain.helpers import DIGEST_VECTOR, VECTOR_DIGEST, G, funded_claim, redeem, user
from tests.factories import fund, make_site


async def issue(chain, clock, *, pool, amount, recipient=None, claim_ref=None, purpose=ClaimPurpose.COMPLETION):
    async with in_transaction():
        return await issue_claim(purpose=purpose, recipient=recipient or user(1).address, token_symbol=pool.token,
                                 amount=amount, claim_ref=claim_ref or claim_ref_for(purpose.value, new_id("tc")),
                                 sources=[(pool, amount)], now=clock.now(), chain=chain)


def at(unix_seconds: int) -> datetime:
    return datetime.fromtimestamp(unix_seconds, UTC)


def test_claim_refs_are_deterministic_and_domain_separated():
    assert claim_ref_for("completion", "tc_1") == claim_ref_for("completion", "tc_1")
    refs = {claim_ref_for("completion", "tc_1"), claim_ref_for("withdrawal", "tc_1"),
            claim_ref_for("completion", "tc_2"), claim_ref_for("interaction", "tc_1")}
    assert len(refs) == 4
    assert all(ref.startswith("0x") and len(ref) == 66 for ref in refs)
    with pytest.raises(ValueError):
        claim_ref_for("bonus", "tc_1")


def test_digest_of_the_fixed_vector_by_hand():
    """Recompute EIP-712 from its definition, independently of eth-account, for the vector the vault agreed on."""
    vector = DIGEST_VECTOR
    domain_type = keccak(text="EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)")
    domain = keccak(encode(["bytes32", "bytes32", "bytes32", "uint256", "address"],
                           [domain_type, keccak(text="adnet"), keccak(text="1"), vector["chain_id"], vector["vault"]]))
    claim_type = keccak(text="Claim(address recipient,address token,uint256 amount,bytes32 claimRef,uint256 nonce,"
                             "uint256 deadline)")
    struct = keccak(encode(["bytes32", "address", "address", "uint256", "bytes32", "uint256", "uint256"],
                           [claim_type, vector["recipient"], vector["token"], vector["amount"],
                            bytes.fromhex(vector["claim_ref"][2:]), vector["nonce"], vector["deadline"]]))
    assert "0x" + keccak(b"\x19\x01" + domain + struct).hex() == VECTOR_DIGEST
    assert claim_digest(**vector) == VECTOR_DIGEST


def test_the_direct_digest_and_signature_equal_eth_accounts_typed_data_signing():
    """``claim_hash``/``sign_claim_hash`` (precomputed domain, cached key) against eth-account's general EIP-712
    path, for varied fields: same digest, same signature, recovering to the signer."""
    rng = random.Random(5)
    signer = Account.from_key(bytes(range(1, 33)))
    for _ in range(20):
        fields = {"chain_id": rng.choice([1, 31337, 131277322940537]), "vault": f"0x{rng.getrandbits(160):040x}",
                  "recipient": f"0x{rng.getrandbits(160):040x}", "token": f"0x{rng.getrandbits(160):040x}",
                  "amount": rng.getrandbits(rng.choice([1, 64, 256])), "claim_ref": f"0x{rng.getrandbits(256):064x}",
                  "nonce": rng.getrandbits(rng.choice([1, 40])), "deadline": rng.getrandbits(40)}
        signable = encode_typed_data(full_message=claim_typed_data(**fields))
        assert claim_hash(**fields) == keccak(b"\x19" + signable.version + signable.header + signable.body)
        expected = signer.sign_message(signable).signature.to_0x_hex()
        assert sign_claim_hash(signer, claim_hash(**fields)) == expected
        assert Account.recover_message(signable, signature=expected) == signer.address


def test_eth_keys_signs_with_coincurve():
    assert type(PrivateKey(bytes(range(1, 33))).backend).__name__ == "CoinCurveECCBackend"


async def test_the_signature_recovers_to_the_signer(chain, clock):
    claim = await funded_claim(chain, clock, recipient=user(1).address)
    typed = claim_typed_data(chain_id=int(claim.chain_id), vault=claim.vault, recipient=claim.recipient,
                             token=claim.token, amount=int(claim.amount), claim_ref=claim.claim_ref,
                             nonce=int(claim.nonce), deadline=int(claim.deadline))
    signer = Account.recover_message(encode_typed_data(full_message=typed), signature=claim.signature)
    assert signer.lower() == chain.signer.address.lower() == claim.signer
    assert claim.deadline == int(clock.now().timestamp()) + chain.claim_deadline_seconds


async def test_a_claim_ref_is_signed_once(chain, clock):
    pool = ledger.task_pool(new_id("task"))
    await fund(pool, 5 * G, now=clock.now())
    claim_ref = claim_ref_for("completion", new_id("tc"))
    first = await issue(chain, clock, pool=pool, amount=2 * G, claim_ref=claim_ref)
    clock.advance(hours=1)
    again = await issue(chain, clock, pool=pool, amount=2 * G, claim_ref=claim_ref)
    assert (again.id, again.signature, again.nonce, again.deadline) == (
        first.id, first.signature, first.nonce, first.deadline)
    assert await Claim.filter(claim_ref=claim_ref).count() == 1
    assert await LedgerTransaction.filter(kind="claim_issue", reference=claim_ref).count() == 1
    assert await ledger.balance(pool) == 3 * G
    assert await ledger.balance(ledger.outstanding_claims("G$")) == 2 * G


async def test_the_same_claim_ref_with_other_terms_is_a_conflict(chain, clock):
    pool = ledger.task_pool(new_id("task"))
    await fund(pool, 5 * G, now=clock.now())
    claim_ref = claim_ref_for("completion", new_id("tc"))
    await issue(chain, clock, pool=pool, amount=G, claim_ref=claim_ref)
    with pytest.raises(ClaimConflict):
        await issue(chain, clock, pool=pool, amount=2 * G, claim_ref=claim_ref)
    with pytest.raises(ClaimConflict):
        await issue(chain, clock, pool=pool, amount=G, claim_ref=claim_ref, recipient=user(2).address)


async def test_sources_must_pay_the_whole_amount_in_the_claims_token(chain, clock):
    pool = ledger.task_pool(new_id("task"))
    with pytest.raises(ValueError):
        async with in_transaction():
            await issue_claim(purpose=ClaimPurpose.COMPLETION, recipient=user(1).address, token_symbol="G$",
                              amount=2 * G, claim_ref=claim_ref_for("completion", "x"), sources=[(pool, G)],
                              now=clock.now(), chain=chain)
    with pytest.raises(ValueError):
        async with in_transaction():
            await issue_claim(purpose=ClaimPurpose.COMPLETION, recipient=user(1).address, token_symbol="SOV",
                              amount=G, claim_ref=claim_ref_for("completion", "x"), sources=[(pool, G)],
                              now=clock.now(), chain=chain)


async def test_an_unpaid_claim_leaves_nothing_behind(chain, clock):
    pool = ledger.task_pool(new_id("task"))
    await fund(pool, G, now=clock.now())
    with pytest.raises(ledger.InsufficientFunds):
        await issue(chain, clock, pool=pool, amount=2 * G)
    assert await Claim.all().count() == 0
    claim = await issue(chain, clock, pool=pool, amount=G)
    assert claim.nonce == 0


async def test_thirty_concurrent_claims_take_distinct_nonces_and_all_redeem(chain, clock):
    pool = ledger.task_pool(new_id("task"))
    await fund(pool, 30 * G, now=clock.now())
    claims = await asyncio.gather(*(issue(chain, clock, pool=pool, amount=G) for _ in range(30)))
    assert sorted(claim.nonce for claim in claims) == list(range(30))
    assert await ledger.balance(pool) == 0
    recipient = user(1)
    before = await chain.token_balance("G$", recipient.address)
    for claim in claims:
        await redeem(chain, claim, recipient)
    assert await chain.token_balance("G$", recipient.address) == before + 30 * G


async def test_claims_issued_together_are_each_as_if_issued_alone(chain, clock):
    pool = ledger.task_pool(new_id("task"))
    await fund(pool, 10 * G, now=clock.now())
    first = await issue(chain, clock, pool=pool, amount=G)
    terms = [ClaimTerms(ClaimPurpose.COMPLETION, user(n).address.lower(), "G$", n * G,
                        claim_ref_for("completion", new_id("tc")), [(pool, n * G)], clock.now()) for n in (1, 2, 3)]
    async with in_transaction():
        claims = await issue_claims(terms, chain=chain)
    assert [claim.nonce for claim in claims] == [first.nonce + 1, first.nonce + 2, first.nonce + 3]
    for claim, term in zip(claims, terms, strict=True):
        typed = claim_typed_data(chain_id=chain.chain_id, vault=chain.vault_address, recipient=term.recipient,
                                 token=claim.token, amount=term.amount, claim_ref=term.claim_ref, nonce=claim.nonce,
                                 deadline=first.deadline)
        assert Account.recover_message(encode_typed_data(full_message=typed), signature=claim.signature) == (
            chain.signer.address)
        assert await LedgerTransaction.filter(kind="claim_issue", reference=term.claim_ref).count() == 1
    assert await ledger.balance(pool) == 3 * G
    assert await ledger.balance(ledger.outstanding_claims("G$")) == 7 * G
    recipient = user(2)
    before = await chain.token_balance("G$", recipient.address)
    await redeem(chain, claims[1], recipient)
    assert await chain.token_balance("G$", recipient.address) == before + 2 * G


async def test_claims_issued_together_fail_together(chain, clock):
    pool = ledger.task_pool(new_id("task"))
    await fund(pool, 10 * G, now=clock.now())
    issued = await issue(chain, clock, pool=pool, amount=G)
    terms = [ClaimTerms(ClaimPurpose.COMPLETION, user(1).address.lower(), "G$", G, claim_ref, [(pool, G)],
                        clock.now()) for claim_ref in (claim_ref_for("completion", new_id("tc")), issued.claim_ref)]
    with pytest.raises(IntegrityError):
        async with in_transaction():
            await issue_claims(terms, chain=chain)
    assert await Claim.all().count() == 1 and await ledger.balance(pool) == 9 * G
    assert (await issue(chain, clock, pool=pool, amount=G)).nonce == issued.nonce + 1


async def test_expiry_returns_each_amount_to_where_it_came_from(chain, clock):
    pool = ledger.task_pool(new_id("task"))
    await fund(pool, 10 * G, now=clock.now())
    site = await make_site()
    earnings = ledger.site(site.id)
    await fund(earnings, 6 * G, now=clock.now())
    reward = await issue(chain, clock, pool=pool, amount=3 * G)
    payout = await issue(chain, clock, pool=earnings, amount=4 * G, purpose=ClaimPurpose.WITHDRAWAL,
                         recipient=(await site.publisher).wallet)
    withdrawal = await Withdrawal.create(id=new_id("wd"), site=site, wallet=payout.recipient, token_symbol="G$",
                                         amount=Decimal(4 * G), claim=payout, created_at=clock.now())

    assert await expire_due(at(reward.deadline)) == 0  # the deadline itself is still valid on the vault
    assert await expire_due(at(reward.deadline + 1)) == 2
    assert await expire_due(at(reward.deadline + 1)) == 0
    assert await ledger.balance(pool) == 10 * G
    assert await ledger.balance(earnings) == 6 * G
    assert await ledger.balance(ledger.outstanding_claims("G$")) == 0
    assert {claim.status for claim in await Claim.all()} == {ClaimStatus.EXPIRED}
    await withdrawal.refresh_from_db()
    assert withdrawal.status == WithdrawalStatus.RELEASED
    assert await LedgerTransaction.filter(kind="claim_expire").count() == 2


async def test_marking_redeemed_books_once(chain, clock):
    site = await make_site()
    earnings = ledger.site(site.id)
    await fund(earnings, 4 * G, now=clock.now())
    claim = await issue(chain, clock, pool=earnings, amount=4 * G, purpose=ClaimPurpose.WITHDRAWAL)
    withdrawal = await Withdrawal.create(id=new_id("wd"), site=site, wallet=claim.recipient, token_symbol="G$",
                                         amount=Decimal(4 * G), claim=claim, created_at=clock.now())
    external_before = await ledger.balance(ledger.external("G$"))

    assert await mark_redeemed(claim.claim_ref, "0x" + "ab" * 32, clock.now()) is True
    assert await mark_redeemed(claim.claim_ref, "0x" + "ab" * 32, clock.now()) is False
    assert await mark_redeemed(claim_ref_for("completion", "not-ours"), "0x" + "cd" * 32, clock.now()) is False
    assert await expire_due(at(claim.deadline + 1)) == 0

    await claim.refresh_from_db()
    await withdrawal.refresh_from_db()
    assert (claim.status, claim.redeemed_tx) == (ClaimStatus.REDEEMED, "0x" + "ab" * 32)
    assert withdrawal.status == WithdrawalStatus.REDEEMED
    assert await LedgerTransaction.filter(kind="claim_redeem").count() == 1
    assert await ledger.balance(ledger.outstanding_claims("G$")) == 0
    assert await ledger.balance(ledger.external("G$")) == external_before + 4 * G
    assert await ledger.balance(earnings) == 0


async def test_a_claim_redeemed_after_its_expiry_is_taken_back_from_its_source(chain, clock):
    pool = ledger.task_pool(new_id("task"))
    await fund(pool, 5 * G, now=clock.now())
    kept = await issue(chain, clock, pool=pool, amount=2 * G)
    spent = await issue(chain, clock, pool=pool, amount=3 * G)
    assert await expire_due(at(kept.deadline + 1)) == 2
    assert await ledger.balance(pool) == 5 * G

    assert await mark_redeemed(kept.claim_ref, "0x" + "01" * 32, clock.now()) is True
    assert await ledger.balance(pool) == 3 * G
    assert await ledger.balance(ledger.outstanding_claims("G$")) == 0

    await issue(chain, clock, pool=pool, amount=3 * G)  # the pool pays someone else meanwhile
    with pytest.raises(ledger.InsufficientFunds):
        await mark_redeemed(spent.claim_ref, "0x" + "02" * 32, clock.now())
    await spent.refresh_from_db()
    assert spent.status == ClaimStatus.EXPIRED
