"""Members of a publisher or advertiser account: other wallets, each signing in with its own key, acting on the
account with a role. A viewer reads (a publisher's sites, figures, balances and traffic; an advertiser's campaigns,
balance and reports); a manager also manages what the account runs and its money (sites and withdrawals; campaigns,
creatives, tasks, deposits, allocations and withdrawals), what it withdraws still paid to the account's own wallet,
the holder of every claim; an owner also adds and removes members. The wallet that made the account is always its
owner and cannot be removed.

Both kinds of account follow the same rules, each with its own table (``Kind``: ``PUBLISHERS``, ``ADVERTISERS``).
A role is looked up on every request (``role_in``), so removing a member, or changing its role, takes effect on its
next request. Adding a wallet twice is refused by the database (one row per account and wallet).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from tortoise.exceptions import IntegrityError
from tortoise.queryset import QuerySet

from adnet.accounts.commands import NewMember
from adnet.accounts.models import Advertiser, AdvertiserMember, Member, MemberRole, Publisher, PublisherMember
from adnet.core.errors import Conflict, Forbidden, NotFound
from adnet.core.ids import has_prefix, new_id

log = logging.getLogger(__name__)

RANK = {MemberRole.VIEWER: 0, MemberRole.MANAGER: 1, MemberRole.OWNER: 2}

Account = Publisher | Advertiser


@dataclass(frozen=True)
class Kind:
    """A kind of account that has members: its name (``publisher``), id prefix, model and members' model."""

    name: str
    prefix: str
    account: type[Publisher] | type[Advertiser]
    member: type[PublisherMember] | type[AdvertiserMember]

    def members(self, **filters: Any) -> QuerySet[Any]:
        return self.member.filter(**filters)

    def of_account(self, account_id: str) -> QuerySet[Any]:
        """The members of the account ``account_id``."""
        return self.members(**{f"{self.name}_id": account_id})


PUBLISHERS = Kind("publisher", "pub", Publisher, PublisherMember)
ADVERTISERS = Kind("advertiser", "adv", Advertiser, AdvertiserMember)


def kind_of(account: Account) -> Kind:
    return PUBLISHERS if isinstance(account, Publisher) else ADVERTISERS


async def role_in(account: Account, wallet: str) -> MemberRole | None:
    """What ``wallet`` is on the account: its owner (the account's wallet), a member's role, or None."""
    if account.wallet == wallet:
        return MemberRole.OWNER
    return await kind_of(account).of_account(account.id).filter(wallet=wallet).first().values_list(
        "role", flat=True)  # type: ignore[return-value]


def require_role(role: MemberRole | None, need: MemberRole, what: str, field: str | None = None) -> None:
    """Forbidden ``not_owner`` for a wallet that is no one on the account (naming ``field``, ``<what>Id`` unless
    said), ``insufficient_role`` (with its ``role`` and the ``needed`` one) for a member whose role is below
    ``need``."""
    if role is None:
        raise Forbidden("not_owner", f"This {what} belongs to another wallet.", field=field or f"{what}Id")
    if RANK[role] < RANK[need]:
        raise Forbidden("insufficient_role", f"Your role on this account ({role.value}) does not allow this; "
                                             f"it needs {need.value}.", role=role.value, needed=need.value)


async def managed_account(kind: Kind, wallet: str, account_id: object, need: MemberRole) -> Any:
    """The account ``account_id`` of ``kind`` on which ``wallet`` holds at least ``need`` (NotFound, or the
    refusals of ``require_role``)."""
    account = await kind.account.get_or_none(id=account_id) if isinstance(account_id, str) and has_prefix(
        account_id, kind.prefix) else None
    if account is None:
        raise NotFound.of(f"{kind.name} account")
    require_role(await role_in(account, wallet), need, kind.name)
    return account


async def account_members(kind: Kind, wallet: str, account_id: object) -> tuple[Any, list[Member]]:
    """The account (``wallet`` a viewer or more on it) and its members, oldest first."""
    account = await managed_account(kind, wallet, account_id, MemberRole.VIEWER)
    return account, await kind.of_account(account.id).order_by("created_at", "id")


async def add_member(kind: Kind, wallet: str, account_id: object, member: NewMember, now: datetime) -> Member:
    """Add ``member`` to the account; ``wallet`` must be an owner of it. Conflict ``already_member`` when the wallet
    is the account's own or a member already."""
    account = await managed_account(kind, wallet, account_id, MemberRole.OWNER)
    if member.wallet == account.wallet:
        raise Conflict("already_member", "This wallet owns the account.", field="wallet")
    try:
        added = await kind.member.create(id=new_id("mem"), wallet=member.wallet, role=member.role, created_at=now,
                                         **{kind.name: account})
    except IntegrityError:
        raise Conflict("already_member", "This wallet is a member of the account already; remove it to change its "
                                         "role.", field="wallet") from None
    log.info("member added %s=%s wallet=%s role=%s by=%s", kind.name, account.id, member.wallet, member.role.value,
             wallet)
    return added


async def remove_member(kind: Kind, wallet: str, account_id: object, member_wallet: str) -> None:
    """Remove a member (``wallet`` an owner of the account); NotFound when it is no member."""
    account = await managed_account(kind, wallet, account_id, MemberRole.OWNER)
    if not await kind.of_account(account.id).filter(wallet=member_wallet).delete():
        raise NotFound.of("member")
    log.info("member removed %s=%s wallet=%s by=%s", kind.name, account.id, member_wallet, wallet)


async def memberships(kind: Kind, wallet: str) -> list[Member]:
    """The wallet's memberships of other accounts of ``kind``, each with its account, oldest first."""
    return await kind.members(wallet=wallet).order_by("created_at", "id").select_related(kind.name)


async def member_accounts(kind: Kind, wallet: str) -> list[str]:
    """The ids of the accounts of ``kind`` that ``wallet`` is a member of (any role)."""
    return [str(found) for found in await kind.members(wallet=wallet).values_list(f"{kind.name}_id", flat=True)]
