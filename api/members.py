"""Members of a publisher account under /api/publishers/accounts/<publisherId>/members: list them, add a wallet
with a role, remove one (rules in adnet.accounts.members).

These need the signed-in wallet's own session (an API key gets 403 ``session_required``): listing needs any role on
the account, adding and removing its owner. ``publisherId`` is what registering a site answers.
"""

from __future__ import annotations

from quart import Blueprint, Response
from quart_rate_limiter import rate_limit
from quart_schema import document_response

from adnet.accounts import members
from adnet.accounts.commands import NewMember
from adnet.accounts.models import MemberRole, PublisherMember
from adnet.core.inputs import Command, WalletAddress, parse
from api.http import answer, services, with_body
from api.ratelimit import settings_limit
from api.schemas import Address, Schema, Time, refusals
from api.sessions import current_wallet, require_session

blueprint = Blueprint("api_members", __name__, url_prefix="/api")

ACCOUNT_LIMIT = settings_limit("rate_limit_account")


class MemberWallet(Command):
    """A member's wallet, as the path names it."""

    wallet: WalletAddress


class MemberOut(Schema):
    wallet: Address
    role: MemberRole
    added_at: Time | None = None


class MembersOut(Schema):
    """The account's owner (its own wallet, which cannot be removed) and its members."""

    publisher_id: str
    owner: Address
    members: list[MemberOut]


class RemovedMemberOut(Schema):
    publisher_id: str
    wallet: Address
    removed: bool


def member_out(member: PublisherMember) -> MemberOut:
    return MemberOut(wallet=member.wallet, role=member.role, added_at=member.created_at)


@blueprint.get("/publishers/accounts/<publisher_id>/members")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_session
@document_response(MembersOut)
@refusals(404)
async def list_members(publisher_id: str) -> Response:
    """The account's owner and members, for any of them."""
    publisher, found = await members.account_members(current_wallet(), publisher_id)
    return answer(MembersOut(publisher_id=publisher.id, owner=publisher.wallet,
                             members=[member_out(member) for member in found]))


@blueprint.post("/publishers/accounts/<publisher_id>/members")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_session
@with_body(NewMember)
@document_response(MemberOut, 201)
@refusals(400, 404, 409)
async def add_member(publisher_id: str, data: NewMember) -> Response:
    """Add ``wallet`` to the account as ``owner``, ``manager`` or ``viewer`` (an owner of the account only). It
    signs in with its own wallet and acts on the account's sites within its role."""
    added = await members.add_member(current_wallet(), publisher_id, data, services().clock.now())
    return answer(member_out(added), 201)


@blueprint.post("/publishers/accounts/<publisher_id>/members/<wallet>/remove")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_session
@document_response(RemovedMemberOut)
@refusals(400, 404)
async def remove_member(publisher_id: str, wallet: str) -> Response:
    """Remove a member (an owner of the account only); its next request on the account is refused."""
    member = parse(MemberWallet, {"wallet": wallet}).wallet
    await members.remove_member(current_wallet(), publisher_id, member)
    return answer(RemovedMemberOut(publisher_id=publisher_id, wallet=member, removed=True))
