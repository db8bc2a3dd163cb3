"""ONCHAIN_EVENT through HTTP with real transactions on the embedded chain: the accepted proof and every rejection,
confirmations, a transaction counted once across all tasks, and a chain that does not answer (503, nothing kept)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from web3 import AsyncWeb3

from adnet.chain.client import ChainClient
from adnet.chain.contracts import token_artifact
from adnet.chain.service import http_web3
from adnet.chain.transact import TransactionReverted, send_transaction
from adnet.demo import TRANSFER_TOPIC
from adnet.tasks.models import Completion, TaskKind
from tests.api.test_tasks import complete, nothing_recorded
from tests.chain.helpers import mine, user
from tests.factories import G, make_task
from tests.ports import free_port

APPROVAL_TOPIC = "0x" + AsyncWeb3.keccak(text="Approval(address,address,uint256)").hex().removeprefix("0x")


@pytest.fixture
def chain(app) -> ChainClient:
    return app.extensions["adnet"].chain


async def transfer(chain: ChainClient, sender_index: int = 1, *, symbol: str = "G$", amount: int = G, **tx) -> str:
    """Send ``amount`` of a token from a development account; the transaction hash."""
    token = chain.w3.eth.contract(address=AsyncWeb3.to_checksum_address(chain.token_address(symbol)),
                                  abi=token_artifact().abi)
    data = token.encode_abi("transfer", args=[user(4).address, amount])
    receipt = await send_transaction(chain.w3, user(sender_index), {"to": token.address, "data": data, **tx})
    return receipt["transactionHash"].to_0x_hex()


async def event_task(chain: ChainClient, fields: dict | None = None, **config):
    settings = {"contract": chain.gs_address, "eventTopic": TRANSFER_TOPIC, "confirmations": 1, **config}
    return await make_task(kind=TaskKind.ONCHAIN_EVENT, config=settings, pool=10 * G, **(fields or {}))


async def test_a_real_transfer_completes_the_task(client, chain):
    task = await event_task(chain)
    tx_hash = await transfer(chain)
    await mine(chain)
    status, body = await complete(client, task, user(1).address, txHash=tx_hash)
    assert (status, body["awarded"]) == (201, {"points": 10, "gs": 1})
    completion = await Completion.get(id=body["completionId"])
    assert completion.tx_hash == tx_hash


async def test_confirmations_are_waited_for(client, chain):
    task = await event_task(chain, confirmations=3)
    tx_hash = await transfer(chain)
    await mine(chain, 2)
    status, body = await complete(client, task, user(1).address, txHash=tx_hash.upper().replace("0X", "0x"))
    assert (status, body["error"], body["retryAfter"]) == (409, "not_confirmed", 5)
    await nothing_recorded()
    await mine(chain)
    status, _ = await complete(client, task, user(1).address, txHash=tx_hash)
    assert status == 201


async def test_each_rejection_of_an_onchain_proof(client, chain, clock):
    transfer_hash = await transfer(chain)
    other_sender = await transfer(chain, 2)
    try:
        await transfer(chain, amount=10**30, gas=200_000)
    except TransactionReverted as reverted:
        failed_hash = reverted.receipt["transactionHash"].to_0x_hex()
    await mine(chain)
    cases = [
        (await event_task(chain), other_sender, "wrong_sender"),
        (await event_task(chain, contract=chain.sov_address), transfer_hash, "wrong_contract"),
        (await event_task(chain, eventTopic=APPROVAL_TOPIC), transfer_hash, "event_missing"),
        (await event_task(chain, emitter=chain.vault_address), transfer_hash, "event_missing"),
        (await event_task(chain), failed_hash, "tx_failed"),
    ]
    for task, tx_hash, reason in cases:
        status, body = await complete(client, task, user(1).address, txHash=tx_hash)
        assert (status, body["error"], body["reason"], body["field"]) == (400, "invalid_proof", reason,
                                                                         "proof.txHash"), reason

    task = await event_task(chain)
    status, body = await complete(client, task, user(1).address, txHash="0x" + "ab" * 32)
    assert (status, body["error"]) == (404, "transaction_not_found")
    for bad in ("0x1234", "ab" * 32, 7):
        status, body = await complete(client, task, user(1).address, txHash=bad)
        assert (status, body["error"], body["field"]) == (400, "invalid_tx_hash", "proof.txHash")
    await nothing_recorded()


async def test_a_transaction_mined_before_the_task_started_does_not_count(client, chain, clock):
    """KNOWN-HOLES 15: an old transaction is no proof of doing the task."""
    tx_hash = await transfer(chain)
    clock.advance(hours=1)
    await mine(chain)
    task = await make_task(kind=TaskKind.ONCHAIN_EVENT, pool=10 * G, starts_at=clock.now() - timedelta(minutes=30),
                           config={"contract": chain.gs_address, "eventTopic": TRANSFER_TOPIC})
    status, body = await complete(client, task, user(1).address, txHash=tx_hash)
    assert (status, body["reason"]) == (400, "mined_before_start")
    await nothing_recorded()


async def test_a_transaction_counts_once_across_all_tasks(client, chain):
    """KNOWN-HOLES 15: an on-chain proof cannot be reused, for the same task or another one."""
    first = await event_task(chain)
    again = await event_task(chain, fields={"max_per_wallet": 2, "max_per_fingerprint": 2})
    tx_hash = await transfer(chain)
    await mine(chain)
    status, _ = await complete(client, first, user(1).address, txHash=tx_hash)
    assert status == 201
    for task, fingerprint in ((again, "fp-0001"), (again, "fp-0002")):
        status, body = await complete(client, task, user(1).address, fingerprint, txHash=tx_hash)
        assert (status, body["error"]) == (409, "tx_already_used")
    assert await Completion.all().count() == 1


async def test_an_unreachable_chain_is_503_and_records_nothing(client, app):
    """The chain's node does not answer: the proof cannot be checked, so nothing is written."""
    services = app.extensions["adnet"]
    embedded: ChainClient = services.chain
    task = await event_task(embedded)
    tx_hash = await transfer(embedded)
    await mine(embedded)
    gone = ChainClient(http_web3(f"http://127.0.0.1:{free_port()}"), embedded.deployment, signer=embedded.signer,
                       claim_deadline_seconds=embedded.claim_deadline_seconds, confirmations=1)
    services.chain = gone
    try:
        status, body = await complete(client, task, user(1).address, txHash=tx_hash)
    finally:
        services.chain = embedded
        await gone.close()
    assert (status, body["error"], body["retryAfter"]) == (503, "chain_unavailable", 10)
    await nothing_recorded()
    status, _ = await complete(client, task, user(1).address, txHash=tx_hash)
    assert status == 201
