"""The audience job: which proven wallets match which live audience rules, read from the chain off the request path.

Each pass (``AudienceJob.run_once``, every ``EVALUATE_SECONDS`` in the one process of all workers and hosts that
holds the ``wallet-audiences`` lease):

1. reads the rules of every campaign not ended (``adnet.campaigns.audiences``), by key;
2. takes up to ``WALLETS_PER_PASS`` due wallets: proven within ``AUDIENCE_WINDOW``, not opted out, and never
   evaluated (a new proof: first), or evaluated against other rules than today's, or longer ago than
   ``REFRESH_AFTER``;
3. asks the chain, in batches: token balances through Multicall3's ``aggregate3`` where the chain has it (else
   batched ``eth_call`` requests), transaction counts as one batch of ``eth_getTransactionCount``, and for each
   event rule one ``eth_getLogs`` over the last ``days`` days for all the wallets at once (the wallet topic holds
   the list);
4. writes each wallet's answer with ``MEMBERSHIP_TTL`` (a conditional update that an opt-out in between wins) and
   announces the wallets, so every serving process reloads them (``adnet.audiences.membership``);
5. deletes the rows of wallets not proven again within ``AUDIENCE_WINDOW`` (an opt-out is kept: it is the viewer's
   choice).

Everything it needs is in the database, so a restarted or new leader goes on where the last one stopped; a pass that
fails (the chain does not answer) changes nothing and the wallets stay due. Two processes running a pass at once
(while the lease changes hands) write the same answers.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, cast

from eth_abi import decode, encode
from eth_utils import function_signature_to_4byte_selector
from tortoise.expressions import Q

from adnet.audiences.membership import changed_id
from adnet.audiences.models import AudienceWallet
from adnet.campaigns.audiences import (
    ChainRule,
    HoldsCollectible,
    HoldsItem,
    HoldsToken,
    SentTransactions,
    UsedContract,
    chain_rules,
)
from adnet.campaigns.models import Campaign, CampaignStatus
from adnet.campaigns.targeting import Targeting
from adnet.chain.client import ChainClient
from adnet.chain.reads import (
    MULTICALL3,
    ReadCall,
    call_many,
    first_block_since,
    has_code,
    logs_naming,
    transaction_counts,
)
from adnet.core import changes
from adnet.core.clock import Clock

log = logging.getLogger(__name__)

EVALUATE_SECONDS = 2.0
AUDIENCE_LEASE = "wallet-audiences"
MEMBERSHIP_TTL = timedelta(hours=24)
REFRESH_AFTER = timedelta(hours=12)
AUDIENCE_WINDOW = timedelta(days=30)
WALLETS_PER_PASS = 200
_BALANCE_OF = function_signature_to_4byte_selector("balanceOf(address)")
_BALANCE_OF_ID = function_signature_to_4byte_selector("balanceOf(address,uint256)")


async def live_rules() -> dict[str, ChainRule]:
    """The chain rules of every campaign not ended, by key: those served, and those of drafts and campaigns in
    review, so that reach before buying (``adnet.audiences.reach``) can count them and an approval serves at once
    (rules that no longer validate are left out, as the serving index leaves their campaign out)."""
    rules: dict[str, ChainRule] = {}
    stored_rules = await Campaign.exclude(status=CampaignStatus.ENDED).values_list("targeting", flat=True)
    for stored in cast(list[dict[str, Any] | None], stored_rules):
        if not stored or not (stored.get("audience_groups") or stored.get("audience_exclude")):
            continue
        try:
            targeting = Targeting.model_validate(stored)
        except ValueError:
            continue
        rules.update(chain_rules(targeting.audience_groups, targeting.audience_exclude))
    return rules


def rules_digest(keys: Sequence[str]) -> str:
    """What tells one set of rules from another, stored with each evaluation."""
    return hashlib.sha256(",".join(sorted(keys)).encode()).hexdigest()


@dataclass(frozen=True)
class PassReport:
    """What one pass did: wallets evaluated and wallets forgotten (not proven within the window)."""

    evaluated: int
    forgotten: int


class AudienceJob:
    """Evaluates due wallets against the live rules; ``run_once`` is one pass (the jobs scheduler runs it)."""

    def __init__(self, chain: ChainClient, *, clock: Clock, batch: int = WALLETS_PER_PASS) -> None:
        self.chain = chain
        self.clock = clock
        self.batch = batch
        self._multicall: bool | None = None

    async def run_once(self) -> PassReport:
        now = self.clock.now()
        forgotten = await self._forget_lapsed(now)
        rules = await live_rules()
        digest = rules_digest(list(rules))
        due = await self._due(now, digest)
        if not due:
            return PassReport(0, forgotten)
        matched = await self.evaluate(rules, due, now)
        keys = sorted(rules)
        written = []
        for wallet in due:
            if await AudienceWallet.filter(wallet=wallet, opted_out=False).update(
                    evaluated=keys, matched=sorted(matched[wallet]), rules_digest=digest, evaluated_at=now,
                    expires_at=now + MEMBERSHIP_TTL):
                written.append(changed_id(wallet))
        if written:
            changes.announce(*written)
        log.info("audiences evaluated wallets=%d rules=%d", len(written), len(rules))
        return PassReport(len(written), forgotten)

    async def evaluate(self, rules: dict[str, ChainRule], wallets: Sequence[str], now: datetime
                       ) -> dict[str, set[str]]:
        """Which of ``rules`` (by key) each wallet matches, asked of the chain in batches."""
        matched: dict[str, set[str]] = {wallet: set() for wallet in wallets}
        held = [(key, rule) for key, rule in rules.items()
                if isinstance(rule, HoldsToken | HoldsCollectible | HoldsItem)]
        if held:
            asked = [(wallet, key, rule) for wallet in wallets for key, rule in held]
            answers = await call_many(self.chain, [_balance_call(rule, wallet) for wallet, _, rule in asked],
                                      multicall=await self._has_multicall())
            for (wallet, key, rule), answer in zip(asked, answers, strict=True):
                if answer is not None and len(answer) >= 32 and decode(["uint256"], answer[:32])[0] >= _least(rule):
                    matched[wallet].add(key)
        counted = [(key, rule) for key, rule in rules.items() if isinstance(rule, SentTransactions)]
        if counted:
            counts = await transaction_counts(self.chain, wallets)
            for wallet in wallets:
                matched[wallet].update(key for key, rule in counted if counts.get(wallet, -1) >= rule.min)
        used = [(key, rule) for key, rule in rules.items() if isinstance(rule, UsedContract)]
        for key, found in (await self._used(used, wallets, now)).items():
            for wallet in found & matched.keys():
                matched[wallet].add(key)
        return matched

    async def _used(self, used: list[tuple[str, UsedContract]], wallets: Sequence[str], now: datetime
                    ) -> dict[str, set[str]]:
        """Which of ``wallets`` each event rule's contract named within its days: one ``eth_getLogs`` a rule."""
        if not used:
            return {}
        head = await self.chain.block_number()
        starts: dict[int, int] = {}
        found: dict[str, set[str]] = {}
        for key, rule in used:
            if rule.days not in starts:
                since = int((now - timedelta(days=rule.days)).timestamp())
                starts[rule.days] = await first_block_since(self.chain, since, head)
            position = int(rule.wallet_field.removeprefix("topic"))
            entries = await logs_naming(self.chain, rule.contract, rule.topic0, position, wallets, starts[rule.days],
                                        head) if starts[rule.days] <= head else []
            found[key] = {"0x" + entry.topics[position][-20:].hex() for entry in entries}
        return found

    async def _has_multicall(self) -> bool:
        if self._multicall is None:
            self._multicall = await has_code(self.chain, MULTICALL3)
            log.info("audiences multicall3=%s", self._multicall)
        return self._multicall

    async def _due(self, now: datetime, digest: str) -> list[str]:
        """Up to ``batch`` wallets to evaluate now: never evaluated first, then those of other rules or stale."""
        recent = AudienceWallet.filter(opted_out=False, proven_at__gt=now - AUDIENCE_WINDOW)
        new = await recent.filter(evaluated_at__isnull=True).order_by("proven_at").limit(self.batch) \
            .values_list("wallet", flat=True)
        left = self.batch - len(new)
        stale = await recent.filter(Q(rules_digest__not=digest) | Q(evaluated_at__lte=now - REFRESH_AFTER),
                                    evaluated_at__isnull=False).order_by("evaluated_at").limit(left) \
            .values_list("wallet", flat=True) if left > 0 else []
        return [str(wallet) for wallet in [*new, *stale]]

    async def _forget_lapsed(self, now: datetime) -> int:
        lapsed = [str(wallet) for wallet in await AudienceWallet.filter(
            opted_out=False, proven_at__lte=now - AUDIENCE_WINDOW).limit(self.batch).values_list("wallet", flat=True)]
        if not lapsed:
            return 0
        await AudienceWallet.filter(wallet__in=lapsed, opted_out=False, proven_at__lte=now - AUDIENCE_WINDOW).delete()
        changes.announce(*(changed_id(wallet) for wallet in lapsed))
        return len(lapsed)


def _balance_call(rule: HoldsToken | HoldsCollectible | HoldsItem, wallet: str) -> ReadCall:
    if isinstance(rule, HoldsItem):
        return ReadCall(rule.contract, _BALANCE_OF_ID + encode(["address", "uint256"], [wallet, rule.token_id]))
    return ReadCall(rule.contract, _BALANCE_OF + encode(["address"], [wallet]))


def _least(rule: HoldsToken | HoldsCollectible | HoldsItem) -> int:
    return 1 if isinstance(rule, HoldsCollectible) else rule.min_amount
