"""``adnet chain …``: serve the development chain, deploy to a real node, reset development, fund a wallet.

- ``adnet chain serve``: run the development chain in the foreground (``adnet serve`` starts one by itself).
- ``adnet chain deploy``: deploy the vault (and, with ``--test-tokens``, two TestTokens, minted to the vault with
  ``--fund-vault`` and to wallets with ``--mint``) to the node of ``ADNET_CHAIN_RPC_URL``, paid by
  ``ADNET_DEPLOYER_KEY``, and print the ``ADNET_*`` variables to set.
- ``adnet chain reset``: development only: forget the development chain and everything bound to it, then deploy
  on a new one.
- ``adnet chain fund ADDRESS``: gas money and test G$/SOV for a wallet of yours, from development account 0 on the
  development chain, from ``ADNET_DEPLOYER_KEY`` (the test tokens' owner) on a node.
- ``adnet chain status``: the bound chain, the node's head and the vault's token balances.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import getpass
import logging
import os
import signal
import sys
from collections.abc import Awaitable, Callable, Iterator
from types import FrameType
from typing import TypeVar

from eth_account import Account
from eth_account.signers.local import LocalAccount
from tortoise.transactions import in_transaction

from adnet.chain import devserver
from adnet.chain.binding import ChainMismatch
from adnet.chain.client import ChainClient, ChainUnavailable
from adnet.chain.deploy import can_mint, deploy, mint, send_eth
from adnet.chain.models import ChainBinding, ChainCursor
from adnet.chain.service import ChainConfigError, connect, http_web3
from adnet.cli.state import CHAIN, DATABASE
from adnet.config import Settings
from adnet.core.amounts import InvalidAmount, Token, parse_amount, to_decimal_string
from adnet.core.clock import Clock
from adnet.core.wallets import InvalidWallet, dev_accounts, normalize_wallet
from adnet.db import config as database
from adnet.interactions.models import Interaction
from adnet.money.models import (
    Claim,
    Deposit,
    Exchange,
    LedgerAccount,
    LedgerPosting,
    LedgerTransaction,
    SignerNonce,
    Withdrawal,
)
from adnet.tasks.models import Completion

log = logging.getLogger(__name__)

T = TypeVar("T")
DEPLOYER_KEY_VARIABLE = "ADNET_DEPLOYER_KEY"


def register(commands: argparse._SubParsersAction) -> None:
    """Add ``adnet chain`` and its subcommands to the ``adnet`` parser."""
    chain = commands.add_parser("chain", help="the chain: serve (development), deploy, reset, fund, status")
    actions = chain.add_subparsers(required=True, metavar="ACTION")

    serve = actions.add_parser("serve", help="run the development chain in the foreground")
    serve.add_argument("--port", type=int, default=0, help="default: any free port, written to devchain.json")
    serve.set_defaults(command=_serve)

    deploy_cmd = actions.add_parser("deploy", help="deploy the vault to ADNET_CHAIN_RPC_URL and print the settings")
    deploy_cmd.add_argument("--gs-token", help="address of the G$ token (e.g. GoodDollar on Celo)")
    deploy_cmd.add_argument("--sov-token", help="address of the SOV token")
    deploy_cmd.add_argument("--test-tokens", action="store_true",
                            help="deploy mintable TestTokens for the tokens not given (testnets only)")
    deploy_cmd.add_argument("--rate", default="1", help="G$ per SOV, a decimal (default 1)")
    deploy_cmd.add_argument("--owner", help="vault owner (default: the deployer); use a multisig in production")
    deploy_cmd.add_argument("--fund-vault", metavar="AMOUNT",
                            help="with --test-tokens: mint AMOUNT of each test token to the vault, for what adnet "
                                 "will owe before anyone deposits (demo budgets, rewards)")
    deploy_cmd.add_argument("--mint", action="append", default=[], metavar="ADDRESS=AMOUNT",
                            help="with --test-tokens: mint AMOUNT of each test token to ADDRESS (repeatable)")
    deploy_cmd.set_defaults(command=_deploy)

    reset = actions.add_parser("reset", help="development: start over on a new development chain")
    reset.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    reset.set_defaults(command=_reset, needs=(DATABASE,))

    fund = actions.add_parser("fund", help="send gas money and test G$/SOV to a wallet (not in production)")
    fund.add_argument("address")
    fund.add_argument("--eth", default="10", help="native coin for gas (default 10)")
    fund.add_argument("--gs", default="1000", help="G$ to mint (default 1000)")
    fund.add_argument("--sov", default="1000", help="SOV to mint (default 1000)")
    fund.set_defaults(command=_fund)

    status = actions.add_parser("status", help="show the bound chain, its head and the vault's balances")
    status.set_defaults(command=_status, needs=(DATABASE, CHAIN))


def require_development_chain(settings: Settings) -> None:
    """Before ``adnet serve`` does anything: DevChainNotInstalled where it would have to start the development chain
    and its packages are not installed."""
    state = devserver.state_path(settings.data_dir)
    if settings.chain_rpc_url is None and not settings.production and devserver.running(state) is None:
        devserver.require_installed()


@contextlib.contextmanager
def serving(settings: Settings) -> Iterator[None]:
    """Around ``adnet serve``: on the embedded chain, keep one development chain process running for every worker
    (supervised: restarted should it die, ``devserver.Supervisor``), with its contracts deployed and bound before
    the workers start (so they never race to deploy)."""
    if settings.chain_rpc_url is not None or settings.production:
        yield
        return
    with _terminate_unwinds(), devserver.supervised(devserver.state_path(settings.data_dir)):
        _run(settings, _ready)
        yield


@contextlib.contextmanager
def _terminate_unwinds() -> Iterator[None]:
    """SIGTERM raises ``SystemExit`` here, so the development chain process is stopped on the way out. uvicorn
    shuts down gracefully on SIGTERM and then raises the signal again for the previous handler: with the default
    handler the process would die on the spot and leave the chain process running."""
    def exit_on_terminate(signum: int, frame: FrameType | None) -> None:
        raise SystemExit(128 + signum)

    previous = signal.signal(signal.SIGTERM, exit_on_terminate)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _serve(settings: Settings, args: argparse.Namespace) -> int:
    if settings.production or settings.chain_rpc_url is not None:
        return _fail("the development chain serves only in development without ADNET_CHAIN_RPC_URL")
    try:
        devserver.serve(devserver.state_path(settings.data_dir), port=args.port)
    except devserver.DevChainError as exc:
        return _fail(str(exc))
    return 0


def _deploy(settings: Settings, args: argparse.Namespace) -> int:
    if settings.chain_rpc_url is None:
        return _fail("set ADNET_CHAIN_RPC_URL to the node to deploy to (the development chain deploys by itself)")
    if not args.test_tokens and not (args.gs_token and args.sov_token):
        return _fail("give --gs-token and --sov-token, or --test-tokens on a testnet")
    try:
        deployer = _deployer()
        rate = parse_amount(args.rate)
        gs_token, sov_token, owner = (normalize_wallet(address) if address else None
                                      for address in (args.gs_token, args.sov_token, args.owner))
        mints = _mints(args.mint, args.fund_vault)
    except (ValueError, InvalidAmount, InvalidWallet) as exc:
        return _fail(str(exc))
    minted = [symbol for symbol, given in ((Token.GS, gs_token), (Token.SOV, sov_token)) if given is None]
    if mints and not (args.test_tokens and minted):
        return _fail("--mint and --fund-vault mint test tokens: give --test-tokens, and not both token addresses")
    url = settings.chain_rpc_url

    async def run() -> int:
        w3 = http_web3(url, settings.chain_timeout_seconds)
        try:
            deployment = await deploy(w3, deployer, signer=settings.signer_address, rate=rate, gs_token=gs_token,
                                      sov_token=sov_token, owner=owner)
            for address, amount in mints:
                to = deployment.vault if address is None else address
                for symbol in minted:
                    await mint(w3, deployer, deployment.token(symbol), to, amount)
                print(f"# minted {to_decimal_string(amount)} {' and '.join(minted)} to "
                      f"{'the vault' if address is None else address}")
        finally:
            await w3.provider.disconnect()
        print(f"# adnet vault on chain {deployment.chain_id}, deployed at block {deployment.deployed_block}")
        print(f"# claim signer {settings.signer_address}; rate {args.rate} G$ per SOV")
        print(f"ADNET_CHAIN_RPC_URL={url}")
        print(f"ADNET_VAULT_ADDRESS={deployment.vault}")
        print(f"ADNET_GS_TOKEN_ADDRESS={deployment.gs_token}")
        print(f"ADNET_SOV_TOKEN_ADDRESS={deployment.sov_token}")
        return 0

    return asyncio.run(run())


def deployer_from_environment() -> LocalAccount | None:
    """The account of ``ADNET_DEPLOYER_KEY`` where it is set (it owns the test tokens it deployed), else None."""
    key = os.environ.get(DEPLOYER_KEY_VARIABLE)
    return Account.from_key(key.strip()) if key else None


def _deployer() -> LocalAccount:
    """The account of ``ADNET_DEPLOYER_KEY``, asked for (hidden) where it is not set."""
    return deployer_from_environment() or Account.from_key(
        getpass.getpass(f"{DEPLOYER_KEY_VARIABLE} (hidden): ").strip())


def _mints(wallets: list[str], vault_amount: str | None) -> list[tuple[str | None, int]]:
    """``--mint ADDRESS=AMOUNT`` and ``--fund-vault AMOUNT`` as (address, or None for the vault, amount)."""
    mints: list[tuple[str | None, int]] = [(None, parse_amount(vault_amount))] if vault_amount else []
    for given in wallets:
        address, separator, amount = given.partition("=")
        if not separator:
            raise ValueError(f"--mint {given}: write ADDRESS=AMOUNT")
        mints.append((normalize_wallet(address), parse_amount(amount)))
    return mints


def _reset(settings: Settings, args: argparse.Namespace) -> int:
    if settings.production:
        return _fail("adnet chain reset is for development only")
    state = devserver.state_path(settings.data_dir)
    if settings.chain_rpc_url is None and devserver.running(state) is not None:
        return _fail("the development chain is running: stop `adnet serve` (or `adnet chain serve`) first")
    if not args.yes and input("Forget the chain, its deposits, claims and all balances? [y/N] ").lower() != "y":
        return _fail("cancelled")

    async def clear() -> dict[str, int]:
        await database.open_database(settings.database_url)
        try:
            return await clear_chain_state()
        finally:
            await database.close_database()

    deleted = asyncio.run(clear())
    print("cleared: " + (", ".join(f"{table} {count}" for table, count in deleted.items() if count) or "nothing"))
    if settings.chain_rpc_url is not None:
        print("the database is unbound; deploy again (`adnet chain deploy`) and set the ADNET_* variables it prints")
        return 0
    for path in (state, state.with_name(state.name + "-wal"), state.with_name(state.name + "-shm")):
        path.unlink(missing_ok=True)
    with devserver.ensure_running(state):
        genesis_hash, vault = _run(settings, _deployment_of)
    print(f"new development chain: genesis {genesis_hash}, vault {vault}")
    return 0


def _fund(settings: Settings, args: argparse.Namespace) -> int:
    if settings.production:
        return _fail("adnet chain fund is not for production: its tokens are test tokens")
    try:
        address = normalize_wallet(args.address)
        amounts = {name: parse_amount(getattr(args, name)) for name in ("eth", "gs", "sov")}
        owner = dev_accounts()[0] if settings.chain_rpc_url is None else _deployer()
    except (InvalidWallet, InvalidAmount, ValueError) as exc:
        return _fail(str(exc))

    async def fund(client: ChainClient) -> str | None:
        for token in (client.gs_address, client.sov_address):
            if not await can_mint(client.w3, owner.address, token):
                return f"{owner.address} cannot mint the token at {token}: set {DEPLOYER_KEY_VARIABLE} to its owner"
        await send_eth(client.w3, owner, address, amounts["eth"])
        await mint(client.w3, owner, client.gs_address, address, amounts["gs"])
        await mint(client.w3, owner, client.sov_address, address, amounts["sov"])
        return None

    if settings.chain_rpc_url is None:
        with devserver.ensure_running(devserver.state_path(settings.data_dir)):
            refused = _run(settings, fund)
    else:
        refused = _run(settings, fund)
    if refused is not None:
        return _fail(refused)
    print(f"sent {args.eth} ETH, {args.gs} G$ and {args.sov} SOV to {address}")
    return 0


def _status(settings: Settings, args: argparse.Namespace) -> int:
    async def status(client: ChainClient) -> None:
        health = await client.health()
        print(f"chain      {client.chain_id} (genesis {client.deployment.genesis_hash})")
        print(f"node       {client.rpc_url or 'development chain'}: {health['status']}, "
              f"block {health.get('blockNumber')}")
        print(f"vault      {client.vault_address} (rate {to_decimal_string(await client.rate())} G$ per SOV)")
        for symbol in Token:
            held = await client.token_balance(symbol, client.vault_address)
            print(f"{symbol:<10} {client.token_address(symbol)} vault holds {to_decimal_string(held)}")

    if settings.chain_rpc_url is None and not settings.production:
        with devserver.ensure_running(devserver.state_path(settings.data_dir)):
            _run(settings, status)
    else:
        _run(settings, status)
    return 0


def _run(settings: Settings, action: Callable[[ChainClient], Awaitable[T]]) -> T:
    """Open the database and the chain (deploying and binding a new development chain), run ``action``."""

    async def run() -> T:
        await database.open_database(settings.database_url)
        try:
            connection = await connect(settings, clock=Clock())
            try:
                return await action(connection.client)
            finally:
                await connection.close()
        finally:
            await database.close_database()

    try:
        return asyncio.run(run())
    except (ChainMismatch, ChainConfigError, ChainUnavailable, devserver.DevChainError) as exc:
        print(f"adnet: {exc}", file=sys.stderr)
        raise SystemExit(1) from None


async def _deployment_of(client: ChainClient) -> tuple[str, str]:
    return client.deployment.genesis_hash, client.vault_address


async def _ready(client: ChainClient) -> None:
    return None


def _fail(message: str) -> int:
    print(f"adnet: {message}", file=sys.stderr)
    return 1


async def clear_chain_state() -> dict[str, int]:
    """Forget everything bound to the current chain, for ``adnet chain reset`` (development only).

    Deleted: the binding and watcher cursor, signer nonces, deposits, claims (completions and interactions keep
    their points and lose their claim), withdrawals, exchanges (priced at the old vault's rate) and the whole
    ledger: every balance is made partly of tokens that came from or went to the old chain, so no balance can be
    carried over. Kept: publishers, sites, advertisers, campaigns, creatives, tasks, completions, events and
    interactions. Returns the number of rows deleted per table."""
    deleted: dict[str, int] = {}
    async with in_transaction():
        await Completion.filter(claim_id__isnull=False).update(claim_id=None)
        await Interaction.filter(claim_id__isnull=False).update(claim_id=None)
        for model in (Withdrawal, Exchange, Claim, Deposit, SignerNonce, ChainCursor, ChainBinding, LedgerPosting,
                      LedgerTransaction, LedgerAccount):
            deleted[model._meta.db_table] = await model.all().delete()
    log.warning("chain state cleared %s", deleted)
    return deleted
