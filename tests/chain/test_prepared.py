"""Prepared transactions come in the shape docs/chain.md documents, and the libraries dapps use send them as they
are: the object itself to viem's ``sendTransaction`` and ethers' ``Signer.sendTransaction``, its ``request`` to an
EIP-1193 provider. Shown through HTTP on the embedded chain, and on anvil by viem, ethers and a provider, each
sending the approve and deposit of a top-up that adnet then credits.

And both chains take what adnet prepares exactly as it is: ``eth_sendTransaction`` with the object a prepare route
answers (``request`` key and all) or its EIP-1193 parameters, and with an ONCHAIN_EVENT task's transaction as
serving answers it, to which a wallet adds only its ``from``; the development chain reads every transaction object
as anvil does (``tests/chain/test_devchain.py`` holds the key-by-key comparison)."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess

import pytest

from adnet.chain.client import ChainClient
from adnet.demo import TRANSFER_TOPIC
from adnet.money import deposits, ledger
from adnet.money.holders import site_holder
from adnet.money.models import DepositStatus
from adnet.tasks.choices import transfer_call
from adnet.tasks.models import TaskKind
from api.schemas import DepositPlanOut, deposit_plan_out
from tests.api.test_tasks import complete
from tests.auth_helpers import bearer, sign_in
from tests.chain.conftest import ANVIL_DIR, ON_BOTH_CHAINS
from tests.chain.helpers import G, mine, user
from tests.conftest import rebuild_index
from tests.factories import make_advertiser, make_campaign, make_creative, make_publisher, make_site, make_task

SEND_PREPARED = ANVIL_DIR / "send_prepared.mjs"


def assert_documented_shape(transaction: dict, chain_id: int) -> None:
    """The object for viem and ethers (``chainId`` a number, no ``value``: nothing moves the native coin), and
    beside it the EIP-1193 request of the same transaction with hex quantities."""
    assert set(transaction) == {"from", "to", "data", "chainId", "request"}
    assert transaction["chainId"] == chain_id and isinstance(transaction["chainId"], int)
    assert transaction["request"] == {"method": "eth_sendTransaction", "params": [{
        "from": transaction["from"], "to": transaction["to"], "data": transaction["data"], "value": "0x0",
        "chainId": hex(chain_id)}]}


async def test_the_prepare_routes_answer_the_documented_shape(client, chain):
    account = user(2)
    token = bearer(await sign_in(client, account))
    site = await make_site(await make_publisher(account.address.lower()))
    await make_advertiser(account.address.lower())
    prepared = {
        "topup": await client.post("/api/publishers/topup/prepare", headers=token, json={
            "wallet": account.address, "siteId": site.id, "amount": "2"}),
        "deposit": await client.post("/api/advertisers/deposit/prepare", headers=token, json={"amount": "2"}),
    }
    for route, response in prepared.items():
        assert response.status_code == 200, route
        approve, deposit = (await response.get_json())["transactions"]
        for transaction in (approve, deposit):
            assert_documented_shape(transaction, chain.chain_id)
        assert (approve["to"].lower(), deposit["to"].lower()) == (chain.gs_address, chain.vault_address)


@pytest.mark.parametrize("chain_kind", ["anvil"], indirect=True)
@pytest.mark.parametrize("library", ["viem", "ethers", "eip1193"])
async def test_viem_ethers_and_an_eip1193_provider_send_them_as_they_are(chain, clock, library):
    node = shutil.which("node")
    if node is None:
        pytest.fail("sending with viem and ethers needs Node 20 (node) on the PATH")
    account = user(2)
    holder = site_holder(await make_site(await make_publisher(account.address.lower())))
    plan = DepositPlanOut(**deposit_plan_out(await deposits.prepare(holder, 3 * G, chain)))
    transactions = plan.model_dump(mode="json")["transactions"]
    sender = await asyncio.create_subprocess_exec(
        node, str(SEND_PREPARED), library, str(chain.rpc_url), account.key.to_0x_hex(),
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = await asyncio.wait_for(sender.communicate(json.dumps(transactions).encode()), timeout=120)
    assert sender.returncode == 0, err.decode()
    approve_hash, deposit_hash = json.loads(out)

    credited = (await deposits.credit(holder, deposit_hash, chain, clock.now())).deposit
    assert (credited.status, int(credited.amount)) == (DepositStatus.CREDITED, 3 * G)
    assert await ledger.balance(ledger.site(holder.id)) == 3 * G
    assert (await chain.get_receipt(approve_hash))["status"] == 1


async def send_as_it_is(chain: ChainClient, transaction: dict) -> str:
    """``eth_sendTransaction`` of ``transaction`` on the chain's node, not a key changed; its hash once mined."""
    answer = await chain.w3.provider.make_request("eth_sendTransaction", [transaction])
    assert "error" not in answer, answer
    receipt = await chain.w3.eth.wait_for_transaction_receipt(answer["result"], timeout=30)
    assert receipt["status"] == 1
    return receipt["transactionHash"].to_0x_hex()


async def send_plan(client, chain: ChainClient, route: str, token: dict, body: dict, form: str) -> str:
    """Prepare through ``route`` and send its transactions in order, each as the prepared object itself or as its
    EIP-1193 parameters; the deposit's hash."""
    response = await client.post(route, headers=token, json=body)
    assert response.status_code == 200, await response.get_json()
    hashes = [await send_as_it_is(chain, transaction if form == "object" else transaction["request"]["params"][0])
              for transaction in (await response.get_json())["transactions"]]
    return hashes[-1]


@ON_BOTH_CHAINS
@pytest.mark.parametrize("form", ["object", "eip1193"])
async def test_both_chains_take_the_prepared_top_up_and_deposit_unchanged(client, app_chain, form):
    chain = app_chain
    account = user(2)
    token = bearer(await sign_in(client, account))
    site = await make_site(await make_publisher(account.address.lower()))
    await make_advertiser(account.address.lower())

    top_up = await send_plan(client, chain, "/api/publishers/topup/prepare", token,
                             {"wallet": account.address, "siteId": site.id, "amount": "2"}, form)
    credited = await client.post("/api/publishers/topup", headers=token,
                                 json={"wallet": account.address, "siteId": site.id, "txHash": top_up})
    assert credited.status_code == 201, await credited.get_json()
    deposit = await send_plan(client, chain, "/api/advertisers/deposit/prepare", token, {"amount": "3"}, form)
    credited = await client.post("/api/advertisers/deposit", headers=token, json={"txHash": deposit})
    assert credited.status_code == 201, await credited.get_json()
    assert (await ledger.balance(ledger.site(site.id)), int((await credited.get_json())["amount"].split(".")[0])) \
        == (2 * G, 3)


@ON_BOTH_CHAINS
async def test_both_chains_take_a_served_onchain_task_transaction_and_it_completes_the_task(client, app_chain):
    chain = app_chain
    wallet = user(3).address
    site = await make_site()
    campaign = await make_campaign()
    await make_creative(campaign)
    task = await make_task(kind=TaskKind.ONCHAIN_EVENT, campaign=campaign, pool=5 * G, config={
        "contract": chain.gs_address, "eventTopic": TRANSFER_TOPIC, "call": transfer_call(user(4).address, G // 100)})
    await rebuild_index(client.app)
    served = await client.get("/api/serve", query_string={"siteId": site.id, "attached": "1"},
                              headers={"Origin": "https://publisher.example"})
    (attached,) = (await served.get_json())["attachedTasks"]
    transaction = attached["transaction"]
    assert transaction["chainId"] == chain.chain_id and transaction["value"] == "0"  # a number and a decimal string

    tx_hash = await send_as_it_is(chain, {**transaction, "from": wallet})  # the wallet adds only its account
    await mine(chain)
    status, body = await complete(client, task, wallet, txHash=tx_hash)
    assert status == 201, body
    assert body["awarded"]["gs"] == 1


async def test_dev_rpc_estimates_and_calls_the_prepared_objects_as_a_wallet_sends_them(client, chain):
    """A browser wallet on the development chain estimates gas for what the page hands it through ``/dev/rpc``."""
    account = user(2)
    token = bearer(await sign_in(client, account))
    site = await make_site(await make_publisher(account.address.lower()))
    response = await client.post("/api/publishers/topup/prepare", headers=token, json={
        "wallet": account.address, "siteId": site.id, "amount": "2"})
    approve = (await response.get_json())["transactions"][0]
    for transaction in (approve, approve["request"]["params"][0]):
        for method, params in (("eth_estimateGas", [transaction]), ("eth_call", [transaction, "latest"])):
            answer = await client.post("/dev/rpc", json={"jsonrpc": "2.0", "id": 1, "method": method,
                                                         "params": params})
            body = await answer.get_json()
            assert answer.status_code == 200 and "result" in body, (method, body)
            assert int(body["result"], 16) > 0  # the gas, or approve's ABI-encoded true
