"""The watcher: follows the vault's ``Deposited`` and ``Claimed`` events up to the confirmed head.

Each pass reads the events of the blocks after its cursor up to the confirmed head (``head - confirmations``),
hands each one, in chain order, to ``apply`` (the domain's: ``adnet.money.vault_events.apply``), then moves the
cursor. A pass that has used its time budget stops after the range it is in, and the next pass goes on from the
cursor: after a long stop, catching up on many blocks does not hold the event loop that answers requests in one
piece. The cursor (``ChainCursor``) survives restarts; applying an event twice changes nothing, because the
deposit's transaction hash and the claim's claimRef are unique keys, so a pass that another process repeats, or
that dies halfway, repeats reads, never bookings.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from adnet.chain.client import ChainClient, ClaimedEvent, DepositEvent
from adnet.chain.models import ChainCursor

log = logging.getLogger(__name__)

CURSOR_NAME = "vault"
# Blocks per eth_getLogs request: public nodes commonly refuse larger ranges.
MAX_BLOCK_RANGE = 2000

VaultEvent = DepositEvent | ClaimedEvent


@dataclass(frozen=True)
class WatchReport:
    """What one pass did: the block it reached (None before the deployment is confirmed; short of the confirmed
    head when its budget ran out), and how many events changed something."""

    to_block: int | None
    deposits_credited: int
    claims_redeemed: int


class Watcher:
    """Follows one vault; ``run_once`` is one pass (the jobs scheduler runs it periodically)."""

    def __init__(self, chain: ChainClient, apply: Callable[[VaultEvent], Awaitable[bool]], *,
                 block_range: int = MAX_BLOCK_RANGE) -> None:
        self.chain = chain
        self.apply = apply
        self.block_range = block_range

    async def run_once(self, budget: float | None = None) -> WatchReport:
        """Process the confirmed blocks after the cursor, all of them, or, given a ``budget`` in seconds, the ranges
        that begin within it; ``apply`` says whether an event changed anything."""
        began = time.monotonic()
        confirmed = await self.chain.block_number() - self.chain.confirmations
        if confirmed < self.chain.deployment.deployed_block:
            return WatchReport(None, 0, 0)
        cursor = await ChainCursor.get_or_none(name=CURSOR_NAME)
        start = cursor.block_number + 1 if cursor else self.chain.deployment.deployed_block
        reached, credited, redeemed = start - 1, 0, 0
        for from_block in range(start, confirmed + 1, self.block_range):
            if budget is not None and reached >= start and time.monotonic() - began >= budget:
                break
            reached = min(from_block + self.block_range - 1, confirmed)
            for event in await self.chain.vault_events(from_block, reached):
                if await self.apply(event):
                    credited += isinstance(event, DepositEvent)
                    redeemed += isinstance(event, ClaimedEvent)
            await advance_cursor(CURSOR_NAME, reached)
        if credited or redeemed:
            log.info("watcher block=%d deposits=%d redeemed=%d", reached, credited, redeemed)
        return WatchReport(reached, credited, redeemed)


async def advance_cursor(name: str, block_number: int) -> None:
    """Move the cursor ``name`` forward to ``block_number``, never back (another reader may be ahead)."""
    await ChainCursor.bulk_create([ChainCursor(name=name, block_number=block_number)], ignore_conflicts=True)
    await ChainCursor.filter(name=name, block_number__lt=block_number).update(block_number=block_number)
