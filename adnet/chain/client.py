"""adnet's one interface to the chain: the development chain or any JSON-RPC node, through web3's AsyncWeb3.

The client knows the deployment it is bound to (chain, vault, tokens), reads what the domain needs (receipts,
vault events, the protocol rate, balances), and builds the unsigned transactions a wallet sends (approve, deposit,
claim) as plain dicts, so the browser needs no ABI code. It also carries the claim signer, which it gets from the
settings, so domain code that signs claims needs nothing else.

A node that does not answer, or not within the call's budget (``ADNET_CHAIN_TIMEOUT_SECONDS``), raises
``ChainUnavailable``; callers turn that into a 503 that changed nothing.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import aiohttp
import httpx
from eth_account.signers.local import LocalAccount
from hexbytes import HexBytes
from web3 import AsyncHTTPProvider, AsyncWeb3
from web3.exceptions import TransactionNotFound
from web3.types import TxReceipt

from adnet.chain.contracts import token_artifact, vault_artifact
from adnet.chain.deploy import Deployment
from adnet.chain.transact import send_transaction
from adnet.config import DEFAULT_CHAIN_TIMEOUT_SECONDS
from adnet.core.wallets import checksummed

if TYPE_CHECKING:
    from adnet.chain.devchain import DevChain

log = logging.getLogger(__name__)


class Claim(Protocol):
    """What the vault needs of a signed claim to pay it: the chain's own view of one, which the claims adnet keeps
    (``adnet.money.models.Claim``) satisfy."""

    chain_id: int
    vault: str
    recipient: str
    token: str
    amount: Any  # an integer amount in the smallest unit, as the ledger stores it
    claim_ref: str
    nonce: int
    deadline: int
    signature: str

RATE_CACHE_SECONDS = 30.0
T = TypeVar("T")


class ChainUnavailable(Exception):
    """The chain's node did not answer."""


@dataclass(frozen=True)
class DepositEvent:
    """A vault ``Deposited`` log."""

    tx_hash: str
    log_index: int
    block_number: int
    sender: str
    token: str
    token_symbol: str | None
    amount: int
    account_ref: str


@dataclass(frozen=True)
class ClaimedEvent:
    """A vault ``Claimed`` log: the claim ``claim_ref`` was paid."""

    tx_hash: str
    log_index: int
    block_number: int
    claim_ref: str
    recipient: str
    token: str
    amount: int
    signer: str
    nonce: int


@dataclass(frozen=True)
class ChainLog:
    """One log of a contract, as ``eth_getLogs`` gives it (addresses and hashes lower-case ``0x`` hex)."""

    address: str
    topics: tuple[bytes, ...]
    data: bytes
    tx_hash: str
    log_index: int
    block_number: int


class ChainClient:
    """The bound chain: reads, wallet transaction builders, and the claim signer."""

    def __init__(
        self,
        w3: AsyncWeb3,
        deployment: Deployment,
        *,
        signer: LocalAccount,
        claim_deadline_seconds: int,
        confirmations: int,
        rpc_url: str | None = None,
        devchain: DevChain | None = None,
        timeout: float = DEFAULT_CHAIN_TIMEOUT_SECONDS,
    ) -> None:
        """``timeout``: the seconds a call relayed to the node (``relay``) may take; the web3 calls have theirs in
        their provider (``adnet.chain.service.http_web3``)."""
        self.w3 = w3
        self.deployment = deployment
        self.signer = signer
        self.claim_deadline_seconds = claim_deadline_seconds
        self.confirmations = confirmations
        self.rpc_url = rpc_url
        self.devchain = devchain
        self.timeout = timeout
        self.vault = w3.eth.contract(address=AsyncWeb3.to_checksum_address(deployment.vault),
                                     abi=vault_artifact().abi)
        self._token_abi = token_artifact().abi
        self._rate: tuple[int, float] | None = None

    @property
    def chain_id(self) -> int:
        return self.deployment.chain_id

    @property
    def vault_address(self) -> str:
        return self.deployment.vault

    @property
    def gs_address(self) -> str:
        return self.deployment.gs_token

    @property
    def sov_address(self) -> str:
        return self.deployment.sov_token

    def token_address(self, symbol: str) -> str:
        return self.deployment.token(symbol)

    async def close(self) -> None:
        """Release the node connection (HTTP sessions)."""
        if isinstance(self.w3.provider, AsyncHTTPProvider):
            await self.w3.provider.disconnect()

    async def health(self) -> dict[str, Any]:
        """``{"status": "ok", "chainId", "blockNumber", "vault"}`` (EIP-55, as every answer writes addresses) when
        the node answers as the bound chain."""
        try:
            chain_id = await self.w3.eth.chain_id
            block_number = await self.w3.eth.block_number
        except Exception as exc:  # reported, never raised: health must always answer
            return {"status": f"unavailable: {type(exc).__name__}"}
        status = "ok" if chain_id == self.chain_id else "wrong_chain"
        return {"status": status, "chainId": chain_id, "blockNumber": block_number,
                "vault": checksummed(self.vault_address)}

    async def block_number(self) -> int:
        return await self._guard(self.w3.eth.block_number)

    async def block_timestamp(self, block_number: int) -> int:
        """The timestamp (Unix seconds) of a block: the chain's own time."""
        block = await self._guard(self.w3.eth.get_block(block_number))
        return int(block["timestamp"])

    async def get_receipt(self, tx_hash: str) -> TxReceipt | None:
        """The receipt of a mined transaction, or None when the node knows no mined transaction of that hash."""
        try:
            return await self._guard(self.w3.eth.get_transaction_receipt(HexBytes(tx_hash)))
        except TransactionNotFound:
            return None

    async def rate(self) -> int:
        """The vault's protocol rate (G$ smallest units per 1e18 SOV smallest units), cached for 30 s."""
        cached = self._rate
        if cached is not None and time.monotonic() - cached[1] < RATE_CACHE_SECONDS:
            return cached[0]
        rate = int(await self._guard(self.vault.functions.rate().call()))
        self._rate = (rate, time.monotonic())
        return rate

    async def read_rate(self) -> int:
        """The vault's protocol rate read now, past the cache (what an operator about to change it must see)."""
        return int(await self._guard(self.vault.functions.rate().call()))

    async def vault_owner(self) -> str:
        """The vault's owner (lower case): the only account that may set the rate (a multisig in production)."""
        return str(await self._guard(self.vault.functions.owner().call())).lower()

    async def signer_authorized(self) -> bool:
        """Whether the vault accepts claims signed by adnet's signer (``isSigner``): when it does not, every claim
        adnet issues reverts ``UnauthorizedSigner``."""
        signer = AsyncWeb3.to_checksum_address(self.signer.address)
        return bool(await self._guard(self.vault.functions.isSigner(signer).call()))

    async def token_balance(self, token: str, address: str) -> int:
        """The balance of ``address`` in ``token`` (``"G$"``, ``"SOV"`` or a token address), smallest units."""
        contract = self._token(token if token.startswith("0x") else self.token_address(token))
        return int(await self._guard(contract.functions.balanceOf(AsyncWeb3.to_checksum_address(address)).call()))

    async def native_balance(self, address: str) -> int:
        """The balance of ``address`` in the chain's native coin (what pays gas), in wei."""
        return int(await self._guard(self.w3.eth.get_balance(AsyncWeb3.to_checksum_address(address))))

    def build_approve_tx(self, owner: str, token_symbol: str, amount: int) -> dict[str, Any]:
        """The transaction by which ``owner`` lets the vault pull ``amount`` of the token (before a deposit)."""
        token = self.token_address(token_symbol)
        data = self._token(token).encode_abi("approve", args=[self.vault.address, amount])
        return self._wallet_tx(owner, token, data, self.chain_id)

    def build_deposit_tx(self, owner: str, token_symbol: str, amount: int, account_ref: str) -> dict[str, Any]:
        """The vault ``deposit`` a wallet sends to credit ``account_ref`` (see adnet.money.deposits)."""
        token = AsyncWeb3.to_checksum_address(self.token_address(token_symbol))
        data = self.vault.encode_abi("deposit", args=[token, amount, HexBytes(account_ref)])
        return self._wallet_tx(owner, self.vault_address, data, self.chain_id)

    def build_set_rate_tx(self, owner: str, rate: int) -> dict[str, Any]:
        """The vault ``setRate`` call, for its owner to send."""
        return self._wallet_tx(owner, self.vault_address, self.vault.encode_abi("setRate", args=[rate]), self.chain_id)

    async def send(self, account: LocalAccount, transaction: dict[str, Any]) -> str:
        """Sign ``transaction`` with ``account``, send it and wait for its receipt; returns its hash (development
        chain only: adnet holds no key of value)."""
        receipt = await send_transaction(self.w3, account, transaction)
        return receipt["transactionHash"].to_0x_hex()

    def build_claim_tx(self, sender: str, claim: Claim) -> dict[str, Any]:
        """The vault ``claim`` call redeeming ``claim``; anyone may send it, the tokens go to its recipient."""
        data = self.vault.encode_abi("claim", args=_claim_args(claim))
        return self._wallet_tx(sender, claim.vault, data, int(claim.chain_id))

    def build_claim_batch_tx(self, sender: str, claims: Sequence[Claim]) -> dict[str, Any]:
        """The vault ``claimBatch`` call redeeming ``claims`` in one transaction, all or none; they must be of this
        chain and vault (ValueError otherwise, and for none)."""
        if not claims:
            raise ValueError("a batch redeems at least one claim")
        if any((int(claim.chain_id), claim.vault) != (self.chain_id, self.vault_address) for claim in claims):
            raise ValueError("every claim of a batch must be of the bound chain and vault")
        data = self.vault.encode_abi("claimBatch", args=[[tuple(_claim_args(claim)) for claim in claims]])
        return self._wallet_tx(sender, self.vault_address, data, self.chain_id)

    async def vault_events(self, from_block: int, to_block: int) -> list[DepositEvent | ClaimedEvent]:
        """The vault's ``Deposited`` and ``Claimed`` events in a block range, in chain order."""
        topics = [[self._topic("Deposited"), self._topic("Claimed")]]
        logs = await self._guard(self.w3.eth.get_logs({
            "address": self.vault.address, "fromBlock": from_block, "toBlock": to_block, "topics": topics,
        }))
        events = [self._decode(entry) for entry in logs]
        return sorted((event for event in events if event is not None),
                      key=lambda event: (event.block_number, event.log_index))

    async def logs(self, addresses: Sequence[str], topic0s: Sequence[str], from_block: int, to_block: int
                   ) -> list[ChainLog]:
        """The logs of ``addresses`` whose topic0 is one of ``topic0s`` in a block range, in chain order."""
        logs = await self._guard(self.w3.eth.get_logs({
            "address": [AsyncWeb3.to_checksum_address(address) for address in addresses], "fromBlock": from_block,
            "toBlock": to_block, "topics": [list(topic0s)],
        }))
        found = [ChainLog(address=str(entry["address"]).lower(),
                          topics=tuple(bytes(topic) for topic in entry["topics"]),
                          data=bytes(HexBytes(entry["data"])), tx_hash=HexBytes(entry["transactionHash"]).to_0x_hex(),
                          log_index=int(entry["logIndex"]), block_number=int(entry["blockNumber"]))
                 for entry in logs]
        return sorted(found, key=lambda log: (log.block_number, log.log_index))

    async def transaction_sender(self, tx_hash: str) -> str:
        """The lower-case address that sent the transaction ``tx_hash``."""
        transaction = await self._guard(self.w3.eth.get_transaction(HexBytes(tx_hash)))
        return str(transaction["from"]).lower()

    def deposits_in(self, receipt: TxReceipt) -> list[DepositEvent]:
        """The vault's ``Deposited`` events in a receipt (logs of other contracts are ignored)."""
        events = [self._decode(entry) for entry in receipt["logs"]]
        return [event for event in events if isinstance(event, DepositEvent)]

    async def relay(self, request: Any) -> Any:
        """Pass a raw JSON-RPC request (or batch) to the node and return its raw answer (the dev proxy)."""
        if self.devchain is not None:
            return self.devchain.handle(request)
        if self.rpc_url is None:
            raise ChainUnavailable("no JSON-RPC endpoint to relay to")
        try:
            async with asyncio.timeout(self.timeout), httpx.AsyncClient(timeout=self.timeout) as http:
                response = await http.post(self.rpc_url, json=request)
            return response.json()
        except (httpx.HTTPError, ValueError, TimeoutError) as exc:
            raise ChainUnavailable(f"the chain's node does not answer: {type(exc).__name__}") from exc

    def _decode(self, entry: Any) -> DepositEvent | ClaimedEvent | None:
        if entry["address"].lower() != self.vault_address or not entry["topics"]:
            return None
        topic = HexBytes(entry["topics"][0]).to_0x_hex()
        tx_hash = HexBytes(entry["transactionHash"]).to_0x_hex()
        if topic == self._topic("Deposited"):
            args = self.vault.events.Deposited().process_log(entry)["args"]
            token = args["token"].lower()
            return DepositEvent(
                tx_hash=tx_hash, log_index=int(entry["logIndex"]), block_number=int(entry["blockNumber"]),
                sender=args["sender"].lower(), token=token, token_symbol=self.deployment.symbol(token),
                amount=int(args["amount"]), account_ref=HexBytes(args["accountRef"]).to_0x_hex(),
            )
        if topic == self._topic("Claimed"):
            args = self.vault.events.Claimed().process_log(entry)["args"]
            return ClaimedEvent(
                tx_hash=tx_hash, log_index=int(entry["logIndex"]), block_number=int(entry["blockNumber"]),
                claim_ref=HexBytes(args["claimRef"]).to_0x_hex(), recipient=args["recipient"].lower(),
                token=args["token"].lower(), amount=int(args["amount"]), signer=args["signer"].lower(),
                nonce=int(args["nonce"]),
            )
        return None

    def _topic(self, event: str) -> str:
        return getattr(self.vault.events, event).topic

    def _token(self, address: str):
        return self.w3.eth.contract(address=AsyncWeb3.to_checksum_address(address), abi=self._token_abi)

    @staticmethod
    def _wallet_tx(sender: str, to: str, data: str, chain_id: int) -> dict[str, Any]:
        """An ``eth_sendTransaction`` parameter object (EIP-1193): addresses checksummed, quantities in hex."""
        return {
            "from": AsyncWeb3.to_checksum_address(sender),
            "to": AsyncWeb3.to_checksum_address(to),
            "data": data,
            "value": "0x0",
            "chainId": hex(chain_id),
        }

    @staticmethod
    async def _guard(call: Awaitable[T]) -> T:
        try:
            return await call
        except (aiohttp.ClientError, OSError, TimeoutError) as exc:
            raise ChainUnavailable(f"the chain's node does not answer: {type(exc).__name__}") from exc


def _claim_args(claim: Claim) -> list[Any]:
    """The vault's arguments for one claim: ``claim``'s parameters, or one ``SignedClaim`` of ``claimBatch``."""
    return [AsyncWeb3.to_checksum_address(claim.recipient), AsyncWeb3.to_checksum_address(claim.token),
            int(claim.amount), HexBytes(claim.claim_ref), int(claim.nonce), int(claim.deadline),
            HexBytes(claim.signature)]
