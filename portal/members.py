"""Members of the signed-in wallet's publisher account in the portal (``/portal/members``): who they are and their
roles, adding one and removing one, and the accounts the wallet itself is a member of; the rules are
``adnet.accounts.members``'s, the same as the API's."""

from __future__ import annotations

from typing import Any

from quart import Response, request

from adnet.accounts import members
from adnet.accounts.commands import NewMember
from adnet.accounts.models import MemberRole, Publisher
from adnet.core.errors import DomainError
from api.http import services
from api.sessions import current_wallet
from portal.forms import command_of
from portal.pages import account_form, account_page, form_error, page, portal_blueprint, see_other

blueprint = portal_blueprint("members")


async def members_context(**extra: Any) -> dict[str, Any]:
    """The wallet's own publisher account (None before its first site) with its members, and the accounts it is a
    member of."""
    wallet = current_wallet()
    own = await Publisher.get_or_none(wallet=wallet)
    listed = (await members.account_members(wallet, own.id))[1] if own else []
    return {"account": own, "members": listed, "roles": list(MemberRole),
            "memberships": await members.memberships(wallet), **extra}


@blueprint.get("/portal/members")
@account_page
async def members_page() -> tuple[str, int]:
    """The members of the wallet's publisher account, the form that adds one, and its own memberships."""
    return await page("portal/members.html", "portal/members.html", **await members_context())


@blueprint.post("/portal/members")
@account_form
async def add_member() -> Response:
    """Add a member to the wallet's own account; a refusal is shown beside the form."""
    form = await request.form
    values = {"wallet": form.get("wallet", ""), "role": form.get("role", "")}
    try:
        own = await Publisher.get_or_none(wallet=current_wallet())
        await members.add_member(current_wallet(), own.id if own else None, command_of(NewMember, form),
                                 services().clock.now())
    except DomainError as error:
        return await form_error("portal/_member_form.html", "#add-member", error, "portal/members.html",
                                members_context, values=values)
    return see_other("/portal/members")


@blueprint.post("/portal/members/<wallet>/remove")
@account_form
async def remove_member(wallet: str) -> Response:
    """Remove a member of the wallet's own account."""
    own = await Publisher.get_or_none(wallet=current_wallet())
    await members.remove_member(current_wallet(), own.id if own else None, wallet.lower())
    return see_other("/portal/members")
