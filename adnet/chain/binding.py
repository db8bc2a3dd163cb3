"""The one chain a database belongs to.

Deposits, claims and nonces in the database only mean something on the chain and vault they came from. So the
first start records a ``ChainBinding`` (chain id, genesis hash, vault, tokens), and every later start compares:
another chain id, another genesis (a reset development chain, another network) or another vault refuses to start,
naming what differs; in development, ``adnet chain reset`` is the way out.
"""

from __future__ import annotations

import logging
from datetime import datetime

from tortoise.exceptions import IntegrityError
from tortoise.transactions import in_transaction

from adnet.chain.deploy import Deployment
from adnet.chain.models import ChainBinding

log = logging.getLogger(__name__)

BINDING_ID = 1


class ChainMismatch(Exception):
    """The chain adnet is pointed at is not the one its database is bound to."""


async def bound_deployment() -> Deployment | None:
    """The deployment the database is bound to, or None before the first start."""
    binding = await ChainBinding.get_or_none(id=BINDING_ID)
    return None if binding is None else _deployment(binding)


async def bind(deployment: Deployment, *, now: datetime, where: str, same_contracts: bool = True) -> Deployment:
    """Bind the database to ``deployment`` on first use, or check it is the bound one, and return the bound one.

    ``same_contracts`` also requires the same vault and tokens (a configured node); without it only the chain must
    match and the stored contracts win (development workers that raced to deploy adopt the first deployment)."""
    bound = await bound_deployment()
    if bound is None:
        try:
            async with in_transaction():
                await ChainBinding.create(
                    id=BINDING_ID, chain_id=deployment.chain_id, genesis_hash=deployment.genesis_hash,
                    vault=deployment.vault, gs_token=deployment.gs_token, sov_token=deployment.sov_token,
                    deployed_block=deployment.deployed_block, created_at=now,
                )
            log.info("database bound to chain_id=%d genesis=%s vault=%s", deployment.chain_id,
                     deployment.genesis_hash, deployment.vault)
            return deployment
        except IntegrityError:
            bound = await bound_deployment()
            if bound is None:
                raise
    check(bound, deployment, where=where, same_contracts=same_contracts)
    return bound


def check(bound: Deployment, actual: Deployment, *, where: str, same_contracts: bool = True) -> None:
    """Raise ChainMismatch, naming each difference, unless ``actual`` is the bound chain (and contracts)."""
    fields = [("chain id", "chain_id"), ("genesis hash", "genesis_hash")]
    if same_contracts:
        fields += [("vault", "vault"), ("G$ token", "gs_token"), ("SOV token", "sov_token")]
    differences = [f"{label} {getattr(bound, name)} (bound) vs {getattr(actual, name)} ({where})"
                   for label, name in fields if getattr(bound, name) != getattr(actual, name)]
    if differences:
        raise ChainMismatch(
            "adnet's database belongs to another chain than the one at " + where + ": " + "; ".join(differences)
            + ". Point adnet at the bound chain (ADNET_CHAIN_RPC_URL and the ADNET_*_ADDRESS variables), or, in "
            "development, run `adnet chain reset` to start over on a new chain."
        )


def _deployment(binding: ChainBinding) -> Deployment:
    return Deployment(chain_id=int(binding.chain_id), genesis_hash=binding.genesis_hash, vault=binding.vault,
                      gs_token=binding.gs_token, sov_token=binding.sov_token,
                      deployed_block=int(binding.deployed_block))
