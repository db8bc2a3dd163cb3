"""A site's settings in the portal (the Settings section of its page): rename, deactivate and reactivate, delete,
and what the site shows (its controls); the rules are ``adnet.accounts.sites``'s, ``adnet.money.closing``'s and
``adnet.delivery.controls``', the same as the API's."""

from __future__ import annotations

from quart import Response, render_template, request

from adnet.accounts import sites
from adnet.accounts.commands import SiteRename
from adnet.accounts.models import Site
from adnet.core.errors import DomainError
from adnet.delivery.controls import SiteControls, set_controls, stored_controls
from adnet.money import closing
from portal.forms import command_of
from portal.pages import account_form, form_error, portal_blueprint, see_other, wants_fragment
from portal.sites import site_context
from web.context import services
from web.sessions import current_wallet

blueprint = portal_blueprint("site_settings")


async def _settings(site: Site, done: str = "") -> Response:
    """The section again for htmx, saying what was ``done``; a 303 to the site's page otherwise."""
    if not wants_fragment():
        return see_other(f"/portal/sites/{site.id}")
    return Response(await render_template("portal/_site_settings.html", site=site, done=done))


async def _refused(site_id: str, error: DomainError, **context: object) -> Response:
    site = await sites.owned_site(current_wallet(), site_id)
    return await form_error("portal/_site_settings.html", "#site-settings", error, "portal/site.html",
                            lambda: site_context(site), site=site, **context)


@blueprint.post("/portal/sites/<site_id>/rename")
@account_form
async def rename_site(site_id: str) -> Response:
    """Rename the site; a refused name is shown in the section."""
    form = await request.form
    try:
        site = await sites.rename_site(current_wallet(), site_id, command_of(SiteRename, form))
    except DomainError as error:
        return await _refused(site_id, error, values={"name": form.get("name", "")})
    return await _settings(site, f"Renamed to “{site.name}”." if site.name else "Name cleared.")


@blueprint.post("/portal/sites/<site_id>/<any(deactivate, reactivate):action>")
@account_form
async def switch_site(site_id: str, action: str) -> Response:
    """Stop serving the site at once, or serve it again."""
    return await _settings(await sites.set_site_active(current_wallet(), site_id, action == "reactivate"))


@blueprint.post("/portal/sites/<site_id>/delete")
@account_form
async def delete_site(site_id: str) -> Response:
    """Delete the site once nothing is owed to it: the browser goes to the dashboard (``HX-Redirect`` for htmx); a
    refusal (a balance left) is shown in the section."""
    try:
        await closing.delete_site(current_wallet(), site_id, services().clock.now())
    except DomainError as error:
        return await _refused(site_id, error)
    if wants_fragment():
        return Response("", 200, headers={"HX-Redirect": "/portal"})
    return see_other("/portal")


@blueprint.post("/portal/sites/<site_id>/controls")
@account_form
async def site_controls(site_id: str) -> Response:
    """Replace what the site blocks and refuses; a refused field is marked in the section, nothing is changed."""
    form = await request.form
    try:
        site, controls = await set_controls(current_wallet(), site_id, command_of(SiteControls, form))
    except DomainError as error:
        site = await sites.owned_site(current_wallet(), site_id)
        return await form_error("portal/_site_controls.html", "#site-controls", error, "portal/site.html",
                                lambda: site_context(site), site=site, controls=stored_controls(site.controls),
                                control_values=form.to_dict())
    if not wants_fragment():
        return see_other(f"/portal/sites/{site.id}")
    return Response(await render_template("portal/_site_controls.html", site=site, controls=controls, done=True))
