"""Advertisers: a wallet that funds campaigns and units. Its money (deposits, allocation, withdrawals) is
``adnet.money``'s and ``adnet.campaigns.funding``'s; its balance is read in ``adnet.reporting.balances``. Other
wallets act on an advertiser account as its members (``adnet.accounts.members``), naming the account they act on."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime

from tortoise.exceptions import IntegrityError
from tortoise.transactions import in_transaction

from adnet.accounts.commands import AdvertiserRegistration
from adnet.accounts.members import ADVERTISERS, managed_account
from adnet.accounts.models import Advertiser, MemberRole
from adnet.core.errors import NotFound
from adnet.core.ids import new_id

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Registration:
    """The wallet's advertiser record; ``created`` is False when it existed."""

    advertiser: Advertiser
    created: bool


async def register(wallet: str, registration: AdvertiserRegistration, now: datetime) -> Registration:
    """The wallet's advertiser record, created on its first call (an insert guarded by the unique wallet)."""
    existing = await Advertiser.get_or_none(wallet=wallet)
    if existing is not None:
        return Registration(existing, created=False)
    try:
        async with in_transaction():
            advertiser = await Advertiser.create(id=new_id("adv"), wallet=wallet, name=registration.name.strip(),
                                                 created_at=now)
    except IntegrityError:
        return Registration(await Advertiser.get(wallet=wallet), created=False)
    log.info("advertiser registered advertiser=%s wallet=%s", advertiser.id, wallet)
    return Registration(advertiser, created=True)


async def advertiser_of(wallet: str) -> Advertiser:
    """The wallet's advertiser record; NotFound before it registered."""
    advertiser = await Advertiser.get_or_none(wallet=wallet)
    if advertiser is None:
        raise NotFound.of("advertiser for this wallet; register first")
    return advertiser


async def advertiser_account(wallet: str, advertiser_id: str | None, need: MemberRole) -> Advertiser:
    """The advertiser account a request of ``wallet`` acts on: its own without ``advertiser_id`` (NotFound before it
    registered), else the account ``advertiser_id`` when ``wallet`` owns it or is a member with at least ``need``
    (NotFound, Forbidden ``not_owner`` or ``insufficient_role``)."""
    if advertiser_id is None:
        return await advertiser_of(wallet)
    advertiser: Advertiser = await managed_account(ADVERTISERS, wallet, advertiser_id, need)
    return advertiser
