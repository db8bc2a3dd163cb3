"""The vault's protocol rate (G$ per SOV), as operators see and change it.

Only the vault's owner may call ``setRate``. In production the owner is a multisig, so adnet builds the unsigned
transaction for the owner to send (``rate_transaction``); on the development chain, whose owner is development
account 0, adnet can also send it itself (``send_rate``). Publishers' exchanges read the rate from the vault,
cached for ``adnet.chain.client.RATE_CACHE_SECONDS``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from adnet.chain.client import ChainClient, ChainUnavailable
from adnet.config import Settings
from adnet.core.errors import Conflict, chain_unavailable
from adnet.core.wallets import dev_accounts

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class VaultRate:
    """The rate read from the vault now, and the vault's owner, who alone may change it."""

    rate: int
    vault_owner: str


@dataclass(frozen=True)
class RateChange:
    """A new protocol rate: the unsigned transaction, and its hash when adnet sent it (development only)."""

    rate: int
    vault_owner: str
    transaction: dict[str, Any]
    tx_hash: str | None = None


async def vault_rate(chain: ChainClient) -> VaultRate:
    """The vault's rate, read now (not the client's cache), and its owner."""
    try:
        return VaultRate(await chain.read_rate(), await chain.vault_owner())
    except ChainUnavailable:
        raise chain_unavailable() from None


async def rate_transaction(operator: str, chain: ChainClient, rate: int) -> RateChange:
    """The unsigned ``setRate(rate)`` transaction, from the vault's owner (a multisig in production), for the
    owner to send."""
    owner = (await vault_rate(chain)).vault_owner
    log.info("rate transaction built rate=%d owner=%s operator=%s", rate, owner, operator)
    return RateChange(rate=rate, vault_owner=owner, transaction=chain.build_set_rate_tx(owner, rate))


async def send_rate(operator: str, chain: ChainClient, settings: Settings, rate: int) -> RateChange:
    """Set the rate on the development chain with development account 0's key (its vault owner). Refused
    (Conflict ``send_unavailable``) anywhere else: there the owner sends ``rate_transaction``'s transaction."""
    if settings.production or not settings.embedded_chain:
        raise Conflict("send_unavailable", "adnet sends setRate only on the development chain; send the returned "
                                           "transaction from the vault's owner.")
    change = await rate_transaction(operator, chain, rate)
    owner_account = dev_accounts()[0]
    if owner_account.address.lower() != change.vault_owner:
        raise Conflict("send_unavailable", "The vault's owner is not the development deployer; send the returned "
                                           "transaction from the owner.")
    tx_hash = await chain.send(owner_account, change.transaction)
    log.info("rate set rate=%d tx=%s operator=%s", rate, tx_hash, operator)
    return RateChange(rate=rate, vault_owner=change.vault_owner, transaction=change.transaction, tx_hash=tx_hash)
