"""Reach before buying: how many proven wallets a campaign's targeting would find, told only as a rounded count.

The count is of the wallets viewers proved within ``AUDIENCE_WINDOW`` (the rewards sign-in), not opted out, whose
latest evaluation (``adnet.audiences.evaluation``) is in the audience; a campaign without wallet rules reaches all of
them. The job evaluates the rules of every campaign that is not ended, drafts included, so rules written a moment
ago are known after its next pass: until every counted wallet was asked them, the answer says ``pending``.

Advertisers never see a wallet, nor a count that could single one out: a count under ``THRESHOLD`` is told as "fewer
than 100" (None), and any other is rounded down to a multiple of ``ROUND_TO``, so that narrowing an audience rule by
rule cannot reveal one wallet's holdings (KNOWN-HOLES 32).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from adnet.audiences.evaluation import AUDIENCE_WINDOW
from adnet.audiences.membership import Membership, compile_audience
from adnet.audiences.models import AudienceWallet
from adnet.campaigns.audiences import chain_rules
from adnet.campaigns.targeting import Targeting

THRESHOLD = 100
ROUND_TO = 100


def rounded(count: int) -> int | None:
    """``count`` as an advertiser may see it: None under ``THRESHOLD``, else rounded down to ``ROUND_TO``."""
    return None if count < THRESHOLD else count // ROUND_TO * ROUND_TO


@dataclass(frozen=True)
class Reach:
    """The rounded count of proven wallets in the audience (None: fewer than ``THRESHOLD``), whether some were
    not asked every rule yet, and the exact share of the counted wallets the audience holds (1 without wallet rules),
    which turns requests a day into the audience's (never told as such: it is exact)."""

    wallets: int | None
    pending: bool
    share: float = 1.0


async def reach(targeting: Targeting, now: datetime) -> Reach:
    """How many recently proven wallets ``targeting``'s wallet audience finds, rounded."""
    audience = compile_audience(targeting.audience_groups, targeting.audience_exclude)
    keys = frozenset(chain_rules(targeting.audience_groups, targeting.audience_exclude))
    rows = await AudienceWallet.filter(opted_out=False, proven_at__gt=now - AUDIENCE_WINDOW).values_list(
        "evaluated", "matched", "expires_at")
    count, pending = 0, False
    for evaluated, matched, expires_at in rows:
        membership = None if expires_at is None else Membership(frozenset(evaluated or ()), frozenset(matched or ()),
                                                               expires_at.astimezone(UTC))
        if keys and (membership is None or membership.expires_at <= now or not keys <= membership.evaluated):
            pending = True
        # A proven wallet was connected from a wallet in the browser: the injected-wallet rule holds for it.
        count += audience.admits(membership, True, now)
    return Reach(wallets=rounded(count), pending=pending, share=count / len(rows) if rows else
                 0.0 if targeting.audience_groups or targeting.audience_exclude else 1.0)
