"""The reader of on-chain goals: turns the events of approved campaigns' on-chain goals, read from confirmed blocks,
into conversions of the clicks their wallets were proven for.

Each pass reads the blocks after its cursor (``ChainCursor`` ``conversion-goals``, kept across restarts) up to the
confirmed head (``head - confirmations``), in ranges of ``MAX_BLOCK_RANGE``: one ``eth_getLogs`` per range for the
contracts and topic0s of every on-chain goal of an approved or paused campaign, each log read as each matching goal
says (``adnet.campaigns.goal_events.read_log``: where its wallet and amount are, the minimum amount). A log counts
only when its wallet was proven for a click of the goal's campaign (``adnet.conversions.binding``): a wallet a page
merely named never attributes (KNOWN-HOLES 31), and a log of a wallet never bound for the campaign is the
contract's ordinary traffic, not recorded. Of the wallet's bindings for the campaign, the last click at or before
the event's block time is the one it attributes to (the last click wins; with none before, the first after, which
the rules refuse as ``before_click``). The conversion is then recorded through the same path as a reported one
(``adnet.conversions.recording.record_onchain``): the same rules and reasons (``outside_window``,
``click_filtered``, a site where the campaign may not pay, the goal's wallet cap), the same ledger booking within the
budget and the daily cap, the webhook ``conversion.recorded``.

Exactly once: a log's order id is ``<tx hash>:<log index>``, and a campaign records one conversion per order id (a
unique key), so a range read again (by a pass that died halfway, or by a second process while leases change hands)
records nothing twice. The job runs in the one process of all workers and hosts that holds its lease
(``adnet.jobs.periodic``), on the scheduler's loop, never inside a request; a pass with a time budget stops after the
range it is in and the next goes on from the cursor.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from adnet.campaigns.campaigns import REVIEWED
from adnet.campaigns.goal_events import GoalEvent, read_log
from adnet.campaigns.models import ConversionGoal, GoalKind
from adnet.chain.client import ChainClient, ChainLog
from adnet.chain.models import ChainCursor
from adnet.chain.watcher import MAX_BLOCK_RANGE, advance_cursor
from adnet.conversions.clicks import ClickClaims
from adnet.conversions.models import ClickBinding
from adnet.conversions.recording import record_onchain
from adnet.core.clock import Clock

log = logging.getLogger(__name__)

CURSOR_NAME = "conversion-goals"


@dataclass(frozen=True)
class ReadReport:
    """What one pass did: the block it reached (None before the deployment is confirmed), and how many conversions
    it recorded (attributed or not)."""

    to_block: int | None
    recorded: int


def goal_event(goal: ConversionGoal) -> GoalEvent:
    """Where ``goal`` (an on-chain goal) reads its conversions."""
    return GoalEvent(contract=str(goal.contract), topic0=str(goal.topic0), wallet_field=str(goal.wallet_field),
                     amount_field=goal.amount_field,
                     min_amount=None if goal.min_amount is None else int(goal.min_amount))


def order_id_of(entry: ChainLog) -> str:
    """The order id of a log's conversion: its transaction and its index in the block, unique on the chain."""
    return f"{entry.tx_hash}:{entry.log_index}"


def last_click(bindings: Sequence[ClickBinding], occurred_at: datetime) -> ClickBinding:
    """Of a wallet's bindings (at least one), the one a conversion at ``occurred_at`` attributes to: its last click
    at or before it, else its first click after it (which the rules refuse as ``before_click``)."""
    before = [binding for binding in bindings if binding.clicked_at <= occurred_at]
    if before:
        return max(before, key=lambda binding: binding.clicked_at)
    return min(bindings, key=lambda binding: binding.clicked_at)


class GoalReader:
    """Reads the on-chain goals' events; ``run_once`` is one pass (the jobs scheduler runs it periodically)."""

    def __init__(self, chain: ChainClient, *, clock: Clock, share_bps: int, single_writer: bool,
                 block_range: int = MAX_BLOCK_RANGE) -> None:
        self.chain = chain
        self.clock = clock
        self.share_bps = share_bps
        self.single_writer = single_writer
        self.block_range = block_range

    async def run_once(self, budget: float | None = None) -> ReadReport:
        """Read the confirmed blocks after the cursor, all of them, or, given a ``budget`` in seconds, the ranges
        that begin within it."""
        began = time.monotonic()
        confirmed = await self.chain.block_number() - self.chain.confirmations
        if confirmed < self.chain.deployment.deployed_block:
            return ReadReport(None, 0)
        cursor = await ChainCursor.get_or_none(name=CURSOR_NAME)
        start = cursor.block_number + 1 if cursor else self.chain.deployment.deployed_block
        goals = await ConversionGoal.filter(kind=GoalKind.ONCHAIN, campaign__status__in=REVIEWED).select_related(
            "campaign__advertiser")
        reached, recorded = start - 1, 0
        for from_block in range(start, confirmed + 1, self.block_range):
            if budget is not None and reached >= start and time.monotonic() - began >= budget:
                break
            reached = min(from_block + self.block_range - 1, confirmed)
            if goals:
                recorded += await self._read(goals, from_block, reached)
            await advance_cursor(CURSOR_NAME, reached)
        if recorded:
            log.info("goal reader block=%d recorded=%d", reached, recorded)
        return ReadReport(reached, recorded)

    async def _read(self, goals: Sequence[ConversionGoal], from_block: int, to_block: int) -> int:
        events = {goal.id: goal_event(goal) for goal in goals}
        entries = await self.chain.logs(sorted({event.contract for event in events.values()}),
                                        sorted({event.topic0 for event in events.values()}), from_block, to_block)
        if not entries:
            return 0
        # Which wallets were proven for clicks of which campaigns, read once per range: most of a busy contract's
        # logs are other wallets', and cost no query each.
        bound = set(await ClickBinding.filter(campaign_id__in=sorted({goal.campaign_id for goal in goals}))
                    .distinct().values_list("campaign_id", "wallet"))
        recorded = 0
        for entry in entries:
            senders: dict[str, str] = {}
            for goal in goals:
                event = events[goal.id]
                if event.contract != entry.address:
                    continue
                if event.wallet_field == "tx.from" and entry.tx_hash not in senders:
                    senders[entry.tx_hash] = await self.chain.transaction_sender(entry.tx_hash)
                converted = read_log(event, entry.topics, entry.data, senders.get(entry.tx_hash))
                if converted is not None and (goal.campaign_id, converted.wallet) in bound:
                    recorded += await self._convert(goal, entry, converted.wallet)
        return recorded

    async def _convert(self, goal: ConversionGoal, entry: ChainLog, wallet: str) -> int:
        """Record the conversion of ``wallet``'s event for ``goal``, the wallet proven for clicks of the goal's
        campaign; whether this call recorded one (not when the log was recorded before)."""
        bindings = await ClickBinding.filter(wallet=wallet, campaign_id=goal.campaign_id)
        occurred_at = datetime.fromtimestamp(await self.chain.block_timestamp(entry.block_number), UTC)
        binding = last_click(bindings, occurred_at)
        claims = ClickClaims(event_id=binding.click_event_id, campaign_id=binding.campaign_id,
                             ad_id=binding.creative_id, site_id=binding.site_id, issued_at=binding.clicked_at)
        recorded = await record_onchain(goal, claims, order_id=order_id_of(entry), wallet=wallet,
                                        occurred_at=occurred_at, share_bps=self.share_bps,
                                        single_writer=self.single_writer, now=self.clock.now())
        return int(recorded.created)
