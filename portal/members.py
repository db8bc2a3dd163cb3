"""Members of the signed-in wallet's publisher and advertiser accounts in the portal (``/portal/members``): who they
are and their roles, adding one and removing one, and the accounts the wallet itself is a member of; the rules are
``adnet.accounts.members``'s, the same as the API's. A form names the kind of account in its ``account`` field
(``publisher`` unless it says ``advertiser``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from quart import Response, url_for

from adnet.accounts import members
from adnet.accounts.commands import NewMember
from adnet.accounts.members import ADVERTISERS, PUBLISHERS, Kind
from adnet.accounts.models import MemberRole
from adnet.core.errors import DomainError
from portal.pages import account_form, account_page, form_error, page, portal_blueprint, see_other
from portal.views import Sent, form_view
from web.sessions import current_wallet

blueprint = portal_blueprint("members")

# Each kind of account with the prefix of its elements' ids on the page.
SECTIONS = ((PUBLISHERS, ""), (ADVERTISERS, "advertiser-"))


def kind_of_form(form: Mapping[str, str]) -> Kind:
    return ADVERTISERS if form.get("account") == ADVERTISERS.name else PUBLISHERS


async def members_context(**extra: Any) -> dict[str, Any]:
    """For each kind, the wallet's own account (None before it has one) with its members; and the accounts of
    either kind it is a member of."""
    wallet = current_wallet()
    sections = []
    for kind, prefix in SECTIONS:
        own = await kind.account.get_or_none(wallet=wallet)
        listed = (await members.account_members(kind, wallet, own.id))[1] if own else []
        sections.append({"kind": kind.name, "prefix": prefix, "account": own, "members": listed})
    memberships = [(kind.name, membership, getattr(membership, kind.name)) for kind, _ in SECTIONS
                   for membership in await members.memberships(kind, wallet)]
    return {"sections": sections, "roles": list(MemberRole), "memberships": memberships, **extra}


async def own_account_id(kind: Kind) -> str | None:
    own = await kind.account.get_or_none(wallet=current_wallet())
    return own.id if own else None


@blueprint.get("/portal/members")
@account_page
async def members_page() -> tuple[str, int]:
    """The members of the wallet's accounts, the forms that add one, and its own memberships."""
    return await page("portal/members.html", "portal/members.html", **await members_context())


async def _member_refused(error: DomainError, sent: Sent) -> Response:
    kind = kind_of_form(sent.form)
    section = {"kind": kind.name, "prefix": dict(SECTIONS)[kind]}
    return await form_error("portal/_member_form.html", f"#add-{section['prefix']}member", error,
                            "portal/members.html", members_context, values=sent.values("wallet", "role"),
                            section=section, failed=kind.name, roles=list(MemberRole))


@blueprint.post("/portal/members")
@account_form
@form_view(_member_refused)
async def add_member(sent: Sent) -> Response:
    """Add a member to one of the wallet's own accounts; a refusal is shown beside the form."""
    kind = kind_of_form(sent.form)
    await members.add_member(kind, sent.wallet, await own_account_id(kind), sent.command(NewMember), sent.now)
    return see_other(url_for("portal_members.members_page"))


@blueprint.post("/portal/members/<wallet>/remove")
@account_form
@form_view()
async def remove_member(sent: Sent, wallet: str) -> Response:
    """Remove a member of one of the wallet's own accounts."""
    kind = kind_of_form(sent.form)
    await members.remove_member(kind, sent.wallet, await own_account_id(kind), wallet.lower())
    return see_other(url_for("portal_members.members_page"))
