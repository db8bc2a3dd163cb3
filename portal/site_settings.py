"""A site's settings in the portal (the Settings section of its page): rename, its content categories (IAB Content
Taxonomy), deactivate and reactivate, delete,
and what the site shows (its controls, in the Controls section); the rules are ``adnet.accounts.sites``'s,
``adnet.money.closing``'s and ``adnet.delivery.controls``', the same as the API's.

Deactivating and deleting sit in the section's danger zone, and each needs a confirmation that this module checks,
not only the browser: the ``confirm`` box ticked to deactivate, the site's domain typed as ``confirmDomain`` to
delete. A form sent without it changes nothing and is shown again with the reason beside the field (400
``confirmation_required``). The API takes these as explicit calls and asks for no such field."""

from __future__ import annotations

from quart import Response, render_template, url_for

from adnet.accounts import sites
from adnet.accounts.commands import SiteContent, SiteRename
from adnet.accounts.content_taxonomy import content_taxonomy
from adnet.accounts.models import Site
from adnet.core.errors import DomainError, Invalid
from adnet.delivery.controls import SiteControls, set_controls, stored_controls
from adnet.money import closing
from portal.pages import account_form, form_error, portal_blueprint, see_other, wants_fragment
from portal.sites import section_url, site_context
from portal.views import Sent, form_view

blueprint = portal_blueprint("site_settings")


async def _settings(site: Site, done: str = "") -> Response:
    """The section again for htmx, saying what was ``done``; a 303 to the site's page otherwise."""
    if not wants_fragment():
        return see_other(section_url(site.id, "settings"))
    return Response(await render_template("portal/_site_settings.html", site=site, done=done,
                                          content_taxonomy=content_taxonomy()))


async def _refused(error: DomainError, sent: Sent, site_id: str, **_: str) -> Response:
    """A form of the section refused: the section again with the reason (and what was sent: the name from the
    rename form, the chosen categories from the content form)."""
    site = await sites.owned_site(sent.wallet, site_id)
    values = sent.values("name") if "name" in sent.form else None
    chosen = [value for value in sent.form.getlist("contentCategories") if value] \
        if "contentCategories" in sent.form else None
    return await form_error("portal/_site_settings.html", "#site-settings", error, "portal/site.html",
                            lambda: site_context(site, sent.run, "settings"), site=site, values=values,
                            chosen=chosen, content_taxonomy=content_taxonomy())


def confirmed(sent: Sent, field: str, expected: str, message: str) -> None:
    """Refuse a destructive form unless its ``field`` holds ``expected`` (case and spaces aside): Invalid
    ``confirmation_required``, naming the field."""
    if sent.form.get(field, "").strip().lower() != expected.lower():
        raise Invalid("confirmation_required", message, field=field)


@blueprint.post("/portal/sites/<site_id>/rename")
@account_form
@form_view(_refused)
async def rename_site(sent: Sent, site_id: str) -> Response:
    """Rename the site; a refused name is shown in the section."""
    site = await sites.rename_site(sent.wallet, site_id, sent.command(SiteRename))
    return await _settings(site, f"Renamed to “{site.name}”." if site.name else "Name cleared.")


@blueprint.post("/portal/sites/<site_id>/content")
@account_form
@form_view(_refused)
async def site_content(sent: Sent, site_id: str) -> Response:
    """Replace the site's content categories (IAB Content Taxonomy ids); a refused id is shown in the section."""
    site = await sites.set_content_categories(sent.wallet, site_id, sent.command(SiteContent))
    return await _settings(site, "Content categories saved.")


@blueprint.post("/portal/sites/<site_id>/<any(deactivate, reactivate):action>")
@account_form
@form_view(_refused)
async def switch_site(sent: Sent, site_id: str, action: str) -> Response:
    """Stop serving the site at once (once the ``confirm`` box is ticked), or serve it again."""
    if action == "deactivate":
        await sites.owned_site(sent.wallet, site_id)  # another wallet's site is refused before its form is read
        confirmed(sent, "confirm", "yes", "Tick the box to confirm that the site stops serving ads.")
    return await _settings(await sites.set_site_active(sent.wallet, site_id, action == "reactivate"))


@blueprint.post("/portal/sites/<site_id>/delete")
@account_form
@form_view(_refused)
async def delete_site(sent: Sent, site_id: str) -> Response:
    """Delete the site once its domain is typed as ``confirmDomain`` and nothing is owed to it: the browser goes to
    the dashboard (``HX-Redirect`` for htmx); a refusal (no confirmation, a balance left) is shown in the section."""
    site = await sites.owned_site(sent.wallet, site_id)
    confirmed(sent, "confirmDomain", site.domain, f"Type {site.domain} to confirm that the site is deleted.")
    await closing.delete_site(sent.wallet, site_id, sent.now)
    dashboard = url_for("portal_dashboard.dashboard")
    if wants_fragment():
        return Response("", 200, headers={"HX-Redirect": dashboard})
    return see_other(dashboard)


async def _controls_refused(error: DomainError, sent: Sent, site_id: str) -> Response:
    site = await sites.owned_site(sent.wallet, site_id)
    return await form_error("portal/_site_controls.html", "#site-controls", error, "portal/site.html",
                            lambda: site_context(site, sent.run, "controls"), site=site,
                            controls=stored_controls(site.controls), control_values=sent.form.to_dict())


@blueprint.post("/portal/sites/<site_id>/controls")
@account_form
@form_view(_controls_refused)
async def site_controls(sent: Sent, site_id: str) -> Response:
    """Replace what the site blocks and refuses; a refused field is marked in the section, nothing is changed."""
    site, controls = await set_controls(sent.wallet, site_id, sent.command(SiteControls))
    if not wants_fragment():
        return see_other(section_url(site.id, "controls"))
    return Response(await render_template("portal/_site_controls.html", site=site, controls=controls, done=True))
