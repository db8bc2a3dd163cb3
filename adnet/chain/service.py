"""Connecting adnet to its chain at start-up, and letting go at shutdown.

Which chain, by settings:

- ``ADNET_CHAIN_RPC_URL`` set: that node, with the vault and tokens of ``ADNET_VAULT_ADDRESS``,
  ``ADNET_GS_TOKEN_ADDRESS`` and ``ADNET_SOV_TOKEN_ADDRESS`` (printed by ``adnet chain deploy``);
- otherwise, in development: the development chain process (``adnet.chain.devserver``) of the data directory,
  started when none runs; the first start deploys the test tokens and the vault there (signer: the configured
  signer key) and funds the vault and the development accounts;
- otherwise, in tests: an in-memory copy of a development chain deployed once per process, whose blocks follow
  the app's clock.

In every case the database's ``ChainBinding`` must name the same chain (and, for a configured node, the same
contracts), or start-up stops with ``ChainMismatch``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import aiohttp
from eth_account import Account
from web3 import AsyncHTTPProvider, AsyncWeb3
from web3.providers.rpc.utils import ExceptionRetryConfiguration
from web3.types import RPCEndpoint, RPCResponse

from adnet.chain import devserver
from adnet.chain.binding import bind, bound_deployment, check
from adnet.chain.client import ChainClient, ChainUnavailable
from adnet.chain.deploy import Deployment, chain_identity, deploy_development
from adnet.config import DEFAULT_CHAIN_TIMEOUT_SECONDS, Settings
from adnet.core.clock import Clock
from adnet.core.wallets import dev_accounts

if TYPE_CHECKING:
    from adnet.chain.devchain import DevChain

log = logging.getLogger(__name__)

# eth_getLogs may take longer than other calls: its cost grows with the range, and only the watcher, a background
# job that reads up to 2000 blocks at a time, asks it.
LOGS_TIMEOUT_SECONDS = 30.0
# Test chains start from a fixed genesis in the past, so any test clock is later than every template block.
TEST_GENESIS_TIME = 1_577_836_800  # 2020-01-01T00:00:00Z


class ChainConfigError(Exception):
    """The settings do not say which contracts to use on the configured node."""


@dataclass
class ChainConnection:
    """A connected, bound chain client and what must be released with it."""

    client: ChainClient
    cleanups: list[Callable[[], object]] = field(default_factory=list)

    async def close(self) -> None:
        await self.client.close()
        for cleanup in reversed(self.cleanups):
            cleanup()


async def connect(settings: Settings, *, clock: Clock) -> ChainConnection:
    """Connect to the chain the settings name, deploy on a new development chain, and check the binding."""
    if settings.chain_rpc_url is not None:
        return await _connect_node(settings, clock, settings.chain_rpc_url)
    if settings.env == "test":
        return await _connect_test_chain(settings, clock)
    return await _connect_dev_chain(settings, clock)


class TimedHTTPProvider(AsyncHTTPProvider):
    """web3's HTTP provider with a budget per call: whatever happens on the way (a connection refused and retried,
    a node that accepts and never answers, one that answers slowly), a call returns or raises ``TimeoutError``
    within ``timeout`` seconds (``LOGS_TIMEOUT_SECONDS`` for ``eth_getLogs``), which ``ChainClient`` turns into
    ``ChainUnavailable`` and the web layer into a prompt 503 ``chain_unavailable``. A refused connection is
    retried quickly inside the budget (a restarting development chain); a timeout is not retried."""

    def __init__(self, url: str, timeout: float) -> None:
        super().__init__(
            url,
            request_kwargs={"timeout": aiohttp.ClientTimeout(total=None, sock_connect=timeout)},
            exception_retry_configuration=ExceptionRetryConfiguration(
                errors=(aiohttp.ClientConnectionError,), retries=3, backoff_factor=0.1),
        )
        self.timeout = timeout

    def budget(self, method: str) -> float:
        """The seconds a call of ``method`` may take."""
        return max(self.timeout, LOGS_TIMEOUT_SECONDS) if method == "eth_getLogs" else self.timeout

    async def make_request(self, method: RPCEndpoint, params: Any) -> RPCResponse:
        async with asyncio.timeout(self.budget(method)):
            return await super().make_request(method, params)

    async def make_batch_request(self, batch_requests: list[tuple[RPCEndpoint, Any]]
                                 ) -> list[RPCResponse] | RPCResponse:
        async with asyncio.timeout(max(self.budget(method) for method, _ in batch_requests)):
            return await super().make_batch_request(batch_requests)


def http_web3(url: str, timeout: float = DEFAULT_CHAIN_TIMEOUT_SECONDS) -> AsyncWeb3:
    """AsyncWeb3 over HTTP JSON-RPC, each call within ``timeout`` seconds (``TimedHTTPProvider``)."""
    return AsyncWeb3(TimedHTTPProvider(url, timeout))


def _client(settings: Settings, w3: AsyncWeb3, deployment: Deployment, **kwargs) -> ChainClient:
    return ChainClient(w3, deployment, signer=Account.from_key(settings.signer_key),
                       claim_deadline_seconds=settings.claim_deadline_seconds,
                       confirmations=settings.chain_confirmations, timeout=settings.chain_timeout_seconds, **kwargs)


async def _connect_node(settings: Settings, clock: Clock, url: str) -> ChainConnection:
    vault, gs_token, sov_token = settings.vault_address, settings.gs_token_address, settings.sov_token_address
    if vault is None or gs_token is None or sov_token is None:
        raise ChainConfigError("ADNET_CHAIN_RPC_URL is set but ADNET_VAULT_ADDRESS, ADNET_GS_TOKEN_ADDRESS and "
                               "ADNET_SOV_TOKEN_ADDRESS are not all set: run `adnet chain deploy` and set what it "
                               "prints")
    w3 = http_web3(url, settings.chain_timeout_seconds)
    try:
        chain_id, genesis_hash = await _identity(w3, url)
        configured = Deployment(chain_id=chain_id, genesis_hash=genesis_hash, vault=vault, gs_token=gs_token,
                                sov_token=sov_token,
                                deployed_block=max(0, await w3.eth.block_number - settings.chain_confirmations))
        deployment = await bind(configured, now=clock.now(), where=url)
        await _require_code(w3, deployment, url)
    except BaseException:
        await w3.provider.disconnect()
        raise
    return ChainConnection(_client(settings, w3, deployment, rpc_url=url))


async def _connect_dev_chain(settings: Settings, clock: Clock) -> ChainConnection:
    state = devserver.state_path(settings.data_dir)
    stack = contextlib.ExitStack()
    info = await asyncio.to_thread(stack.enter_context, devserver.ensure_running(state))
    w3 = http_web3(info.url, settings.chain_timeout_seconds)
    try:
        deployment = await _development_deployment(settings, clock, w3, where=f"the development chain ({state})")
    except BaseException:
        await w3.provider.disconnect()
        stack.close()
        raise
    return ChainConnection(_client(settings, w3, deployment, rpc_url=info.url), cleanups=[stack.close])


async def _connect_test_chain(settings: Settings, clock: Clock) -> ChainConnection:
    from adnet.chain.devchain import InProcessProvider  # the development chain's packages: not in production

    template, template_deployment = await _test_template(settings.signer_address)
    chain = template.copy(time_source=lambda: clock.now().timestamp())
    w3 = AsyncWeb3(InProcessProvider(chain))
    deployment = await bind(template_deployment, now=clock.now(), where="the in-memory test chain")
    return ChainConnection(_client(settings, w3, deployment, devchain=chain))


async def _development_deployment(settings: Settings, clock: Clock, w3: AsyncWeb3, *, where: str) -> Deployment:
    """The bound deployment on a development chain, deploying and binding on its first use."""
    chain_id, genesis_hash = await _identity(w3, where)
    bound = await bound_deployment()
    if bound is not None:
        check(bound, replace(bound, chain_id=chain_id, genesis_hash=genesis_hash), where=where)
        await _require_code(w3, bound, where)
        return bound
    accounts = dev_accounts()
    fresh = await deploy_development(w3, accounts[0], settings.signer_address, [a.address for a in accounts])
    return await bind(fresh, now=clock.now(), where=where, same_contracts=False)


# One deployed development chain per signer and process; each test app gets a copy.
_test_templates: dict[str, tuple[DevChain, Deployment]] = {}


async def _test_template(signer: str) -> tuple[DevChain, Deployment]:
    from adnet.chain.devchain import DevChain, InProcessProvider

    if signer not in _test_templates:
        template = DevChain.in_memory(time_source=lambda: TEST_GENESIS_TIME)
        accounts = dev_accounts()
        deployment = await deploy_development(AsyncWeb3(InProcessProvider(template)), accounts[0], signer,
                                              [a.address for a in accounts])
        _test_templates[signer] = (template, deployment)
    return _test_templates[signer]


async def _identity(w3: AsyncWeb3, where: str) -> tuple[int, str]:
    try:
        return await chain_identity(w3)
    except (aiohttp.ClientError, OSError, TimeoutError) as exc:
        raise ChainUnavailable(f"the chain at {where} does not answer ({type(exc).__name__})") from exc


async def _require_code(w3: AsyncWeb3, deployment: Deployment, where: str) -> None:
    if not await w3.eth.get_code(AsyncWeb3.to_checksum_address(deployment.vault)):
        raise ChainConfigError(f"no contract at the vault address {deployment.vault} on the chain at {where}")
