"""The vault's batch redemption pays several claims in one transaction under the rules of a single claim: each
claim once, to its recipient, only as signed and before its deadline; any refused claim reverts the whole batch,
which then pays nothing. On the embedded development chain and on anvil alike."""

from __future__ import annotations

from hexbytes import HexBytes

from adnet.chain.client import ChainClient
from adnet.money import ledger
from adnet.money.claims import claim_hash, sign_claim_hash
from adnet.money.models import ClaimStatus
from tests.chain.conftest import ON_BOTH_CHAINS
from tests.chain.helpers import (
    G,
    funded_claim,
    mine,
    redeem,
    redeem_batch,
    revert_reason,
    user,
    watcher,
)

pytestmark = ON_BOTH_CHAINS


async def paid(chain: ChainClient, claims) -> list[bool]:
    return [await chain.vault.functions.isClaimed(HexBytes(claim.claim_ref)).call() for claim in claims]


async def test_a_batch_pays_each_claim_to_its_recipient_once(chain, clock):
    first, second = user(1), user(3)
    claims = [await funded_claim(chain, clock, recipient=first.address, amount=G),
              await funded_claim(chain, clock, recipient=first.address, amount=2 * G),
              await funded_claim(chain, clock, recipient=second.address, amount=5 * G, symbol="SOV")]
    before = (await chain.token_balance("G$", first.address), await chain.token_balance("SOV", second.address))
    receipt = await redeem_batch(chain, claims, user(2))
    assert receipt["status"] == 1
    assert await chain.token_balance("G$", first.address) == before[0] + 3 * G
    assert await chain.token_balance("SOV", second.address) == before[1] + 5 * G
    assert await paid(chain, claims) == [True, True, True]

    assert (await watcher(chain, clock).run_once()).claims_redeemed == 3
    for claim in claims:
        await claim.refresh_from_db()
        assert (claim.status, claim.redeemed_tx) == (ClaimStatus.REDEEMED, receipt["transactionHash"].to_0x_hex())
    assert await ledger.balance(ledger.outstanding_claims("G$")) == 0

    assert await revert_reason(redeem_batch(chain, claims, user(2))) == "ClaimAlreadyProcessed"
    for claim in claims:
        assert await revert_reason(redeem(chain, claim, user(2))) == "ClaimAlreadyProcessed"
    assert await chain.token_balance("G$", first.address) == before[0] + 3 * G


async def test_a_claim_paid_alone_refuses_the_whole_batch(chain, clock):
    recipient = user(1)
    alone = await funded_claim(chain, clock, recipient=recipient.address)
    fresh = await funded_claim(chain, clock, recipient=recipient.address, amount=4 * G)
    await redeem(chain, alone, recipient)
    balance = await chain.token_balance("G$", recipient.address)
    assert await revert_reason(redeem_batch(chain, [fresh, alone], recipient)) == "ClaimAlreadyProcessed"
    assert await paid(chain, [fresh]) == [False]
    assert await chain.token_balance("G$", recipient.address) == balance
    await redeem_batch(chain, [fresh], recipient)  # the batch without it goes through
    assert await chain.token_balance("G$", recipient.address) == balance + 4 * G


async def test_the_same_claim_twice_in_one_batch_is_refused(chain, clock):
    claim = await funded_claim(chain, clock, recipient=user(1).address)
    assert await revert_reason(redeem_batch(chain, [claim, claim], user(1))) == "ClaimAlreadyProcessed"
    assert await paid(chain, [claim]) == [False]


async def test_a_batch_with_a_claim_past_its_deadline_pays_nothing(chain, clock):
    early = await funded_claim(chain, clock, recipient=user(1).address)
    clock.advance(seconds=chain.claim_deadline_seconds // 2)
    late = await funded_claim(chain, clock, recipient=user(1).address)
    # The chain's time past the early claim's deadline, before the late one's.
    await chain.w3.provider.make_request("evm_setNextBlockTimestamp", [int(early.deadline) + 60])
    await mine(chain)
    assert await revert_reason(redeem_batch(chain, [late, early], user(1))) == "ClaimExpired"
    assert await paid(chain, [late, early]) == [False, False]
    await redeem_batch(chain, [late], user(1))
    assert await paid(chain, [late, early]) == [True, False]


async def test_a_forged_claim_in_a_batch_pays_nothing(chain, clock):
    honest = await funded_claim(chain, clock, recipient=user(1).address)
    forged = await funded_claim(chain, clock, recipient=user(1).address)
    forged.amount = int(forged.amount) * 10  # the signature is for the issued amount
    assert await revert_reason(redeem_batch(chain, [honest, forged], user(1))) == "UnauthorizedSigner"
    assert await paid(chain, [honest, forged]) == [False, False]


async def test_a_nonce_used_in_a_batch_is_refused_under_another_claim_ref(chain, clock):
    claim = await funded_claim(chain, clock, recipient=user(1).address)
    await redeem_batch(chain, [claim], user(1))
    reused = await funded_claim(chain, clock, recipient=user(1).address)
    # The second claim re-signed with the first one's nonce (by adnet's signer, as a bug would) is refused.
    digest = claim_hash(chain_id=chain.chain_id, vault=chain.vault_address, recipient=reused.recipient,
                        token=reused.token, amount=int(reused.amount), claim_ref=reused.claim_ref,
                        nonce=int(claim.nonce), deadline=int(reused.deadline))
    reused.nonce, reused.signature = claim.nonce, sign_claim_hash(chain.signer, digest)
    assert await revert_reason(redeem_batch(chain, [reused], user(1))) == "NonceAlreadyUsed"


async def test_an_empty_batch_is_refused(chain):
    data = chain.vault.encode_abi("claimBatch", args=[[]])
    call = chain.w3.eth.call({"from": user(1).address, "to": chain.vault.address, "data": data})
    assert await revert_reason(call) == "EmptyBatch"
