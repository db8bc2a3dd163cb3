"""The vault pays a claim once, to its recipient, only as signed, for this chain and contract, before its deadline,
on the embedded development chain and on anvil alike."""

from __future__ import annotations

import pytest
from eth_account import Account
from eth_account.messages import encode_typed_data
from eth_utils import keccak, to_checksum_address
from hexbytes import HexBytes

from adnet.chain.client import ChainClient
from adnet.money.claims import claim_digest, claim_typed_data
from tests.chain.conftest import ON_BOTH_CHAINS
from tests.chain.helpers import (
    DIGEST_VECTOR,
    VECTOR_DIGEST,
    G,
    advance_chain_time,
    funded_claim,
    redeem,
    revert_reason,
    user,
)

pytestmark = ON_BOTH_CHAINS

SECP256K1_ORDER = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141


def sign(key: str, **fields) -> str:
    return Account.sign_message(encode_typed_data(full_message=claim_typed_data(**fields)), key).signature.to_0x_hex()


def claim_fields(claim) -> dict:
    return {"chain_id": int(claim.chain_id), "vault": claim.vault, "recipient": claim.recipient,
            "token": claim.token, "amount": int(claim.amount), "claim_ref": claim.claim_ref,
            "nonce": int(claim.nonce), "deadline": int(claim.deadline)}


def submit(chain: ChainClient, sender: str, signature: str, **fields):
    """Estimate the vault call (a revert surfaces with its custom error, as a wallet would see it)."""
    call = chain.vault.functions.claim(
        to_checksum_address(fields["recipient"]), to_checksum_address(fields["token"]), fields["amount"],
        HexBytes(fields["claim_ref"]), fields["nonce"], fields["deadline"], HexBytes(signature))
    return call.estimate_gas({"from": to_checksum_address(sender)})


async def test_a_claim_pays_its_recipient_exactly_once(chain, clock):
    recipient, submitter = user(1), user(2)
    claim = await funded_claim(chain, clock, recipient=recipient.address, amount=3 * G)
    before = {who: await chain.token_balance("G$", who) for who in (recipient.address, submitter.address,
                                                                     chain.vault_address)}
    receipt = await redeem(chain, claim, submitter)
    assert receipt["status"] == 1
    assert await chain.token_balance("G$", recipient.address) == before[recipient.address] + 3 * G
    assert await chain.token_balance("G$", chain.vault_address) == before[chain.vault_address] - 3 * G
    assert await chain.token_balance("G$", submitter.address) == before[submitter.address]
    assert await chain.vault.functions.isClaimed(HexBytes(claim.claim_ref)).call()

    assert await revert_reason(redeem(chain, claim, recipient)) == "ClaimAlreadyProcessed"
    assert await chain.token_balance("G$", recipient.address) == before[recipient.address] + 3 * G


async def test_the_same_nonce_under_another_claim_ref_is_refused(chain, clock):
    claim = await funded_claim(chain, clock, recipient=user(1).address)
    await redeem(chain, claim, user(1))
    fields = {**claim_fields(claim), "claim_ref": "0x" + keccak(text="another").hex()}
    signature = sign(chain.signer.key, **fields)
    assert await revert_reason(submit(chain, user(1).address, signature, **fields)) == "NonceAlreadyUsed"


@pytest.mark.parametrize("change", ["chain_id", "vault", "recipient", "amount", "token", "signer"])
async def test_a_claim_is_valid_only_as_signed(chain, clock, change):
    claim = await funded_claim(chain, clock, recipient=user(1).address)
    fields = claim_fields(claim)
    signed, submitted = dict(fields), dict(fields)
    key = chain.signer.key
    if change == "chain_id":
        signed["chain_id"] = fields["chain_id"] + 1
    elif change == "vault":
        signed["vault"] = chain.gs_address
    elif change == "recipient":
        submitted["recipient"] = user(2).address
    elif change == "amount":
        submitted["amount"] = fields["amount"] + 1
    elif change == "token":
        submitted["token"] = chain.sov_address
    elif change == "signer":
        key = Account.create().key
    signature = sign(key, **signed)
    assert await revert_reason(submit(chain, user(3).address, signature, **submitted)) == "UnauthorizedSigner"


async def test_the_signature_as_issued_is_accepted(chain, clock):
    claim = await funded_claim(chain, clock, recipient=user(1).address)
    assert await submit(chain, user(3).address, claim.signature, **claim_fields(claim)) > 0


async def test_a_high_s_form_of_a_valid_signature_is_refused(chain, clock):
    claim = await funded_claim(chain, clock, recipient=user(1).address)
    raw = bytes.fromhex(claim.signature[2:])
    r, s, v = raw[:32], int.from_bytes(raw[32:64], "big"), raw[64]
    malleated = "0x" + (r + (SECP256K1_ORDER - s).to_bytes(32, "big") + bytes([55 - v])).hex()
    fields = claim_fields(claim)
    assert Account._recover_hash(HexBytes(claim_digest(**fields)), signature=HexBytes(malleated)).lower() == \
        chain.signer.address.lower()
    assert await revert_reason(submit(chain, user(1).address, malleated, **fields)) == "ECDSAInvalidSignatureS"


async def test_a_claim_past_its_deadline_is_refused(chain, clock):
    claim = await funded_claim(chain, clock, recipient=user(1).address)
    await advance_chain_time(chain, chain.claim_deadline_seconds + 60)
    assert await revert_reason(redeem(chain, claim, user(1))) == "ClaimExpired"


async def test_python_digest_equals_the_contract_digest(chain, chain_kind):
    fields = {**DIGEST_VECTOR, "chain_id": chain.chain_id, "vault": chain.vault_address, "token": chain.gs_address}
    on_chain = await chain.vault.functions.claimDigest(
        to_checksum_address(fields["recipient"]), to_checksum_address(fields["token"]), fields["amount"],
        HexBytes(fields["claim_ref"]), fields["nonce"], fields["deadline"]).call()
    assert claim_digest(**fields) == "0x" + on_chain.hex()
    if chain_kind == "embedded":
        assert fields == DIGEST_VECTOR
        assert "0x" + on_chain.hex() == VECTOR_DIGEST
