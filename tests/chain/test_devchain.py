"""The development chain: standard JSON-RPC answers in process, one persistent chain process that survives a
crash and a restart, and a database that refuses any other chain."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from web3 import AsyncWeb3

from adnet.chain import devserver
from adnet.chain.binding import ChainMismatch
from adnet.chain.devchain import DEV_CHAIN_ID, DevChain, InProcessProvider
from adnet.chain.models import ChainBinding
from adnet.chain.service import connect
from adnet.core.wallets import dev_accounts
from tests.auth_helpers import sign, siwe_message
from tests.chain.conftest import rpc
from tests.chain.helpers import G
from tests.conftest import make_settings
from tests.ports import free_port


def call(chain: DevChain, method: str, *params) -> dict:
    return chain.handle({"jsonrpc": "2.0", "id": 7, "method": method, "params": list(params)})


def test_answers_follow_json_rpc_conventions():
    chain = DevChain.in_memory(time_source=lambda: 1_800_000_000)
    assert call(chain, "eth_chainId") == {"jsonrpc": "2.0", "id": 7, "result": hex(DEV_CHAIN_ID)}
    assert call(chain, "net_version")["result"] == str(DEV_CHAIN_ID)
    assert call(chain, "evm_revert", "0x1")["error"]["code"] == -32601
    assert call(chain, "eth_sendRawTransaction", "0x1234")["error"]["code"] == -32000
    batch = chain.handle([{"jsonrpc": "2.0", "id": 1, "method": "eth_blockNumber", "params": []},
                          {"jsonrpc": "2.0", "id": 2, "method": "nope", "params": []}])
    assert [answer["id"] for answer in batch] == [1, 2]
    assert batch[0]["result"] == "0x0" and batch[1]["error"]["code"] == -32601
    genesis = call(chain, "eth_getBlockByNumber", "0x0", False)["result"]
    assert int(genesis["timestamp"], 16) == 1_800_000_000 and len(genesis["logsBloom"]) == 2 + 512


async def test_time_moves_as_on_anvil():
    now = [1_800_000_000]
    chain = DevChain.in_memory(time_source=lambda: now[0])
    w3 = AsyncWeb3(InProcessProvider(chain))
    await w3.provider.make_request("evm_mine", [])
    assert (await w3.eth.get_block("latest"))["timestamp"] == 1_800_000_001  # one second after genesis, at least
    now[0] += 100
    await w3.provider.make_request("evm_increaseTime", [50])
    await w3.provider.make_request("evm_mine", [])
    assert (await w3.eth.get_block("latest"))["timestamp"] == 1_800_000_150
    await w3.provider.make_request("evm_setNextBlockTimestamp", [1_900_000_000])
    await w3.provider.make_request("evm_mine", [])
    assert (await w3.eth.get_block("latest"))["timestamp"] == 1_900_000_000


SENDER, RECIPIENT = dev_accounts()[1].address, dev_accounts()[2].address
NEXT_NONCE = object()
# Transaction objects as libraries and adnet write them; each is sent to anvil and to the development chain.
TRANSACTION_VARIANTS = [
    {}, {"request": {"method": "eth_sendTransaction", "params": []}}, {"unknown": "ignored"},
    {"value": "0x0"}, {"value": "0"}, {"value": 0}, {"value": "10"}, {"value": ""}, {"value": "0x"},
    {"chainId": "own"}, {"chainId": "own hex"}, {"chainId": "0x1"},
    {"gas": "0x5208"}, {"gas": 21000}, {"gas": "21000"}, {"gas": "0x1"},
    {"gasPrice": "0x3b9aca00"}, {"maxFeePerGas": "0x77359400", "maxPriorityFeePerGas": "0x1"},
    {"gasPrice": "0x3b9aca00", "maxFeePerGas": "0x77359400"}, {"maxFeePerGas": "0x77359400"},
    {"maxPriorityFeePerGas": "0x1"}, {"maxFeePerGas": "0x1"},
    {"data": "0x"}, {"input": "0x"}, {"data": "0x12", "input": "0x34"}, {"data": "12"}, {"data": "0x1"},
    {"nonce": NEXT_NONCE}, {"nonce": "0x0"},
    {"type": "0x0"}, {"type": "0x1"}, {"type": "0x2"}, {"type": 2}, {"type": "0x3"},
    {"accessList": []}, {"accessList": [{"address": RECIPIENT, "storageKeys": ["0x" + "00" * 32]}]},
    {"accessList": "x"}, {"from": SENDER.lower()}, {"from": None}, {"from": "0x" + "11" * 20}, {"to": None},
    {"to": "0x1234"}, {"value": "1e3"}, {"value": "-1"}, {"value": 1.5}, {"value": True},
    {"value": "0x" + "f" * 48},
]

# Where the development chain is more lenient than anvil: a call naming a tip and no fee cap (anvil compares the tip
# with a cap of zero; a call pays no fee on either chain).
LENIENT = [("eth_call", {"maxPriorityFeePerGas": "0x1"})]


def written_for(variant: dict, chain_id: int, nonce: str) -> dict:
    transaction = {"from": SENDER, "to": RECIPIENT, **variant}
    if variant.get("chainId") in ("own", "own hex"):
        transaction["chainId"] = chain_id if variant["chainId"] == "own" else hex(chain_id)
    if variant.get("nonce") is NEXT_NONCE:
        transaction["nonce"] = nonce
    return {key: value for key, value in transaction.items() if not (key == "from" and value is None)}


@pytest.mark.parametrize("method", ["eth_sendTransaction", "eth_call", "eth_estimateGas"])
def test_the_development_chain_takes_every_transaction_object_anvil_takes(anvil_url, method):
    """Each object is accepted by both chains or refused by both (but for ``LENIENT``), the development chain's
    refusals being JSON-RPC errors, never an internal error. The other difference, a nonce ahead of the sender's
    (anvil holds the transaction until the gap is filled), is the next test."""
    snapshot = rpc(anvil_url, "evm_snapshot")["result"]
    development = DevChain.in_memory()
    chains = {"anvil": (lambda name, *params: rpc(anvil_url, name, list(params)), 31337),
              "development": (lambda name, *params: call(development, name, *params), DEV_CHAIN_ID)}
    try:
        for variant in TRANSACTION_VARIANTS:
            answers = {}
            for name, (ask, chain_id) in chains.items():
                nonce = ask("eth_getTransactionCount", SENDER, "latest")["result"]
                transaction = written_for(variant, chain_id, nonce)
                answers[name] = ask(method, transaction, *(["latest"] if method == "eth_call" else []))
            refused = {name: "error" in answer for name, answer in answers.items()}
            if (method, variant) in LENIENT:
                assert refused == {"anvil": True, "development": False}, (variant, answers)
                continue
            assert refused["anvil"] == refused["development"], (variant, answers)
            if refused["development"]:
                assert answers["development"]["error"]["code"] != -32603, (variant, answers)
    finally:
        rpc(anvil_url, "evm_revert", [snapshot])


def test_a_nonce_ahead_is_refused_since_every_transaction_is_mined_at_once():
    chain = DevChain.in_memory()
    answer = call(chain, "eth_sendTransaction", {"from": SENDER, "to": RECIPIENT, "nonce": "0x5"})
    assert answer["error"]["code"] == -32003 and "the next is 0" in answer["error"]["message"]
    assert call(chain, "eth_sendTransaction", {"from": SENDER, "to": RECIPIENT, "nonce": "0x0"})["result"]
    assert call(chain, "eth_sendTransaction", {"from": SENDER, "to": RECIPIENT, "nonce": "0x0"})["error"] == {
        "code": -32003, "message": "nonce too low"}
    assert call(chain, "eth_getTransactionCount", SENDER, "latest")["result"] == "0x1"


async def test_dev_rpc_relays_what_a_wallet_needs_and_nothing_else(client, app):
    answer = await client.post("/dev/rpc", json={"jsonrpc": "2.0", "id": 1, "method": "eth_chainId", "params": []})
    assert (await answer.get_json())["result"] == hex(app.extensions["adnet"].chain.chain_id)
    batch = await client.post("/dev/rpc", json=[
        {"jsonrpc": "2.0", "id": 1, "method": "eth_blockNumber", "params": []},
        {"jsonrpc": "2.0", "id": 2, "method": "eth_sendTransaction", "params": [{"from": dev_accounts()[0].address}]},
        {"jsonrpc": "2.0", "id": 3, "method": "evm_increaseTime", "params": [10**9]},
    ])
    answers = {answer["id"]: answer for answer in await batch.get_json()}
    assert "result" in answers[1]
    assert answers[2]["error"]["code"] == answers[3]["error"]["code"] == -32601


async def test_dev_rpc_does_not_exist_in_production(database_url, tmp_path):
    from adnet.app import create_app
    from tests.adnet.test_config import SECRET_KEY, SIGNER_KEY, TRACKING_SECRET

    production = make_settings(database_url, tmp_path, ADNET_ENV="production", ADNET_PUBLIC_URL="https://adnet.example",
                               ADNET_CHAIN_RPC_URL="http://127.0.0.1:1", ADNET_VAULT_ADDRESS="0x" + "01" * 20,
                               ADNET_GS_TOKEN_ADDRESS="0x" + "02" * 20, ADNET_SOV_TOKEN_ADDRESS="0x" + "03" * 20,
                               ADNET_SECRET_KEY=SECRET_KEY, ADNET_TRACKING_SECRET=TRACKING_SECRET,
                               ADNET_SIGNER_KEY=SIGNER_KEY)
    response = await create_app(production).test_client().post(
        "/dev/rpc", json={"jsonrpc": "2.0", "id": 1, "method": "eth_chainId", "params": []})
    assert response.status_code == 404


async def test_health_reports_the_chain(client, app):
    body = await (await client.get("/healthz")).get_json()
    chain = app.extensions["adnet"].chain
    assert body["chain"]["status"] == "ok"
    assert body["chain"]["chainId"] == chain.chain_id
    assert body["chain"]["blockNumber"] == await chain.block_number()


@pytest.fixture
async def unbound_database(app) -> AsyncIterator[None]:
    """The test database without its binding, and without whatever binding the test leaves (the next test's app
    starts before its database is emptied)."""
    await ChainBinding.all().delete()
    yield
    await ChainBinding.all().delete()


async def test_the_development_chain_survives_a_crash_and_a_restart(unbound_database, database_url, tmp_path,
                                                                   clock):
    settings = make_settings(database_url, tmp_path, ADNET_ENV="development")
    state = devserver.state_path(settings.data_dir)

    first = await connect(settings, clock=clock)
    client = first.client
    seen = {
        "identity": (await client.w3.eth.chain_id, client.deployment.genesis_hash),
        "vault_code": await client.w3.eth.get_code(client.vault.address),
        "vault_gs": await client.token_balance("G$", client.vault_address),
        "user_sov": await client.token_balance("SOV", dev_accounts()[1].address),
        "block": await client.block_number(),
    }
    assert seen["vault_gs"] > 0 and seen["user_sov"] > 0
    running = devserver.running(state)
    assert running is not None
    os.kill(running.pid, signal.SIGKILL)  # no shutdown: only what was committed survives
    await first.close()

    second = await connect(settings, clock=clock)
    try:
        client = second.client
        assert client.deployment == first.client.deployment  # bound, not deployed again
        assert (await client.w3.eth.chain_id, client.deployment.genesis_hash) == seen["identity"]
        assert await client.w3.eth.get_code(client.vault.address) == seen["vault_code"]
        assert await client.token_balance("G$", client.vault_address) == seen["vault_gs"]
        assert await client.token_balance("SOV", dev_accounts()[1].address) == seen["user_sov"]
        assert await client.block_number() == seen["block"]
        assert seen["user_sov"] == 100_000 * G

        second_server = await asyncio.to_thread(
            subprocess.run, [sys.executable, "-m", "adnet.chain.devserver", "--state", str(state)],
            capture_output=True, text=True, timeout=60, check=False)
        assert second_server.returncode == 1
        assert "already serves" in second_server.stderr
    finally:
        await second.close()
    assert devserver.running(state) is None

    for path in Path(state).parent.glob(state.name + "*"):
        path.unlink()
    with pytest.raises(ChainMismatch, match="genesis hash"):
        await connect(settings, clock=clock)
    assert devserver.running(state) is None



def test_adnet_serve_restarts_its_development_chain_and_stops_it_with_itself(tmp_path):
    """The development chain killed under a running ``adnet serve`` is reaped (no zombie) and started again on
    the same address with its state, and the worker's next request that needs the chain is answered without a
    restart of its own. A service manager then stops ``adnet serve`` with SIGTERM: the chain goes with it."""
    port = free_port()
    env = {**os.environ, "ADNET_ENV": "development", "ADNET_DATA_DIR": str(tmp_path),
           "ADNET_DATABASE_URL": f"sqlite://{tmp_path / 'adnet.sqlite3'}", "ADNET_PORT": str(port)}
    server = subprocess.Popen([sys.executable, "-m", "adnet", "serve"], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    state = devserver.state_path(tmp_path)
    base = f"http://127.0.0.1:{port}"
    try:
        chain = wait_for(lambda: devserver.running(state), within=90)
        wait_for(lambda: answers(port), within=60)
        assert contract_wallet_sign_in(base) == (401, "invalid_signature")  # the chain said: no contract there
        block = rpc(chain.url, "eth_blockNumber")["result"]

        os.kill(chain.pid, signal.SIGKILL)
        again = wait_for(lambda: (found := devserver.running(state)) and found.pid != chain.pid and found, within=60)
        assert again.url == chain.url and again.genesis_hash == chain.genesis_hash
        assert rpc(again.url, "eth_blockNumber")["result"] == block  # its state kept
        assert process_state(chain.pid) is None, "the killed chain process was not reaped"
        assert contract_wallet_sign_in(base) == (401, "invalid_signature")

        server.send_signal(signal.SIGTERM)
        assert server.wait(60) == 128 + signal.SIGTERM
        assert wait_for(lambda: not alive(again.pid), within=15)
    finally:
        if server.poll() is None:
            server.kill()


def contract_wallet_sign_in(base: str) -> tuple[int, str]:
    """Sign in for a wallet with a signature by another account: only the chain can tell whether the wallet is a
    contract that accepts it (EIP-1271), so the answer is 401 when the chain answers and 503 when it does not."""
    with urllib.request.urlopen(f"{base}/api/auth/nonce", timeout=10) as response:  # noqa: S310 - a local server
        grant = json.loads(response.read())
    message = siwe_message(dev_accounts()[2].address, nonce=grant["nonce"], domain=grant["domain"],
                           uri=grant["uri"] + "/portal", scheme=grant["uri"].split("://", 1)[0],
                           chain_id=grant["chainId"], issued_at=datetime.now(UTC))
    request = urllib.request.Request(f"{base}/api/auth/verify", method="POST", headers={  # noqa: S310
        "Content-Type": "application/json"}, data=json.dumps({
            "message": message, "signature": sign(dev_accounts()[1], message)}).encode())
    try:
        with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310
            return response.status, ""
    except urllib.error.HTTPError as refused:
        return refused.code, json.loads(refused.read())["error"]


def process_state(pid: int) -> str | None:
    """The state letter of process ``pid`` (``Z`` for a zombie), None when there is no such process."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return None


def answers(port: int) -> bool:
    with contextlib.suppress(OSError), urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2) as answer:
        return answer.status == 200
    return False


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def wait_for(check, *, within: float):
    """``check()``'s first truthy answer; fails the test after ``within`` seconds."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if result := check():
            return result
        time.sleep(0.2)
    pytest.fail(f"not within {within} s: {check}")
