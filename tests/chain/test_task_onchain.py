"""Task completions end to end on the embedded chain and on anvil: a real transaction proves an ONCHAIN_EVENT task,
the claim in the HTTP response is redeemed on the vault exactly once, the watcher (never the client) marks it
redeemed, one wallet's several claims all redeem, and an unredeemed claim expires back into the task's pool."""

from __future__ import annotations

from decimal import Decimal

from hexbytes import HexBytes
from web3 import AsyncWeb3

from adnet.chain.client import ChainClient
from adnet.chain.contracts import token_artifact
from adnet.chain.transact import send_transaction
from adnet.core.amounts import UNIT
from adnet.demo import TRANSFER_TOPIC
from adnet.money import claims, ledger
from adnet.money.models import Claim, ClaimStatus
from adnet.tasks.models import TaskKind
from tests.api.test_tasks import complete
from tests.chain.conftest import ON_BOTH_CHAINS
from tests.chain.helpers import G, advance_chain_time, mine, revert_reason, user, watcher
from tests.factories import make_task

pytestmark = ON_BOTH_CHAINS


async def transfer_from(chain: ChainClient, index: int) -> str:
    token = chain.w3.eth.contract(address=AsyncWeb3.to_checksum_address(chain.gs_address), abi=token_artifact().abi)
    data = token.encode_abi("transfer", args=[user(4).address, G // 100])
    receipt = await send_transaction(chain.w3, user(index), {"to": token.address, "data": data})
    return receipt["transactionHash"].to_0x_hex()


async def redeem_payload(chain: ChainClient, transaction: dict, sender_index: int = 1):
    """Submit the response's ``transaction`` to the vault as a wallet would, from nothing but its fields."""
    data = chain.vault.encode_abi("claim", args=[
        transaction["recipient"], transaction["token"], int(transaction["amount"]), HexBytes(transaction["claimRef"]),
        int(transaction["nonce"]), int(transaction["deadline"]), HexBytes(transaction["signature"])])
    assert transaction["to"] == chain.vault.address and transaction["chainId"] == chain.chain_id
    return await send_transaction(chain.w3, user(sender_index), {"to": transaction["to"], "data": data})


async def test_an_onchain_task_pays_through_the_vault_exactly_once(client, app_chain, clock):
    chain = app_chain
    task = await make_task(kind=TaskKind.ONCHAIN_EVENT, pool=10 * G, reward_gs=3 * G + G // 4,
                           config={"contract": chain.gs_address, "eventTopic": TRANSFER_TOPIC})
    tx_hash = await transfer_from(chain, 1)
    await mine(chain)
    status, body = await complete(client, task, user(1).address, txHash=tx_hash)
    assert status == 201
    assert body["awarded"]["gs"] == 3.25

    wallet = user(1).address
    before = await chain.token_balance("G$", wallet)
    receipt = await redeem_payload(chain, body["transaction"], sender_index=2)  # anyone may submit it
    assert receipt["status"] == 1
    assert await chain.token_balance("G$", wallet) - before == Decimal(str(body["awarded"]["gs"])) * UNIT
    assert await chain.token_balance("G$", wallet) - before == int(body["transaction"]["amount"])
    assert await revert_reason(redeem_payload(chain, body["transaction"])) == "ClaimAlreadyProcessed"

    # KNOWN-HOLES 5: "redeemed" comes from the vault's event through the watcher, not from any client.
    claim = await Claim.get(claim_ref=body["transaction"]["claimRef"])
    assert claim.status == ClaimStatus.ISSUED
    await mine(chain, chain.confirmations)
    assert (await watcher(chain, clock).run_once()).claims_redeemed == 1
    await claim.refresh_from_db()
    assert (claim.status, claim.redeemed_tx) == (ClaimStatus.REDEEMED, receipt["transactionHash"].to_0x_hex())
    response = await client.get("/api/tasks/status", query_string={"wallet": wallet})
    assert (await response.get_json())["completions"][0]["claimStatus"] == "redeemed"
    assert await ledger.balance(ledger.outstanding_claims("G$")) == 0


async def test_one_wallets_claims_of_several_tasks_all_redeem(client, app_chain, clock):
    """KNOWN-HOLES 6: outstanding claims of one wallet never share a nonce."""
    chain = app_chain
    quiz = {"question": "Which token pays?", "answers": ["G$"]}
    tasks = [await make_task(kind=TaskKind.QUIZ, config=quiz, pool=5 * G) for _ in range(3)]
    wallet = user(3).address
    claims = []
    for task in tasks:
        status, body = await complete(client, task, wallet, answer="g$")
        assert status == 201
        claims.append(body["transaction"])
    assert len({claim["nonce"] for claim in claims}) == 3
    before = await chain.token_balance("G$", wallet)
    for claim in reversed(claims):
        await redeem_payload(chain, claim)
    assert await chain.token_balance("G$", wallet) - before == 3 * G


async def test_an_unredeemed_claim_expires_back_into_the_pool(client, app_chain, clock):
    chain = app_chain
    task = await make_task(kind=TaskKind.QUIZ, config={"question": "Q?", "answers": ["yes"]}, pool=2 * G)
    status, body = await complete(client, task, user(1).address, answer="Yes")
    assert status == 201
    assert await ledger.balance(ledger.task_pool(task.id)) == G

    await advance_chain_time(chain, chain.claim_deadline_seconds + 60)
    await mine(chain, chain.confirmations)
    assert await claims.release_expired(chain) == 1
    assert await ledger.balance(ledger.task_pool(task.id)) == 2 * G
    assert (await Claim.get(claim_ref=body["transaction"]["claimRef"])).status == ClaimStatus.EXPIRED
    assert await revert_reason(redeem_payload(chain, body["transaction"])) == "ClaimExpired"
