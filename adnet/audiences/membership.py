"""Audience membership at serve time: whether a campaign's wallet audience admits a viewer, decided from memory.

A campaign's audience rules (``adnet.campaigns.audiences``) compile once per index rebuild into an ``Audience`` of
rule keys. What a proven wallet matched lives in a ``MembershipStore``: each serving process loads it from the
``audience_wallet`` rows the audience job writes (``adnet.audiences.evaluation``) when its index is built and when a
change to those wallets is announced (through Redis with ``ADNET_REDIS_URL``, the database's change log without),
so a request reads a dict and nothing else.

For one rule a wallet is a match (the key is in ``matched``), no match (asked, not matched), or not known (not
asked yet, the evaluation expired, the wallet opted out or was never proven): not known is never a match, and an
exclusion whose answer is not known refuses, so an excluded wallet is never shown the campaign while the job
catches up.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from adnet.audiences.models import AudienceWallet
from adnet.campaigns.audiences import INJECTED

log = logging.getLogger(__name__)

# The prefix of the ids announced when a wallet's membership changed (``adnet.core.changes``).
CHANGED_PREFIX = "wallet:"


def changed_id(wallet: str) -> str:
    """The id announced when ``wallet``'s membership changed."""
    return CHANGED_PREFIX + wallet


@dataclass(frozen=True, slots=True)
class Membership:
    """What one wallet's evaluation found: the rule keys asked and those matched, until ``expires_at`` (UTC)."""

    evaluated: frozenset[str]
    matched: frozenset[str]
    expires_at: datetime


@dataclass(frozen=True, slots=True)
class Audience:
    """A campaign's wallet audience, compiled: groups of rule keys (any group whose keys all hold admits; none means
    no limit) and excluded keys (any that holds, or is not known, refuses)."""

    groups: tuple[frozenset[str], ...] = ()
    exclude: frozenset[str] = frozenset()

    def admits(self, membership: Membership | None, injected_wallet: bool, now: datetime) -> bool:
        """Whether the viewer (its wallet's ``membership``, None when it proved none or it is not known yet, and
        whether the page found a wallet extension) is in the audience at ``now``."""
        if membership is not None and membership.expires_at <= now:
            membership = None
        for key in self.exclude:
            if _holds(key, membership, injected_wallet) is not False:
                return False
        return not self.groups or any(all(_holds(key, membership, injected_wallet) for key in group)
                                      for group in self.groups)

    def group_of(self, membership: Membership | None, injected_wallet: bool, now: datetime) -> int:
        """The number (1 for the first) of the first group that holds for a viewer ``admits`` let in, which the
        tracking token carries so reports can count by group (``adnet.reporting.audiences``); 0 without groups."""
        if membership is not None and membership.expires_at <= now:
            membership = None
        return next((number for number, group in enumerate(self.groups, start=1)
                     if all(_holds(key, membership, injected_wallet) for key in group)), 0)


def _holds(key: str, membership: Membership | None, injected_wallet: bool) -> bool | None:
    """True, False, or None when not known."""
    if key == INJECTED:
        return injected_wallet
    if membership is None or key not in membership.evaluated:
        return None
    return key in membership.matched


NO_AUDIENCE = Audience()


def compile_audience(groups: list[list[Any]], exclude: list[Any]) -> Audience:
    """A campaign's audience rules (validated ``Targeting.audience_groups`` and ``audience_exclude``), compiled."""
    if not groups and not exclude:
        return NO_AUDIENCE
    return Audience(groups=tuple(frozenset(item.key for item in group) for group in groups),
                    exclude=frozenset(item.key for item in exclude))


class MembershipStore:
    """What each proven wallet matched, in this process's memory (loaded, never computed, here)."""

    def __init__(self) -> None:
        self.wallets: dict[str, Membership] = {}

    def get(self, wallet: str | None) -> Membership | None:
        return self.wallets.get(wallet) if wallet is not None else None

    def forget(self, wallets: Iterable[str]) -> None:
        """Drop what is known of ``wallets`` (until the next load): an opt-out is honoured before the reload."""
        for wallet in wallets:
            self.wallets.pop(wallet, None)

    async def load(self, now: datetime, wallets: Iterable[str] | None = None) -> None:
        """Read the unexpired evaluations of ``wallets`` (every wallet's when None, replacing what is held): one
        query."""
        query = AudienceWallet.filter(opted_out=False, expires_at__gt=now)
        if wallets is not None:
            wanted = sorted(set(wallets))
            if not wanted:
                return
            query = query.filter(wallet__in=wanted)
        rows = await query.values_list("wallet", "evaluated", "matched", "expires_at")
        found = {str(wallet): Membership(frozenset(evaluated or ()), frozenset(matched or ()),
                                         expires_at.astimezone(UTC)) for wallet, evaluated, matched, expires_at in rows}
        if wallets is None:
            self.wallets = found
            return
        for wallet in wanted:
            membership = found.get(wallet)
            if membership is None:
                self.wallets.pop(wallet, None)
            else:
                self.wallets[wallet] = membership
