"""A proven wallet's place in wallet audiences: the proof that enqueues it for the audience job, the viewer's switch
for wallet targeting, and what the viewer may see of its own memberships.

Only a wallet its viewer proved is ever evaluated: ``proven`` is called by the rewards sign-in after the signature
checked out, never for a wallet a page names. The row it writes is due at once, so the audience job (every
``adnet.audiences.evaluation.EVALUATE_SECONDS``) knows the wallet within seconds.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime

from tortoise.exceptions import IntegrityError

from adnet.audiences.membership import changed_id
from adnet.audiences.models import AudienceWallet
from adnet.campaigns.audiences import ChainRule, describe
from adnet.core import changes

log = logging.getLogger(__name__)


async def proven(wallet: str, now: datetime) -> None:
    """Note that the viewer proved ``wallet`` now: a new wallet is due for evaluation at once, a known one counts as
    seen (the audience window runs from its last proof). A wallet that opted out stays out."""
    if await AudienceWallet.filter(wallet=wallet).update(proven_at=now):
        return
    try:
        await AudienceWallet.create(wallet=wallet, proven_at=now)
    except IntegrityError:  # a concurrent proof of the same wallet made it first
        await AudienceWallet.filter(wallet=wallet).update(proven_at=now)


@dataclass(frozen=True)
class WalletAudiences:
    """What a viewer may see of its wallet: whether wallet targeting is off, the rules it matched (in words) and
    until when that evaluation counts."""

    wallet: str
    targeting_off: bool
    audiences: list[str]
    evaluated_at: datetime | None
    expires_at: datetime | None


async def wallet_audiences(wallet: str, rules: dict[str, ChainRule], now: datetime) -> WalletAudiences:
    """The audiences ``wallet`` is in now, among ``rules`` (the live campaigns' rules by key), described."""
    row = await AudienceWallet.get_or_none(wallet=wallet)
    if row is None or row.opted_out or row.expires_at is None or row.expires_at <= now:
        return WalletAudiences(wallet=wallet, targeting_off=bool(row and row.opted_out), audiences=[],
                               evaluated_at=None, expires_at=None)
    described = sorted({describe(rules[key]) for key in row.matched if key in rules})
    return WalletAudiences(wallet=wallet, targeting_off=False, audiences=described, evaluated_at=row.evaluated_at,
                           expires_at=row.expires_at)


async def set_targeting(wallet: str, *, off: bool, now: datetime) -> None:
    """Switch wallet targeting off (forgetting every evaluation of the wallet) or on again (due for evaluation at
    once) for ``wallet``, and tell every serving process, which drops what it knew of the wallet at once."""
    if off:
        updated = await AudienceWallet.filter(wallet=wallet).update(
            opted_out=True, evaluated=[], matched=[], evaluated_at=None, expires_at=None)
        if not updated:
            try:
                await AudienceWallet.create(wallet=wallet, proven_at=now, opted_out=True)
            except IntegrityError:
                await AudienceWallet.filter(wallet=wallet).update(
                    opted_out=True, evaluated=[], matched=[], evaluated_at=None, expires_at=None)
    elif not await AudienceWallet.filter(wallet=wallet).update(opted_out=False, evaluated_at=None, proven_at=now):
        await proven(wallet, now)
    log.info("wallet targeting switched off=%s", off)
    changes.announce(changed_id(wallet))

