"""adnet as an advertising system, on a site's page: the ads.txt line that authorises adnet to sell the site (and
whether the last re-check found it), and how ``/sellers.json`` lists the site's publisher, which its owner changes
here (rules in ``adnet.accounts.sellers``, the same as the API's)."""

from __future__ import annotations

from quart import Response, render_template, url_for

from adnet.accounts import sellers, sites
from adnet.accounts.models import MemberRole
from adnet.accounts.sellers import Confidentiality
from adnet.core.errors import DomainError
from portal.pages import account_form, form_error, portal_blueprint, see_other, wants_fragment
from portal.sites import site_context
from portal.views import Sent, form_view

blueprint = portal_blueprint("sellers")
FRAGMENT = "portal/_site_ads_txt.html"


async def _refused(error: DomainError, sent: Sent, site_id: str) -> Response:
    site = await sites.owned_site(sent.wallet, site_id, MemberRole.VIEWER)
    return await form_error(FRAGMENT, "#site-ads-txt", error, "portal/site.html", lambda: site_context(site, sent.run),
                            site=site, instructions=sent.run.site_checks.instructions(site))


@blueprint.post("/portal/sites/<site_id>/seller")
@account_form
@form_view(_refused)
async def set_confidential(sent: Sent, site_id: str) -> Response:
    """List the site's publisher in sellers.json as confidential or by name (its owners only): htmx gets the section
    back, a browser without JavaScript a 303 to the site page."""
    site = await sites.owned_site(sent.wallet, site_id, MemberRole.OWNER)
    site.publisher = await sellers.set_confidential(site.publisher, sent.command(Confidentiality).confidential)
    if not wants_fragment():
        return see_other(url_for("portal_sites.site_page", site_id=site.id))
    return Response(await render_template(FRAGMENT, site=site, instructions=sent.run.site_checks.instructions(site),
                                          done=True))
