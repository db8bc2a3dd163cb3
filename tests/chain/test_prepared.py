"""Prepared transactions come in the shape docs/chain.md documents, and the libraries dapps use send them as they
are: the object itself to viem's ``sendTransaction`` and ethers' ``Signer.sendTransaction``, its ``request`` to an
EIP-1193 provider. Shown through HTTP on the embedded chain, and on anvil by viem, ethers and a provider, each
sending the approve and deposit of a top-up that adnet then credits."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess

import pytest

from adnet.money import deposits, ledger
from adnet.money.holders import site_holder
from adnet.money.models import DepositStatus
from api.schemas import DepositPlanOut, deposit_plan_out
from tests.auth_helpers import bearer, sign_in
from tests.chain.conftest import ANVIL_DIR
from tests.chain.helpers import G, user
from tests.factories import make_advertiser, make_publisher, make_site

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
