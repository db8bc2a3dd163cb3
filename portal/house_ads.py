"""A site's house ads and floors in the portal (the "House ads and floors" section of its page): add and delete
house ads, set the floors; the rules are ``adnet.delivery.house_ads``'s, the same as the API's.

The placement floors are one text area, a line per placement: its label and its floor (``sidebar 0.5``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from quart import Response, render_template

from adnet.accounts.models import MemberRole, Site
from adnet.accounts.sites import owned_site
from adnet.core.errors import DomainError
from adnet.core.inputs import parse
from adnet.delivery import house_ads
from adnet.delivery.commands import NewHouseAd, SiteFloors
from portal.forms import command_of
from portal.pages import account_form, form_error, portal_blueprint, see_other, wants_fragment
from portal.sites import section_url, site_context
from portal.views import Refused, Sent, form_view
from web.sessions import current_wallet

blueprint = portal_blueprint("house_ads")

SECTION = "portal/_house_ads.html"


async def house_ads_context(site: Site, **extra: Any) -> dict[str, Any]:
    """What the section shows: the site's floors and its house ads with their counts."""
    return {"site": site, "house_ads": await house_ads.listed(site), **extra}


async def _section(site_id: str, done: str = "") -> Response:
    """The section again for htmx, saying what was ``done``; a 303 to the site's page otherwise."""
    if not wants_fragment():
        return see_other(section_url(site_id, "controls"))
    site = await owned_site(current_wallet(), site_id, MemberRole.VIEWER)
    return Response(await render_template(SECTION, **await house_ads_context(site, done=done)))


def _refused(form_name: str, values: Callable[[Sent], dict[str, str]]) -> Refused:
    """The section again with the refusal beside the form ``form_name``, filled with its ``values`` as sent."""
    async def refused(error: DomainError, sent: Sent, site_id: str, **_: str) -> Response:
        site = await owned_site(sent.wallet, site_id, MemberRole.VIEWER)
        return await form_error(SECTION, "#house-ads", error, "portal/site.html",
                                lambda: site_context(site, sent.run, "controls"),
                                **await house_ads_context(site, failed_form=form_name, values=values(sent)))

    return refused


def _house_ad_values(sent: Sent) -> dict[str, str]:
    return sent.values("bannerUrl", "targetUrl", "description", "size")


def _floor_values(sent: Sent) -> dict[str, str]:
    return {"floorCpm": sent.form.get("floorCpm", "").strip(), "placementFloors": sent.form.get("placementFloors", "")}


def placement_floors(text: str) -> dict[str, str]:
    """The text area's lines as placement label -> floor (a line without a floor gives "", refused by the
    command naming its placement)."""
    floors: dict[str, str] = {}
    for line in text.splitlines():
        label, _, amount = line.replace("=", " ").strip().partition(" ")
        if label:
            floors[label] = amount.strip()
    return floors


@blueprint.post("/portal/sites/<site_id>/house-ads")
@account_form
@form_view(_refused("house-ad", _house_ad_values))
async def add_house_ad(sent: Sent, site_id: str) -> Response:
    """Add a house ad; a refused field is shown beside the form."""
    await house_ads.add_house_ad(sent.wallet, site_id, command_of(NewHouseAd, _house_ad_values(sent)), sent.now,
                                 sent.run.banners.policy)
    return await _section(site_id)


@blueprint.post("/portal/sites/<site_id>/house-ads/<house_ad_id>/delete")
@account_form
async def delete_house_ad(site_id: str, house_ad_id: str) -> Response:
    """Delete a house ad; it stops serving at once."""
    await house_ads.delete_house_ad(current_wallet(), site_id, house_ad_id)
    return await _section(site_id)


@blueprint.post("/portal/sites/<site_id>/floors")
@account_form
@form_view(_refused("floors", _floor_values))
async def set_floors(sent: Sent, site_id: str) -> Response:
    """Replace the site's floors; a refused floor is shown beside its field."""
    values = _floor_values(sent)
    floors = parse(SiteFloors, {"floorCpm": values["floorCpm"] or "0",
                                "placementFloors": placement_floors(values["placementFloors"])})
    await house_ads.set_floors(sent.wallet, site_id, floors)
    return await _section(site_id, "Floors saved.")
