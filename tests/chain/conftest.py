"""Chain fixtures: the in-memory development chain of the app, and anvil (a real JSON-RPC node) started once per
session from the npm package pinned in ``tests/chain/anvil``.

Modules that must hold on both chains set ``pytestmark = ON_BOTH_CHAINS``; their tests then get ``chain`` (a bound
``ChainClient`` with freshly deployed contracts and funded development accounts) for each chain. The ``clock`` of
these tests starts at the chain's own time, so claims signed "now" are valid on the chain.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import time
import urllib.request
from collections.abc import AsyncIterator, Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path

import pytest
from eth_account import Account

from adnet.chain.client import ChainClient
from adnet.chain.deploy import Deployment, deploy_development
from adnet.chain.service import http_web3
from adnet.config import Settings
from adnet.core.clock import FrozenClock
from adnet.core.wallets import dev_accounts
from tests.conftest import TEST_SIGNER_KEY
from tests.npm import npm_install
from tests.ports import free_port

ANVIL_DIR = Path(__file__).parent / "anvil"
ANVIL_BINARY = ANVIL_DIR / "node_modules" / "@foundry-rs" / "anvil-linux-amd64" / "bin" / "anvil"
ANVIL_CHAIN_ID = 31337
NODE_LIBRARIES = (ANVIL_DIR / "node_modules" / "viem", ANVIL_DIR / "node_modules" / "ethers")
ON_BOTH_CHAINS = pytest.mark.parametrize("chain_kind", ["embedded", "anvil"], indirect=True)


def install_anvil() -> Path:
    """The anvil binary, installed by npm from the committed lock file with the rest of the package (viem and
    ethers, for tests/chain/test_prepared.py) when any is missing."""
    npm_install(ANVIL_DIR, (ANVIL_BINARY, *NODE_LIBRARIES), "anvil")
    return ANVIL_BINARY


def rpc(url: str, method: str, params: list | None = None) -> dict:
    """One synchronous JSON-RPC call (for fixtures that run outside the event loop)."""
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params or []}).encode()
    request = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"})  # noqa: S310
    with urllib.request.urlopen(request, timeout=5) as response:  # noqa: S310 - a local test node
        return json.loads(response.read())


def running_anvil(*options: str) -> Iterator[str]:
    """An anvil on 127.0.0.1 started with ``options``, its URL once it answers; stopped when the caller is done."""
    port = free_port()
    process = subprocess.Popen([str(install_anvil()), "--host", "127.0.0.1", "--port", str(port),  # noqa: S603
                                "--chain-id", str(ANVIL_CHAIN_ID), "--silent", *options])
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 20
    while True:
        try:
            rpc(url, "eth_chainId")
            break
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                pytest.fail(f"anvil {' '.join(options)} did not start (exit status {process.poll()})")
            time.sleep(0.05)
    yield url
    process.terminate()
    process.wait(timeout=10)


@pytest.fixture(scope="session")
def anvil_url() -> Iterator[str]:
    """A running anvil on 127.0.0.1 for the whole session, stopped at its end."""
    yield from running_anvil()


@pytest.fixture
def chain_kind(request: pytest.FixtureRequest) -> str:
    return getattr(request, "param", "embedded")


@pytest.fixture
def clock(chain_kind: str, request: pytest.FixtureRequest) -> FrozenClock:
    """Frozen at the chain's time: the wall clock for the embedded chain (whose blocks then follow this clock),
    anvil's latest block otherwise (earlier tests may have moved anvil's time forward)."""
    if chain_kind == "anvil":
        latest = rpc(request.getfixturevalue("anvil_url"), "eth_getBlockByNumber", ["latest", False])["result"]
        return FrozenClock(datetime.fromtimestamp(int(latest["timestamp"], 16), UTC))
    return FrozenClock(datetime.fromtimestamp(int(time.time()), UTC))


@pytest.fixture(scope="session")
def anvil_deployment(anvil_url: str) -> Deployment:
    """The contracts on anvil, deployed once per session; each test runs on a snapshot taken after it."""

    async def deploy() -> Deployment:
        w3 = http_web3(anvil_url)
        try:
            accounts = dev_accounts()
            return await deploy_development(w3, accounts[0], Account.from_key(TEST_SIGNER_KEY).address.lower(),
                                            [account.address for account in accounts[1:5]])
        finally:
            await w3.provider.disconnect()

    # Requested from inside the running test loop, so deploy on a loop of its own.
    with ThreadPoolExecutor(max_workers=1) as executor:
        return executor.submit(asyncio.run, deploy()).result()


@pytest.fixture
async def chain(app, chain_kind: str, settings: Settings, request: pytest.FixtureRequest) -> AsyncIterator[ChainClient]:
    """A chain client with the vault and both tokens deployed, the vault and development accounts 1-4 funded,
    signing with the test settings' signer; every test starts from the same chain state."""
    if chain_kind == "embedded":
        yield app.extensions["adnet"].chain
        return
    url = request.getfixturevalue("anvil_url")
    deployment = request.getfixturevalue("anvil_deployment")
    snapshot = rpc(url, "evm_snapshot")["result"]
    client = ChainClient(http_web3(url), deployment, signer=Account.from_key(settings.signer_key),
                         claim_deadline_seconds=settings.claim_deadline_seconds,
                         confirmations=settings.chain_confirmations, rpc_url=url)
    yield client
    await client.close()
    rpc(url, "evm_revert", [snapshot])


@pytest.fixture
def app_chain(app, chain: ChainClient) -> Iterator[ChainClient]:
    """The app serves, prepares, completes tasks and signs claims on the chain under test."""
    services = app.extensions["adnet"]
    original = services.chain
    services.chain = chain
    yield chain
    services.chain = original
