"""API keys in the portal (``/portal/keys``): the wallet's keys, issuing one (its token shown on the answer, this
once) and revoking one; the rules are ``adnet.accounts.api_keys``'s, the same as ``/api/keys``."""

from __future__ import annotations

from typing import Any

from quart import Response, render_template, url_for

from adnet.accounts import api_keys
from adnet.accounts.commands import ApiKeyScope, NewApiKey
from adnet.core.errors import DomainError
from portal.forms import command_of
from portal.pages import account_form, account_page, form_error, page, portal_blueprint, see_other, wants_fragment
from portal.views import Sent, form_view
from web.sessions import current_wallet

blueprint = portal_blueprint("keys")


async def keys_context(**extra: Any) -> dict[str, Any]:
    """What the keys page shows: the wallet's keys and the scopes a new one may hold."""
    return {"keys": await api_keys.wallet_keys(current_wallet()), "scopes": list(ApiKeyScope),
            "scopes_of": api_keys.scopes_of, **extra}


@blueprint.get("/portal/keys")
@account_page
async def keys_page() -> tuple[str, int]:
    """The signed-in wallet's API keys and the form that issues one."""
    return await page("portal/keys.html", "portal/_keys.html", **await keys_context())


def _key_values(sent: Sent) -> dict[str, Any]:
    return {"name": sent.form.get("name", ""), "scopes": sent.form.getlist("scopes")}


async def _key_refused(error: DomainError, sent: Sent) -> Response:
    return await form_error("portal/_key_form.html", "#issue-key", error, "portal/keys.html", keys_context,
                            values=_key_values(sent))


@blueprint.post("/portal/keys")
@account_form
@form_view(_key_refused)
async def issue_key(sent: Sent) -> Response:
    """Issue a key: the answer shows its token once (the list with the token above it for htmx, the whole page
    otherwise); a refusal is shown beside the form."""
    values = _key_values(sent)
    command = command_of(NewApiKey, {"name": values["name"], "scopes": " ".join(values["scopes"])})
    issued = await api_keys.issue_key(sent.wallet, command, sent.now, sent.run.random)
    body, status = await page("portal/keys.html", "portal/_keys.html", 201, **await keys_context(issued=issued))
    return Response(body, status)


@blueprint.post("/portal/keys/<key_id>/revoke")
@account_form
@form_view()
async def revoke_key(sent: Sent, key_id: str) -> Response:
    """Revoke one of the wallet's keys: htmx gets the list back, a browser without JavaScript a 303 to the page."""
    await api_keys.revoke_key(sent.wallet, key_id, sent.now)
    if not wants_fragment():
        return see_other(url_for("portal_keys.keys_page"))
    return Response(await render_template("portal/_keys.html", **await keys_context()))
