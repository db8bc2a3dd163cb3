"""A viewer's rewards: what one wallet earned by completing tasks and answering units, with the claims that pay
its G$, so that a viewer who declined, reloaded or lost the answer can still redeem them later.

Only the wallet itself asks (its rewards session, see ``adnet.accounts.signin``); nothing here takes a wallet from
a request. A reward's claim is ``redeemable`` while it is issued and its deadline is ahead; the vault decides
in the end (by the chain's time), and the watcher marks it redeemed or the expired claims job expired.

Points are a score adnet keeps per wallet: each completion or answer earns the points its task sets, whether or
not it also pays G$. ``POINTS_EXPLAINED`` is what the rewards page and the embed say about them.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from tortoise.functions import Sum

from adnet.interactions.models import Interaction
from adnet.money.models import Claim, ClaimPurpose, ClaimStatus
from adnet.tasks.models import Completion, Task

# How many rewards one listing answers (newest first), and how many claims one "redeem all" transaction pays.
LISTED_REWARDS = 200
MAX_BATCH = 20
POINTS_EXPLAINED = (
    "Points count what this wallet did for adnet's sponsors: each completed task or answered poll, survey or "
    "feedback earns the points its sponsor set. They are a score kept by adnet, not a token: nothing on-chain holds "
    "them and they cannot be sent, sold or redeemed. G$ rewards are the claims, which the wallet redeems on the "
    "vault.")


@dataclass(frozen=True)
class Reward:
    """One completion or answer of the wallet, what it earned, and the claim that pays its G$ (None when it earned
    points only)."""

    source: Literal["task", "unit"]
    record_id: str
    task_id: str
    title: str
    kind: str
    earned_at: datetime
    points: int
    gs: int
    claim: Claim | None
    redeemable: bool


@dataclass(frozen=True)
class WalletRewards:
    """A wallet's rewards, newest first, its points and G$ in total, and the claims it can redeem now (the first
    ``MAX_BATCH`` of them, oldest deadline first, are what one "redeem all" transaction pays)."""

    wallet: str
    points: int
    gs_earned: int
    rewards: list[Reward]
    redeemable: list[Claim]


async def wallet_rewards(wallet: str, now: datetime) -> WalletRewards:
    """The rewards of ``wallet`` (lower case), with its claims as they stand at ``now``."""
    completions = await Completion.filter(wallet=wallet).order_by("-created_at", "-id").limit(
        LISTED_REWARDS).select_related("task", "claim")
    answers = await Interaction.filter(wallet=wallet).order_by("-created_at", "-id").limit(
        LISTED_REWARDS).select_related("unit", "claim")
    deadline_ahead = int(now.timestamp())
    rewards = [
        *(_reward("task", completion.id, completion.task, completion, deadline_ahead) for completion in completions),
        *(_reward("unit", answer.id, answer.unit, answer, deadline_ahead) for answer in answers),
    ]
    rewards.sort(key=lambda reward: (reward.earned_at, reward.record_id), reverse=True)
    redeemable = await Claim.filter(
        recipient=wallet, status=ClaimStatus.ISSUED, deadline__gte=deadline_ahead,
        purpose__in=(ClaimPurpose.COMPLETION, ClaimPurpose.INTERACTION)).order_by("deadline", "nonce")
    points, gs_earned = 0, 0
    for model in (Completion, Interaction):
        totals = await model.filter(wallet=wallet).annotate(points_sum=Sum("points"), gs_sum=Sum("gs_amount")
                                                             ).first().values("points_sum", "gs_sum")
        points += int((totals or {}).get("points_sum") or 0)
        gs_earned += int((totals or {}).get("gs_sum") or 0)
    return WalletRewards(wallet=wallet, points=points, gs_earned=gs_earned, rewards=rewards[:LISTED_REWARDS],
                         redeemable=redeemable)


def _reward(source: Literal["task", "unit"], record_id: str, task: Task, record: Completion | Interaction,
            deadline_ahead: int) -> Reward:
    claim = record.claim
    return Reward(source=source, record_id=record_id, task_id=task.id, title=task.title, kind=task.kind.value,
                  earned_at=record.created_at, points=record.points, gs=int(record.gs_amount), claim=claim,
                  redeemable=claim is not None and claim.status == ClaimStatus.ISSUED
                  and int(claim.deadline) >= deadline_ahead)
