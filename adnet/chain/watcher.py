"""The watcher: follows the vault's ``Deposited`` and ``Claimed`` events and hands them to the domain.

Each iteration reads the events of the blocks after its cursor up to the confirmed head (``head - confirmations``),
credits deposits (``adnet.deposits.record_deposit``), marks claims redeemed (``adnet.claims.mark_redeemed``), then
moves the cursor, and expires the claims whose deadline the confirmed chain time has passed
(``adnet.claims.expire_due``). The cursor (``ChainCursor``) survives restarts; applying an event twice changes
nothing, because the deposit's transaction hash and the claim's claimRef are unique keys. So several workers may
each run a watcher: they repeat each other's reads, never each other's bookings.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass
from datetime import UTC, datetime

from adnet import claims, deposits, ledger
from adnet.chain.client import ChainClient, ChainUnavailable, ClaimedEvent, DepositEvent
from adnet.clock import Clock
from adnet.models import ChainCursor

log = logging.getLogger(__name__)

CURSOR_NAME = "vault"
DEFAULT_POLL_SECONDS = 2.0
# Blocks per eth_getLogs request: public nodes commonly refuse larger ranges.
MAX_BLOCK_RANGE = 2000


@dataclass(frozen=True)
class WatchReport:
    """What one iteration did."""

    to_block: int | None
    deposits_credited: int
    claims_redeemed: int
    claims_expired: int


class Watcher:
    """Follows one vault. ``run_once`` is one deterministic iteration; ``start`` runs them every
    ``poll_seconds`` in a background task until ``stop``."""

    def __init__(self, chain: ChainClient, *, clock: Clock, poll_seconds: float = DEFAULT_POLL_SECONDS) -> None:
        self.chain = chain
        self.clock = clock
        self.poll_seconds = poll_seconds
        self._task: asyncio.Task | None = None

    async def run_once(self) -> WatchReport:
        """Process every confirmed block after the cursor, then expire claims due by the confirmed chain time."""
        head = await self.chain.block_number()
        confirmed = head - self.chain.confirmations
        if confirmed < self.chain.deployment.deployed_block:
            return WatchReport(None, 0, 0, 0)
        cursor = await ChainCursor.get_or_none(name=CURSOR_NAME)
        start = cursor.block_number + 1 if cursor else self.chain.deployment.deployed_block
        credited = redeemed = 0
        for from_block in range(start, confirmed + 1, MAX_BLOCK_RANGE):
            to_block = min(from_block + MAX_BLOCK_RANGE - 1, confirmed)
            for event in await self.chain.vault_events(from_block, to_block):
                if isinstance(event, DepositEvent):
                    credited += await self._deposit(event)
                elif isinstance(event, ClaimedEvent):
                    redeemed += await self._claimed(event)
            await _advance(to_block)
        chain_now = datetime.fromtimestamp(await self.chain.block_timestamp(confirmed), UTC)
        expired = await claims.expire_due(chain_now)
        return WatchReport(confirmed, credited, redeemed, expired)

    def start(self) -> None:
        """Run iterations in the background until ``stop``."""
        if self._task is None:
            self._task = asyncio.create_task(self._loop(), name="adnet-chain-watcher")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _loop(self) -> None:
        while True:
            try:
                report = await self.run_once()
                if report.deposits_credited or report.claims_redeemed or report.claims_expired:
                    log.info("watcher block=%s deposits=%d redeemed=%d expired=%d", report.to_block,
                             report.deposits_credited, report.claims_redeemed, report.claims_expired)
            except ChainUnavailable as exc:
                log.warning("watcher waiting for the chain reason=%s", exc)
            except Exception:
                log.exception("watcher iteration failed; retrying")
            await asyncio.sleep(self.poll_seconds)

    async def _deposit(self, event: DepositEvent) -> int:
        recorded = await deposits.record_deposit(event, confirmed=True, now=self.clock.now())
        return int(recorded.credited_now)

    async def _claimed(self, event: ClaimedEvent) -> int:
        try:
            return int(await claims.mark_redeemed(event.claim_ref, event.tx_hash, self.clock.now()))
        except ledger.InsufficientFunds:
            log.error("claim redeemed after expiry cannot be taken back; settle by hand claim_ref=%s tx=%s",
                      event.claim_ref, event.tx_hash)
            return 0


async def _advance(block_number: int) -> None:
    """Move the cursor forward to ``block_number``, never back (another watcher may be ahead)."""
    await ChainCursor.bulk_create([ChainCursor(name=CURSOR_NAME, block_number=block_number)], ignore_conflicts=True)
    await ChainCursor.filter(name=CURSOR_NAME, block_number__lt=block_number).update(block_number=block_number)
