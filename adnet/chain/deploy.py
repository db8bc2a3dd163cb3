"""Deploying the vault (and, on development chains, the two test tokens) and funding development accounts.

A ``Deployment`` names everything adnet binds its database to: the chain (id and genesis hash), the vault, the two
tokens, and the block from which the watcher reads the vault's events.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from eth_account.signers.local import LocalAccount
from web3 import AsyncWeb3
from web3.exceptions import Web3Exception

from adnet.chain.contracts import Artifact, token_artifact, vault_artifact
from adnet.chain.transact import send_transaction
from adnet.core.amounts import Token

log = logging.getLogger(__name__)

UNIT = 10**18
# Development defaults: 1 SOV = 2 G$ (not 1:1, so a swapped direction shows), and enough tokens to play with.
DEV_RATE = 2 * UNIT
DEV_VAULT_FUNDING = 1_000_000 * UNIT
DEV_ACCOUNT_FUNDING = 100_000 * UNIT


@dataclass(frozen=True)
class Deployment:
    """The chain and contracts adnet works with. Addresses are lower-case."""

    chain_id: int
    genesis_hash: str
    vault: str
    gs_token: str
    sov_token: str
    deployed_block: int

    def token(self, symbol: str) -> str:
        """The address of ``Token.GS`` or ``Token.SOV``."""
        if symbol == Token.GS:
            return self.gs_token
        if symbol == Token.SOV:
            return self.sov_token
        raise ValueError(f"unknown token {symbol!r}")

    def symbol(self, token: str) -> Token | None:
        """The token at address ``token``, or None for an address that is neither."""
        return {self.gs_token: Token.GS, self.sov_token: Token.SOV}.get(token.lower())


async def chain_identity(w3: AsyncWeb3) -> tuple[int, str]:
    """The chain id and genesis block hash: what tells one chain from another."""
    genesis = await w3.eth.get_block(0)
    return await w3.eth.chain_id, genesis["hash"].to_0x_hex()


async def deploy(
    w3: AsyncWeb3,
    deployer: LocalAccount,
    *,
    signer: str,
    rate: int,
    owner: str | None = None,
    gs_token: str | None = None,
    sov_token: str | None = None,
) -> Deployment:
    """Deploy the vault with ``signer`` as its claim signer; deploy a TestToken for G$ or SOV when no address is
    given. The deployer pays gas; ``owner`` (default: the deployer) may rotate signers, set the rate and pause."""
    if gs_token is None:
        gs_token, _ = await _deploy(w3, deployer, token_artifact(), "GoodDollar (test)", Token.GS, deployer.address)
    if sov_token is None:
        sov_token, _ = await _deploy(w3, deployer, token_artifact(), "Sovereign (test)", "SOV", deployer.address)
    checksum = AsyncWeb3.to_checksum_address
    vault, deployed_block = await _deploy(w3, deployer, vault_artifact(), checksum(gs_token), checksum(sov_token),
                                          checksum(signer), rate, checksum(owner or deployer.address))
    chain_id, genesis_hash = await chain_identity(w3)
    return Deployment(chain_id=chain_id, genesis_hash=genesis_hash, vault=vault.lower(), gs_token=gs_token.lower(),
                      sov_token=sov_token.lower(), deployed_block=deployed_block)


async def deploy_development(w3: AsyncWeb3, deployer: LocalAccount, signer: str,
                             funded_accounts: list[str]) -> Deployment:
    """The development deployment: both test tokens and the vault, then tokens minted to the vault (so claims
    can be paid before anyone deposits) and to each of ``funded_accounts``."""
    deployment = await deploy(w3, deployer, signer=signer, rate=DEV_RATE)
    for symbol in Token:
        await mint(w3, deployer, deployment.token(symbol), deployment.vault, DEV_VAULT_FUNDING)
        for account in funded_accounts:
            await mint(w3, deployer, deployment.token(symbol), account, DEV_ACCOUNT_FUNDING)
    log.info("deployed development contracts chain_id=%d vault=%s gs=%s sov=%s", deployment.chain_id,
             deployment.vault, deployment.gs_token, deployment.sov_token)
    return deployment


async def mint(w3: AsyncWeb3, owner: LocalAccount, token: str, to: str, amount: int) -> None:
    """Mint ``amount`` of a TestToken to ``to`` (``owner`` must own the token)."""
    contract = w3.eth.contract(address=AsyncWeb3.to_checksum_address(token), abi=token_artifact().abi)
    data = contract.encode_abi("mint", args=[AsyncWeb3.to_checksum_address(to), amount])
    await send_transaction(w3, owner, {"to": token, "data": data})


async def can_mint(w3: AsyncWeb3, account: str, token: str) -> bool:
    """Whether ``account`` may mint ``token``: a TestToken it owns. Asked by simulating a mint, so a real token (no
    ``mint``) or another's TestToken answers no."""
    contract = w3.eth.contract(address=AsyncWeb3.to_checksum_address(token), abi=token_artifact().abi)
    owner = AsyncWeb3.to_checksum_address(account)
    try:
        await contract.functions.mint(owner, 1).call({"from": owner})
    except (Web3Exception, ValueError):
        return False
    return True


async def send_eth(w3: AsyncWeb3, sender: LocalAccount, to: str, amount: int) -> None:
    """Send ``amount`` wei of the native coin (gas money) from ``sender``."""
    await send_transaction(w3, sender, {"to": to, "value": amount, "gas": 21000})


async def _deploy(w3: AsyncWeb3, deployer: LocalAccount, contract: Artifact, *args: object) -> tuple[str, int]:
    """Deploy ``contract``; return its address and the block it was created in."""
    factory = w3.eth.contract(abi=contract.abi, bytecode=contract.bytecode)
    receipt = await send_transaction(w3, deployer, {"data": factory.constructor(*args).data_in_transaction})
    address = receipt["contractAddress"]
    if address is None:
        raise RuntimeError(f"deploying {contract.name} created no contract")
    log.info("deployed %s at %s gas=%d", contract.name, address, receipt["gasUsed"])
    return address, receipt["blockNumber"]
