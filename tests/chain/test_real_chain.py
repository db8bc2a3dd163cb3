"""Developing against a real node (anvil), through the ``adnet`` command as an operator runs it: ``chain deploy
--test-tokens`` mints to wallets and to the vault, ``demo`` books only what the vault holds (minting the shortfall
with the deployer's key, refusing without it) so ``audit`` passes, and ``chain fund`` works on the node. And
confirmations: an anvil that mines only on transactions confirms nothing while idle; ``anvil --block-time 1``
confirms a deposit within seconds (docs/chain.md)."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator

import pytest
from eth_account import Account
from web3 import HTTPProvider, Web3

from adnet.chain.client import ChainClient
from adnet.chain.deploy import DEV_VAULT_FUNDING, deploy_development
from adnet.chain.service import http_web3
from adnet.cli.main import main
from adnet.core.wallets import dev_accounts
from adnet.money import deposits
from adnet.money.holders import Holder, account_ref, site_holder
from adnet.money.models import DepositStatus
from tests.chain.conftest import rpc, running_anvil
from tests.chain.helpers import G, deposit, user
from tests.conftest import TEST_SIGNER_KEY
from tests.factories import make_publisher, make_site

DEMO_GS = 1230 * G
DEPLOYER_KEY = dev_accounts()[0].key.to_0x_hex()


@pytest.fixture
def operator_env(anvil_url: str, tmp_path, monkeypatch) -> Iterator[str]:
    """The environment of an operator's shell pointed at anvil, with a database of its own; anvil's state is
    restored afterwards."""
    for name in ("ADNET_ENV", "ADNET_VAULT_ADDRESS", "ADNET_GS_TOKEN_ADDRESS", "ADNET_SOV_TOKEN_ADDRESS",
                 "ADNET_DEPLOYER_KEY", "ADNET_CHAIN_CONFIRMATIONS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ADNET_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("ADNET_DATABASE_URL", f"sqlite://{tmp_path / 'adnet.sqlite3'}")
    monkeypatch.setenv("ADNET_SIGNER_KEY", TEST_SIGNER_KEY)
    monkeypatch.setenv("ADNET_CHAIN_RPC_URL", anvil_url)
    snapshot = rpc(anvil_url, "evm_snapshot")["result"]
    yield anvil_url
    rpc(anvil_url, "evm_revert", [snapshot])


def adnet(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def use_printed_settings(out: str, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Set the ``ADNET_*`` variables ``adnet chain deploy`` printed, as its output tells the operator to."""
    printed = dict(line.split("=", 1) for line in out.splitlines() if line.startswith("ADNET_"))
    for name, value in printed.items():
        monkeypatch.setenv(name, value)
    return printed


def balance_of(w3: Web3, token: str, holder: str) -> int:
    call = {"to": Web3.to_checksum_address(token),
            "data": "0x70a08231" + holder.lower().removeprefix("0x").rjust(64, "0")}  # balanceOf(address)
    return int(w3.eth.call(call).hex(), 16)  # type: ignore[arg-type]


def test_deploy_mints_and_the_demo_books_only_what_the_vault_holds(operator_env, monkeypatch, capsys):
    wallet = user(5).address
    monkeypatch.setenv("ADNET_DEPLOYER_KEY", DEPLOYER_KEY)
    status, out, err = adnet(capsys, "chain", "deploy", "--test-tokens", "--mint", f"{wallet}=1000",
                             "--fund-vault", "7")
    assert status == 0, err
    printed = use_printed_settings(out, monkeypatch)
    vault, gs, sov = (printed[f"ADNET_{name}_ADDRESS"] for name in ("VAULT", "GS_TOKEN", "SOV_TOKEN"))
    w3 = Web3(HTTPProvider(operator_env))
    assert [balance_of(w3, token, holder) for token in (gs, sov) for holder in (wallet, vault)] == [
        1000 * G, 7 * G, 1000 * G, 7 * G]
    assert adnet(capsys, "migrate")[0] == 0

    monkeypatch.delenv("ADNET_DEPLOYER_KEY")
    status, out, err = adnet(capsys, "demo", "--bare")  # no key that can mint: refused, nothing booked
    assert status == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "the vault holds 7 G$ and adnet owes 0 G$, short of the demo's 1230 G$" in err
    status, out, _ = adnet(capsys, "audit")
    assert status == 0 and out.startswith("0 transactions")

    monkeypatch.setenv("ADNET_DEPLOYER_KEY", DEPLOYER_KEY)  # it deployed the test tokens
    assert adnet(capsys, "demo", "--bare")[0] == 0
    assert balance_of(w3, gs, vault) == DEMO_GS  # the 1223 G$ it lacked, minted
    status, out, err = adnet(capsys, "audit")
    assert status == 0, out + err
    assert "G$: owed 1230, vault holds 1230" in out and "audit passed" in out
    assert adnet(capsys, "demo", "--bare")[0] == 0  # loaded already: books and mints nothing more
    assert balance_of(w3, gs, vault) == DEMO_GS
    assert adnet(capsys, "audit")[0] == 0

    # The history, played on the demo loaded before it: its top-up's G$ minted to the advertiser and deposited,
    # to be credited once confirmed; the books still balance against the vault.
    status, out, err = adnet(capsys, "demo", "--json")
    assert status == 0, err
    assert len(json.loads(out)["siteIds"]) == 2 and balance_of(w3, gs, vault) == DEMO_GS + 100 * G
    status, out, err = adnet(capsys, "audit")
    assert status == 0 and "audit passed" in out, out + err


def test_chain_fund_sends_test_tokens_on_a_node_with_the_deployers_key(operator_env, monkeypatch, capsys):
    monkeypatch.setenv("ADNET_DEPLOYER_KEY", DEPLOYER_KEY)
    status, out, err = adnet(capsys, "chain", "deploy", "--test-tokens")
    assert status == 0, err
    printed = use_printed_settings(out, monkeypatch)
    assert adnet(capsys, "migrate")[0] == 0
    wallet = Account.create().address
    monkeypatch.setenv("ADNET_DEPLOYER_KEY", user(6).key.to_0x_hex())  # owns no test token
    status, _, err = adnet(capsys, "chain", "fund", wallet)
    assert status == 1 and "cannot mint" in err and "ADNET_DEPLOYER_KEY" in err

    monkeypatch.setenv("ADNET_DEPLOYER_KEY", DEPLOYER_KEY)
    status, _, err = adnet(capsys, "chain", "fund", wallet, "--eth", "2", "--gs", "30", "--sov", "40")
    assert status == 0, err
    w3 = Web3(HTTPProvider(operator_env))
    assert w3.eth.get_balance(Web3.to_checksum_address(wallet)) == 2 * G
    assert (balance_of(w3, printed["ADNET_GS_TOKEN_ADDRESS"], wallet),
            balance_of(w3, printed["ADNET_SOV_TOKEN_ADDRESS"], wallet)) == (30 * G, 40 * G)


@pytest.fixture(scope="module")
def interval_anvil_url() -> Iterator[str]:
    """anvil as docs/chain.md says to run it for development: a block every second, transactions or not."""
    yield from running_anvil("--block-time", "1")


async def node_client(url: str) -> ChainClient:
    """A client of freshly deployed contracts, confirming as adnet does on a node by default (one block on top)."""
    w3 = http_web3(url)
    deployment = await deploy_development(w3, dev_accounts()[0], Account.from_key(TEST_SIGNER_KEY).address,
                                          [user(2).address])
    return ChainClient(w3, deployment, signer=Account.from_key(TEST_SIGNER_KEY), claim_deadline_seconds=3600,
                       confirmations=1, rpc_url=url)


async def status_after(chain: ChainClient, holder: Holder, tx_hash: str, clock, seconds: float) -> DepositStatus:
    """The deposit's status once credited, or after ``seconds`` of asking."""
    deadline = time.monotonic() + seconds
    while True:
        status = (await deposits.credit(holder, tx_hash, chain, clock.now())).deposit.status
        if status == DepositStatus.CREDITED or time.monotonic() > deadline:
            return status
        await asyncio.sleep(0.2)


async def test_one_confirmation_comes_with_anvil_block_time_and_never_while_an_automining_anvil_idles(
        app, anvil_url, interval_anvil_url, clock):
    snapshot = rpc(anvil_url, "evm_snapshot")["result"]
    publisher = await make_publisher(user(2).address.lower())
    # An automining anvil idle for 2.5 s (two blocks of the other): never confirmed. With a block a second, confirmed
    # once the next one comes, which a busy machine may take longer to see.
    for url, expected, seconds in ((anvil_url, DepositStatus.PENDING, 2.5),
                                   (interval_anvil_url, DepositStatus.CREDITED, 10.0)):
        chain = await node_client(url)
        try:
            assert await chain.token_balance("G$", chain.vault_address) == DEV_VAULT_FUNDING
            holder = site_holder(await make_site(publisher))
            receipt = await deposit(chain, user(2), G, account_ref(holder.id))
            tx_hash = receipt["transactionHash"].to_0x_hex()
            assert await status_after(chain, holder, tx_hash, clock, seconds=seconds) == expected, url
        finally:
            await chain.close()
    rpc(anvil_url, "evm_revert", [snapshot])
