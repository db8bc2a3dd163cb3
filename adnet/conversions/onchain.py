"""The reader of on-chain goals: turns the events of reviewed campaigns' on-chain goals, read from confirmed blocks,
into conversions of the clicks their wallets were proven for.

Each pass reads the blocks after its cursor (``ChainCursor`` ``conversion-goals``, kept across restarts) up to the
confirmed head (``head - confirmations``), in ranges of ``MAX_BLOCK_RANGE``: one ``eth_getLogs`` per range for the
contracts and topic0s of every on-chain goal of an approved or paused campaign, or of one that ended less than the
goal's window ago (``still_read``: a click made before the end may still convert), each log read as each matching
goal says (``adnet.campaigns.goal_events.read_log``: where its wallet and amount are, the minimum amount). A log
attributes only when its wallet was proven for a click of the goal's campaign (``adnet.conversions.binding``), or,
when the goal has a view window, for an impression of it (``adnet.conversions.views``: view-through; clicks win
over views): a wallet a page merely named never attributes (KNOWN-HOLES 31). A log of a wallet proven for neither
is recorded without its wallet, with the reason ``wallet_unbound`` and never paid, so the advertiser counts the
events adnet saw but could not attribute (and never learns whose they were). Of the wallet's bindings for the
campaign (clicks, else views), the last at or before the event's block time is the one it attributes to (the last
click wins; with none before, the first after, which the rules refuse as ``before_click``). The conversion is then
recorded through the same path as a reported one (``adnet.conversions.recording.record_onchain``): the same rules
and reasons (``outside_window``, ``click_filtered``, a site where the campaign may not pay, the goal's wallet cap
and client network limit), the same ledger booking within the budget and the daily cap, the webhook
``conversion.recorded``. An ended campaign's unspent budget went back to its advertiser, so its late conversions are
attributed but, with nothing left, not paid (``budget_exhausted``).

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
from datetime import UTC, datetime, timedelta

from tortoise.expressions import Q

from adnet.campaigns.campaigns import REVIEWED
from adnet.campaigns.goal_events import GoalEvent, read_log
from adnet.campaigns.models import Campaign, CampaignStatus, ConversionGoal, GoalKind
from adnet.chain.client import ChainClient, ChainLog
from adnet.chain.models import ChainCursor
from adnet.chain.watcher import MAX_BLOCK_RANGE, advance_cursor
from adnet.conversions.clicks import MAX_WINDOW, ClickClaims
from adnet.conversions.models import ClickBinding, ViewBinding
from adnet.conversions.recording import Terms, record_onchain
from adnet.conversions.views import last_touch, view_claims
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


def ended_at(campaign: Campaign) -> datetime:
    """When an ended campaign ended: its end date, or when it was stored as ended when that came first (a campaign
    ended by its budget, or ended early). An ended campaign changes no more, so its ``updated_at`` is its end."""
    return campaign.updated_at if campaign.ends_at is None else min(campaign.ends_at, campaign.updated_at)


def still_read(goal: ConversionGoal, now: datetime) -> bool:
    """Whether the reader reads ``goal`` (its campaign loaded): while the campaign is approved or paused, and after
    it ended for as long as a click made before the end may still convert (the goal's window)."""
    campaign = goal.campaign
    if campaign.status in REVIEWED:
        return True
    return (campaign.status == CampaignStatus.ENDED
            and now <= ended_at(campaign) + timedelta(days=goal.click_window_days))


def last_click(bindings: Sequence[ClickBinding], occurred_at: datetime) -> ClickBinding:
    """Of a wallet's bindings (at least one), the one a conversion at ``occurred_at`` attributes to: its last click
    at or before it, else its first click after it (which the rules refuse as ``before_click``)."""
    return last_touch(bindings, occurred_at, lambda binding: binding.clicked_at)


@dataclass(frozen=True)
class Proven:
    """Which wallets were proven for clicks, and for impressions, of which campaigns: (campaign id, wallet)."""

    clicks: frozenset[tuple[str, str]]
    views: frozenset[tuple[str, str]]


async def _proven(goals: Sequence[ConversionGoal]) -> Proven:
    """The wallets proven for the goals' campaigns, read once per range: most of a busy contract's logs are other
    wallets', and cost no query each. Views only for campaigns of goals with a view window."""
    clicks = await ClickBinding.filter(campaign_id__in=sorted({goal.campaign_id for goal in goals})).distinct(
    ).values_list("campaign_id", "wallet")
    viewing = sorted({goal.campaign_id for goal in goals if goal.view_window_hours > 0})
    views = await ViewBinding.filter(campaign_id__in=viewing).distinct().values_list(
        "campaign_id", "wallet") if viewing else []
    return Proven(frozenset((str(campaign), str(wallet)) for campaign, wallet in clicks),
                  frozenset((str(campaign), str(wallet)) for campaign, wallet in views))


class GoalReader:
    """Reads the on-chain goals' events; ``run_once`` is one pass (the jobs scheduler runs it periodically)."""

    def __init__(self, chain: ChainClient, *, clock: Clock, terms: Terms, block_range: int = MAX_BLOCK_RANGE) -> None:
        self.chain = chain
        self.clock = clock
        self.terms = terms
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
        goals = await self._goals()
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

    async def _goals(self) -> list[ConversionGoal]:
        """The on-chain goals read now (``still_read``)."""
        now = self.clock.now()
        goals = await ConversionGoal.filter(kind=GoalKind.ONCHAIN).filter(
            Q(campaign__status__in=REVIEWED)
            | Q(campaign__status=CampaignStatus.ENDED, campaign__updated_at__gte=now - MAX_WINDOW)
        ).select_related("campaign__advertiser")
        return [goal for goal in goals if still_read(goal, now)]

    async def _read(self, goals: Sequence[ConversionGoal], from_block: int, to_block: int) -> int:
        events = {goal.id: goal_event(goal) for goal in goals}
        entries = await self.chain.logs(sorted({event.contract for event in events.values()}),
                                        sorted({event.topic0 for event in events.values()}), from_block, to_block)
        if not entries:
            return 0
        proven = await _proven(goals)
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
                if converted is None:
                    continue
                recorded += await self._record(goal, entry, converted.wallet, proven)
        return recorded

    async def _record(self, goal: ConversionGoal, entry: ChainLog, wallet: str, proven: Proven) -> int:
        """Record the event of ``wallet`` for ``goal``: through its clicks, else its views (with a view window), else
        as unbound. Whether this call recorded it."""
        if (goal.campaign_id, wallet) in proven.clicks:
            return await self._convert(goal, entry, wallet)
        if goal.view_window_hours > 0 and (goal.campaign_id, wallet) in proven.views:
            return await self._view(goal, entry, wallet)
        return await self._unbound(goal, entry)

    async def _unbound(self, goal: ConversionGoal, entry: ChainLog) -> int:
        """Record an event of a wallet proven for no click of the goal's campaign: no click, no wallet (the
        advertiser counts such events, and never learns whose they were), the reason ``wallet_unbound``; once
        per log, as any event is. Whether this call recorded it."""
        occurred_at = datetime.fromtimestamp(await self.chain.block_timestamp(entry.block_number), UTC)
        recorded = await record_onchain(goal, None, order_id=order_id_of(entry), wallet=None,
                                        occurred_at=occurred_at, terms=self.terms, now=self.clock.now())
        return int(recorded.created)

    async def _view(self, goal: ConversionGoal, entry: ChainLog, wallet: str) -> int:
        """Record the view-through conversion of ``wallet``'s event for ``goal``: the wallet proven for no click of
        the goal's campaign, but for impressions of it; whether this call recorded one."""
        occurred_at = datetime.fromtimestamp(await self.chain.block_timestamp(entry.block_number), UTC)
        claims = await view_claims(goal, wallet, occurred_at)
        recorded = await record_onchain(goal, claims, order_id=order_id_of(entry), wallet=wallet,
                                        occurred_at=occurred_at, terms=self.terms, now=self.clock.now(), via="view")
        return int(recorded.created)

    async def _convert(self, goal: ConversionGoal, entry: ChainLog, wallet: str) -> int:
        """Record the conversion of ``wallet``'s event for ``goal``, the wallet proven for clicks of the goal's
        campaign; whether this call recorded one (not when the log was recorded before)."""
        bindings = await ClickBinding.filter(wallet=wallet, campaign_id=goal.campaign_id)
        occurred_at = datetime.fromtimestamp(await self.chain.block_timestamp(entry.block_number), UTC)
        binding = last_click(bindings, occurred_at)
        claims = ClickClaims(event_id=binding.click_event_id, campaign_id=binding.campaign_id,
                             ad_id=binding.creative_id, site_id=binding.site_id, issued_at=binding.clicked_at)
        recorded = await record_onchain(goal, claims, order_id=order_id_of(entry), wallet=wallet,
                                        occurred_at=occurred_at, terms=self.terms, now=self.clock.now())
        return int(recorded.created)
