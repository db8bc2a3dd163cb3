"""Whether this process can do its work, for ``/healthz``, ``/readyz``, the start-up check and the metrics.

adnet is degraded, with a named reason, when:

- ``database_unreachable``: the database does not answer a round trip within ``PROBE_TIMEOUT_SECONDS``
  (``adnet.db.outage``);
- ``chain_unreachable``: the chain's node does not answer;
- ``wrong_chain``: the node answers with another chain id than the one the database is bound to;
- ``signer_unauthorized``: the vault's ``isSigner`` is false for adnet's signer, so every claim adnet signs would
  revert ``UnauthorizedSigner``;
- ``vault_short``: for some token adnet owes more (``adnet audit``'s figure) than the vault holds, so the last
  claims redeemed would revert;
- ``redis_unreachable``: the Redis of ``ADNET_REDIS_URL`` did not answer this process's last call
  (``adnet.core.redis_link``). The process serves and records without it, so this reason alone leaves
  ``/healthz`` at 200 (``DEGRADED_ONLY``): it must not take a host out of a load balancer's rotation.
- ``draining``: the process got SIGTERM and serves out its drain before it stops (``adnet.core.drain``); the
  answer is 503 so that a balancer takes the host out of rotation first.

Readiness (``readiness``, ``GET /readyz``) is the narrower question a load balancer asks: can this host serve and
record what it serves now? Its reasons (``READINESS``) are only those that say it cannot: the database does not
answer and the tracking spool cannot take events either (``database_unreachable``), the spool's disk refuses a
synced write (``disk_unwritable``), the spool is full (``spool_full``), or the last tracking batch could be kept
nowhere (``tracking_failing``), see ``adnet.delivery.tracking.Tracker.unready``; or it is draining after SIGTERM
(``draining``). The chain, Redis and the books are never among them: an outage of one of those is shared by every
host, and taking every host out of rotation would turn a degraded service into none. ``/healthz`` names them all.

A load balancer polls health often, so only the database is asked per request; the chain is checked at start and
then by a job every ``HEALTH_SECONDS`` (``check_chain``), which also sets the chain's and the books' gauges. A check
has ``CHECK_TIMEOUT_SECONDS`` (and each chain call its own budget, ``ADNET_CHAIN_TIMEOUT_SECONDS``), so a hung node is
``chain_unreachable`` by the next check; and a last check older than two intervals counts as ``chain_unreachable``
too, whatever it found, so a check that stopped running never leaves an old "ok" standing.
Production refuses to start with a signer the vault does not accept; development starts and logs it as an error.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from adnet.chain.client import ChainClient, ChainUnavailable
from adnet.core import metrics
from adnet.core.amounts import Token, to_number
from adnet.core.clock import Clock
from adnet.core.drain import Drain
from adnet.core.redis_link import RedisLink
from adnet.core.wallets import checksummed
from adnet.db import config as db_config
from adnet.db.outage import DatabaseLink
from adnet.delivery.tracking import Tracker
from adnet.money import audit, ledger

log = logging.getLogger(__name__)

HEALTH_SECONDS = 15.0
CHECK_TIMEOUT_SECONDS = HEALTH_SECONDS / 2
# Reasons that say the process works with less, not that it cannot work.
DEGRADED_ONLY = frozenset({"redis_unreachable"})
# Reasons that take a host out of a load balancer's rotation (``readiness``), in the order they are given.
READINESS = ("database_unreachable", "disk_unwritable", "spool_full", "tracking_failing", "draining")


class SignerNotAuthorized(Exception):
    """The vault does not accept adnet's claim signer (production does not start)."""


@dataclass(frozen=True)
class ChainCheck:
    """The last check of the chain: what was wrong, what the node said, and when."""

    reasons: tuple[str, ...]
    node: dict[str, Any]
    checked_at: datetime


@dataclass(frozen=True)
class HealthReport:
    """What ``/healthz`` answers: ``reasons`` is empty when adnet is healthy."""

    reasons: list[str]
    chain: ChainCheck

    @property
    def ok(self) -> bool:
        """Whether this process can do its work: no reason, or only reasons in ``DEGRADED_ONLY``."""
        return set(self.reasons) <= DEGRADED_ONLY


@dataclass
class Health:
    """This process's view of its health: the database asked on demand, the chain's last check kept.

    ``interval`` is how often the health job checks the chain (None where it runs only on demand, in tests): a
    last check older than two intervals is reported as ``chain_unreachable``."""

    chain: ChainClient
    clock: Clock
    database: DatabaseLink = field(default_factory=lambda: DatabaseLink(db_config.ping))
    redis: RedisLink | None = None
    interval: float | None = None
    check_timeout: float = CHECK_TIMEOUT_SECONDS
    tracker: Tracker | None = None
    drain: Drain = field(default_factory=Drain)
    last: ChainCheck | None = field(default=None, init=False)

    async def check_chain(self) -> ChainCheck:
        """Ask the node, the vault and the books (within ``check_timeout``), keep the result for ``report`` and
        set the gauges."""
        try:
            async with asyncio.timeout(self.check_timeout):
                node, reasons = await self._ask_chain()
        except TimeoutError:
            node, reasons = {"status": "unavailable: TimeoutError"}, ["chain_unreachable"]
        check = ChainCheck(reasons=tuple(reasons), node=node, checked_at=self.clock.now())
        if self.last is None or self.last.reasons != check.reasons:
            log.log(logging.WARNING if reasons else logging.INFO, "chain health reasons=%s vault=%s signer=%s",
                    ",".join(reasons) or "none", checksummed(self.chain.vault_address), self.chain.signer.address)
        self.last = check
        return check

    async def readiness(self) -> list[str]:
        """Why this host should take no traffic now (``READINESS``; empty: it can serve and record), the database
        asked now."""
        return await self._unready(database_reachable=await self.database.ping())

    async def report(self) -> HealthReport:
        """The chain's last check (start-up made one), unless it is overdue, the database asked now, Redis as last
        seen, and every reason of readiness."""
        database_reachable = await self.database.ping()
        reasons = [] if database_reachable else ["database_unreachable"]
        reasons += [reason for reason in await self._unready(database_reachable=database_reachable)
                    if reason not in reasons]
        chain = self.last or await self.check_chain()
        if self.interval is not None and self.clock.now() - chain.checked_at > timedelta(seconds=2 * self.interval):
            chain = ChainCheck(reasons=("chain_unreachable",), node={"status": "unavailable: check overdue"},
                               checked_at=chain.checked_at)
        redis = ["redis_unreachable"] if self.redis is not None and not self.redis.reachable else []
        return HealthReport(reasons=reasons + list(chain.reasons) + redis, chain=chain)

    async def _unready(self, *, database_reachable: bool) -> list[str]:
        draining = ["draining"] if self.drain.draining else []
        if self.tracker is None:  # a process that records nothing (a command): the database alone
            return ([] if database_reachable else ["database_unreachable"]) + draining
        return await self.tracker.unready(database_reachable=database_reachable) + draining

    async def _ask_chain(self) -> tuple[dict[str, Any], list[str]]:
        node = await self.chain.health()
        if node["status"] == "wrong_chain":
            return node, ["wrong_chain"]
        if node["status"] != "ok":
            return node, ["chain_unreachable"]
        try:
            return node, await self._check_vault()
        except ChainUnavailable:
            return node, ["chain_unreachable"]

    def require_signer(self, *, production: bool) -> None:
        """Refuse to start in production when the last check found the vault does not accept adnet's signer;
        elsewhere, say so as an error."""
        if self.last is None or "signer_unauthorized" not in self.last.reasons:
            return
        message = (f"the vault {checksummed(self.chain.vault_address)} does not accept adnet's claim signer "
                   f"{self.chain.signer.address} (isSigner is false), so every claim would revert: authorize it "
                   "with the vault owner's setSigner, or set ADNET_SIGNER_KEY to an authorized signer's key")
        if production:
            raise SignerNotAuthorized(message)
        log.error("UNAUTHORIZED SIGNER: %s", message)

    async def _check_vault(self) -> list[str]:
        signer_ok = await self.chain.signer_authorized()
        metrics.SIGNER_AUTHORIZED.labels(signer=self.chain.signer.address).set(int(signer_ok))
        covers = await audit.vault_cover(self.chain, await audit.owed())
        for cover in covers:
            metrics.OWED.labels(token=cover.token).set(to_number(cover.owed))
            metrics.VAULT_HOLDINGS.labels(token=cover.token).set(to_number(cover.held))
            metrics.VAULT_COVER.labels(token=cover.token).set(to_number(cover.held - cover.owed))
        claims = await ledger.balances_of(ledger.outstanding_claims(token) for token in Token)
        for key, amount in claims.items():
            metrics.CLAIMS_OUTSTANDING.labels(token=key.token).set(to_number(amount))
        return [reason for reason, wrong in (("signer_unauthorized", not signer_ok),
                                             ("vault_short", any(cover.short for cover in covers))) if wrong]

