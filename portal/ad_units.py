"""A site's ad units in the portal (the "Ad units" section of its page): the builder writes a unit's snippet and
previews what it would show as its fields change, then creates or saves the unit; units are edited and deleted from
their rows. The rules are ``adnet.delivery.ad_units``', the same as the API's."""

from __future__ import annotations

from quart import Response, render_template, request

from adnet.accounts import sites
from adnet.accounts.models import MemberRole, Site
from adnet.core.errors import DomainError
from adnet.delivery import ad_units
from adnet.delivery.ad_units import AdUnitSettings
from adnet.services import Services
from portal.pages import account_form, account_page, page, portal_blueprint, see_other, wants_fragment
from portal.sites import section_url, site_context
from portal.unit_builder import Builder, units_context
from portal.views import Sent, form_view
from web.context import injected
from web.errors import status_of
from web.sessions import current_wallet

blueprint = portal_blueprint("ad_units")
UNITS = "/portal/sites/<site_id>/ad-units"


async def _section(site: Site, run: Services, done: str) -> Response:
    """The section again with ``done`` for htmx; a 303 to the site's page otherwise."""
    if not wants_fragment():
        return see_other(section_url(site.id, "embed", _anchor="ad-units"))
    return Response(await render_template("portal/_ad_units.html", **await units_context(site, run, units_done=done)))


async def _builder(site: Site, run: Services, builder: Builder, status: int = 200, unit_error: DomainError | None = None
                   ) -> Response:
    """The builder (htmx, retargeted to it) or the whole site page with it."""
    if wants_fragment():
        context = await units_context(site, run, builder, unit_error=unit_error)
        response = Response(await render_template("portal/_unit_builder.html", **context), status)
        response.headers["HX-Retarget"] = "#unit-builder"
        response.headers["HX-Reswap"] = "outerHTML"
        return response
    full = {**await site_context(site, run, "embed"),
            **await units_context(site, run, builder, unit_error=unit_error)}
    return Response(await render_template("portal/site.html", **full), status)


async def _unit_refused(error: DomainError, sent: Sent, site_id: str, unit_id: str | None = None) -> Response:
    site = await sites.owned_site(sent.wallet, site_id)
    return await _builder(site, sent.run, Builder.of_form(sent.form, unit_id), status_of(error), unit_error=error)


@blueprint.post(UNITS)
@blueprint.post(f"{UNITS}/<unit_id>")
@account_form
@form_view(_unit_refused)
async def save_unit(sent: Sent, site_id: str, unit_id: str | None = None) -> Response:
    """Create a unit from the builder, or save the one it edits; a refusal is marked beside its field."""
    wallet, now, settings = sent.wallet, sent.now, sent.command(AdUnitSettings)
    unit = (await ad_units.replace_unit(wallet, site_id, unit_id, settings, now) if unit_id
            else await ad_units.create_unit(wallet, site_id, settings, now))
    site = await sites.owned_site(wallet, site_id)
    return await _section(site, sent.run, f"Saved {unit.name}: copy its snippet into your pages."
                          if unit_id else f"Created {unit.name}: copy its snippet into your pages.")


@blueprint.post(f"{UNITS}/preview")
@account_form
@injected
async def preview_unit(site_id: str, run: Services) -> Response:
    """The snippet and what the builder's settings would show now (htmx: the preview pane; without JavaScript: the
    page with the builder as it was sent); settings the API would refuse are said in the pane."""
    form = await request.form
    site = await sites.owned_site(current_wallet(), site_id, MemberRole.VIEWER)
    builder = Builder.of_form(form, form.get("unitId") or None)
    if not wants_fragment():
        return await _builder(site, run, builder)
    context = await units_context(site, run, builder)
    status = status_of(context["preview_error"]) if context["preview_error"] else 200
    return Response(await render_template("portal/_unit_preview.html", **context), status)


@blueprint.get(f"{UNITS}/<unit_id>/edit")
@account_page
@injected
async def edit_unit(site_id: str, unit_id: str, run: Services) -> tuple[str, int]:
    """The builder filled with a unit, to change it (the site page around it without JavaScript)."""
    site, unit = await ad_units.site_unit(current_wallet(), site_id, unit_id)
    context = await units_context(site, run, Builder.of_unit(unit))
    if wants_fragment():
        return await page("portal/site.html", "portal/_unit_builder.html", **context)
    return await page("portal/site.html", "portal/site.html", **{**await site_context(site, run, "embed"), **context})


@blueprint.post(f"{UNITS}/<unit_id>/delete")
@account_form
@injected
async def delete_unit(site_id: str, unit_id: str, run: Services) -> Response:
    """Delete a unit; the section is shown again."""
    unit = await ad_units.delete_unit(current_wallet(), site_id, unit_id)
    return await _section(await sites.owned_site(current_wallet(), site_id), run, f"Deleted {unit.name}.")
