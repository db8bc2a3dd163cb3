"""Members of a publisher account: other wallets, each signing in with its own key, acting on the account's sites
with a role. A viewer reads (sites, figures, balances, traffic); a manager also manages sites and money (what it
withdraws is still paid to the account's own wallet, the holder of every claim); an owner also adds and removes
members. The wallet that made the account is always its owner and cannot be removed.

A role is looked up on every request (``role_in``), so removing a member, or changing its role, takes effect on its
next request. Adding a wallet twice is refused by the database (one row per account and wallet).
"""

from __future__ import annotations

import logging
from datetime import datetime

from tortoise.exceptions import IntegrityError

from adnet.accounts.commands import NewMember
from adnet.accounts.models import MemberRole, Publisher, PublisherMember
from adnet.core.errors import Conflict, Forbidden, NotFound
from adnet.core.ids import has_prefix, new_id

log = logging.getLogger(__name__)

RANK = {MemberRole.VIEWER: 0, MemberRole.MANAGER: 1, MemberRole.OWNER: 2}


async def role_in(publisher: Publisher, wallet: str) -> MemberRole | None:
    """What ``wallet`` is on the publisher account: its owner (the account's wallet), a member's role, or None."""
    if publisher.wallet == wallet:
        return MemberRole.OWNER
    return await PublisherMember.filter(publisher_id=publisher.id, wallet=wallet).first().values_list(
        "role", flat=True)  # type: ignore[return-value]


def require_role(role: MemberRole | None, need: MemberRole, what: str) -> None:
    """Forbidden ``not_owner`` for a wallet that is no one on the account, ``insufficient_role`` (with its ``role``
    and the ``needed`` one) for a member whose role is below ``need``."""
    if role is None:
        raise Forbidden("not_owner", f"This {what} belongs to another wallet.", field=f"{what}Id")
    if RANK[role] < RANK[need]:
        raise Forbidden("insufficient_role", f"Your role on this account ({role.value}) does not allow this; "
                                             f"it needs {need.value}.", role=role.value, needed=need.value)


async def managed_account(wallet: str, publisher_id: object, need: MemberRole) -> Publisher:
    """The publisher account ``publisher_id`` on which ``wallet`` holds at least ``need`` (NotFound, or the
    refusals of ``require_role``)."""
    publisher = await Publisher.get_or_none(id=publisher_id) if isinstance(publisher_id, str) and has_prefix(
        publisher_id, "pub") else None
    if publisher is None:
        raise NotFound.of("publisher account")
    require_role(await role_in(publisher, wallet), need, "publisher")
    return publisher


async def account_members(wallet: str, publisher_id: object) -> tuple[Publisher, list[PublisherMember]]:
    """The account (``wallet`` a viewer or more on it) and its members, oldest first."""
    publisher = await managed_account(wallet, publisher_id, MemberRole.VIEWER)
    return publisher, await PublisherMember.filter(publisher_id=publisher.id).order_by("created_at", "id")


async def add_member(wallet: str, publisher_id: object, member: NewMember, now: datetime) -> PublisherMember:
    """Add ``member`` to the account; ``wallet`` must be an owner of it. Conflict ``already_member`` when the wallet
    is the account's own or a member already."""
    publisher = await managed_account(wallet, publisher_id, MemberRole.OWNER)
    if member.wallet == publisher.wallet:
        raise Conflict("already_member", "This wallet owns the account.", field="wallet")
    try:
        added = await PublisherMember.create(id=new_id("mem"), publisher=publisher, wallet=member.wallet,
                                             role=member.role, created_at=now)
    except IntegrityError:
        raise Conflict("already_member", "This wallet is a member of the account already; remove it to change its "
                                         "role.", field="wallet") from None
    log.info("member added publisher=%s wallet=%s role=%s by=%s", publisher.id, member.wallet, member.role.value,
             wallet)
    return added


async def remove_member(wallet: str, publisher_id: object, member_wallet: str) -> None:
    """Remove a member (``wallet`` an owner of the account); NotFound when it is no member."""
    publisher = await managed_account(wallet, publisher_id, MemberRole.OWNER)
    if not await PublisherMember.filter(publisher_id=publisher.id, wallet=member_wallet).delete():
        raise NotFound.of("member")
    log.info("member removed publisher=%s wallet=%s by=%s", publisher.id, member_wallet, wallet)


async def memberships(wallet: str) -> list[PublisherMember]:
    """The wallet's memberships of other publisher accounts, each with its account, oldest first."""
    return await PublisherMember.filter(wallet=wallet).order_by("created_at", "id").select_related("publisher")


async def member_accounts(wallet: str) -> list[str]:
    """The ids of the publisher accounts ``wallet`` is a member of (any role)."""
    return [str(found) for found in await PublisherMember.filter(wallet=wallet).values_list("publisher_id",
                                                                                           flat=True)]
