"""Members of publisher and advertiser accounts under /api/publishers/accounts/<publisherId>/members and
/api/advertisers/accounts/<advertiserId>/members: list them, add a wallet with a role, remove one (rules in
adnet.accounts.members, the same for both kinds).

These need the signed-in wallet's own session (an API key gets 403 ``session_required``): listing needs any role on
the account, adding and removing its owner. ``publisherId`` is what registering a site answers, ``advertiserId``
what registering as an advertiser answers.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from quart import Blueprint, Response
from quart_rate_limiter import rate_limit
from quart_schema import document_response

from adnet.accounts import members
from adnet.accounts.commands import NewMember
from adnet.accounts.members import ADVERTISERS, PUBLISHERS, Kind
from adnet.accounts.models import Member, MemberRole
from adnet.core.inputs import Command, WalletAddress, parse
from api.http import answer, with_body
from api.schemas import Address, Schema, Time, refusals
from api.sessions import require_session
from web.limits import ACCOUNT_LIMIT
from web.sessions import current_wallet

blueprint = Blueprint("api_members", __name__, url_prefix="/api")


class MemberWallet(Command):
    """A member's wallet, as the path names it."""

    wallet: WalletAddress


class MemberOut(Schema):
    wallet: Address
    role: MemberRole
    added_at: Time | None = None


class MembersOut(Schema):
    """The account's owner (its own wallet, which cannot be removed) and its members."""

    owner: Address
    members: list[MemberOut]


class PublisherMembersOut(MembersOut):
    publisher_id: str


class AdvertiserMembersOut(MembersOut):
    advertiser_id: str


class RemovedMemberOut(Schema):
    wallet: Address
    removed: bool


class RemovedPublisherMemberOut(RemovedMemberOut):
    publisher_id: str


class RemovedAdvertiserMemberOut(RemovedMemberOut):
    advertiser_id: str


def member_out(member: Member) -> MemberOut:
    return MemberOut(wallet=member.wallet, role=member.role, added_at=member.created_at)


def member_routes(kind: Kind, listed: type[MembersOut], removed: type[RemovedMemberOut]) -> None:
    """The three member routes of accounts of ``kind``, answering ``listed`` and ``removed`` with the account's id
    named after the kind (``publisherId``, ``advertiserId``)."""
    path = f"/{kind.name}s/accounts/<account_id>/members"

    def named_id(value: str) -> dict[str, Any]:
        return {f"{kind.name}_id": value}

    @blueprint.get(path, endpoint=f"list_{kind.name}_members")
    @rate_limit(limits=ACCOUNT_LIMIT)
    @require_session
    @document_response(listed)
    @refusals(404)
    async def list_members(account_id: str) -> Response:
        """The account's owner and members, for any of them."""
        account, found = await members.account_members(kind, current_wallet(), account_id)
        return answer(listed(owner=account.wallet, members=[member_out(member) for member in found],
                             **named_id(account.id)))

    @blueprint.post(path, endpoint=f"add_{kind.name}_member")
    @rate_limit(limits=ACCOUNT_LIMIT)
    @require_session
    @with_body(NewMember)
    @document_response(MemberOut, 201)
    @refusals(400, 404, 409)
    async def add_member(account_id: str, data: NewMember, now: datetime) -> Response:
        """Add ``wallet`` to the account as ``owner``, ``manager`` or ``viewer`` (an owner of the account only). It
        signs in with its own wallet and acts on the account within its role."""
        added = await members.add_member(kind, current_wallet(), account_id, data, now)
        return answer(member_out(added), 201)

    @blueprint.post(f"{path}/<wallet>/remove", endpoint=f"remove_{kind.name}_member")
    @rate_limit(limits=ACCOUNT_LIMIT)
    @require_session
    @document_response(removed)
    @refusals(400, 404)
    async def remove_member(account_id: str, wallet: str) -> Response:
        """Remove a member (an owner of the account only); its next request on the account is refused."""
        member = parse(MemberWallet, {"wallet": wallet}).wallet
        await members.remove_member(kind, current_wallet(), account_id, member)
        return answer(removed(wallet=member, removed=True, **named_id(account_id)))


member_routes(PUBLISHERS, PublisherMembersOut, RemovedPublisherMemberOut)
member_routes(ADVERTISERS, AdvertiserMembersOut, RemovedAdvertiserMemberOut)
