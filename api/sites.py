"""Managing a publisher's sites under /api/publishers/sites/<siteId>: rename, deactivate, reactivate, delete (rules
in adnet.accounts.sites and adnet.money.closing), and the controls of what a site shows (adnet.delivery.controls).

A session or an API key with ``sites:manage``; the wallet named in the body must be the signed-in one and own the
site (403 ``not_owner``). A deleted site answers 409 ``site_deleted``. Reading the controls takes ``reports:read``
and any member.
"""

from __future__ import annotations

from datetime import datetime

from pydantic import Field
from quart import Blueprint, Response
from quart_rate_limiter import rate_limit
from quart_schema import document_response

from adnet.accounts import sites
from adnet.accounts.commands import ApiKeyScope, SiteContent, SiteRename
from adnet.accounts.content_taxonomy import categories_of
from adnet.accounts.models import Site
from adnet.campaigns import taxonomy
from adnet.core.inputs import Command, WalletAddress
from adnet.delivery.controls import SiteControls, set_controls, site_controls
from adnet.money import closing
from api.categories import ContentCategoryOut, content_category_out
from api.http import answer, with_body
from api.schemas import Schema, Time, refusals
from api.sessions import named_wallet, require_account
from web.limits import ACCOUNT_LIMIT
from web.sessions import current_wallet

blueprint = Blueprint("api_sites", __name__, url_prefix="/api")


class SiteAction(Command):
    """The wallet whose site this is: the signed-in one."""

    wallet: WalletAddress


class RenameRequest(SiteRename, SiteAction):
    """The site's new name."""


class ManagedSiteOut(Schema):
    """A site's settings after the change: ``active`` says whether it is served, ``deletedAt`` when it was
    deleted."""

    site_id: str
    domain: str
    name: str
    active: bool
    deleted_at: Time | None


def managed_site_out(site: Site) -> ManagedSiteOut:
    return ManagedSiteOut(site_id=site.id, domain=site.domain, name=site.name, active=site.active,
                          deleted_at=site.deleted_at)


@blueprint.patch("/publishers/sites/<site_id>")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_account(ApiKeyScope.SITES)
@with_body(RenameRequest)
@document_response(ManagedSiteOut)
@refusals(400, 404, 409)
async def rename(site_id: str, data: RenameRequest) -> Response:
    """Rename the site (``name`` at most 120 characters; empty for none)."""
    return answer(managed_site_out(await sites.rename_site(named_wallet(data.wallet), site_id, data)))


class ContentRequest(SiteContent, SiteAction):
    """The site's content categories."""


class ContentOut(Schema):
    """A site's own content categories, IAB Content Taxonomy entries."""

    site_id: str
    content_categories: list[ContentCategoryOut]


@blueprint.put("/publishers/sites/<site_id>/content")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_account(ApiKeyScope.SITES)
@with_body(ContentRequest)
@document_response(ContentOut)
@refusals(400, 404, 409)
async def set_content(site_id: str, data: ContentRequest) -> Response:
    """Replace the site's content categories (at most 10 IAB Content Taxonomy 3.1 ids; ``GET
    /api/content-categories`` lists them; 400 ``unknown_content_category`` for another)."""
    site = await sites.set_content_categories(named_wallet(data.wallet), site_id, data)
    return answer(ContentOut(site_id=site.id, content_categories=[
        content_category_out(entry) for entry in categories_of(site.content_categories)]))


@blueprint.post("/publishers/sites/<site_id>/<any(deactivate, reactivate):action>")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_account(ApiKeyScope.SITES)
@with_body(SiteAction)
@document_response(ManagedSiteOut)
@refusals(400, 404, 409)
async def switch(site_id: str, action: str, data: SiteAction) -> Response:
    """``deactivate``: stop serving the site at once (serve answers 404 for it and its events are not recorded),
    its balance and records unchanged; ``reactivate``: serve it again. Repeating either changes nothing."""
    site = await sites.set_site_active(named_wallet(data.wallet), site_id, action == "reactivate")
    return answer(managed_site_out(site))


@blueprint.post("/publishers/sites/<site_id>/delete")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_account(ApiKeyScope.SITES)
@with_body(SiteAction)
@document_response(ManagedSiteOut)
@refusals(400, 404, 409)
async def delete(site_id: str, data: SiteAction, now: datetime) -> Response:
    """Delete the site once nothing is owed to it: it stops serving, gives up its verified domain and leaves the
    sites list; its records stay, and money that reaches it later stays withdrawable by its id. 409
    ``site_has_balance`` (with ``claimable`` per token and ``pendingWithdrawals``) while it holds a balance or
    unredeemed withdrawals. Registering the domain again restores it."""
    site = await closing.delete_site(named_wallet(data.wallet), site_id, now)
    return answer(managed_site_out(site))


class ControlsRequest(SiteControls, SiteAction):
    """The site's controls, replacing the ones it had."""


class ControlsOut(Schema):
    """A site's controls: what it blocks, and whether it shows attached tasks, units and each task kind."""

    site_id: str
    blocked_advertisers: list[str]
    blocked_campaigns: list[str]
    blocked_categories: list[str]
    blocked_category_iab_ids: list[str] = Field(description="the IAB Ad Product Taxonomy 2.0 id of each blocked "
                                                            "category, in the same order (OpenRTB bcat)")
    attached_tasks: bool
    units: bool
    refused_task_kinds: list[str]


def controls_out(site: Site, controls: SiteControls) -> ControlsOut:
    return ControlsOut(site_id=site.id, blocked_category_iab_ids=[taxonomy.iab_id(category)
                                                                  for category in controls.blocked_categories],
                       **controls.model_dump(mode="json", by_alias=False))


@blueprint.get("/publishers/sites/<site_id>/controls")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_account(ApiKeyScope.REPORTS)
@document_response(ControlsOut)
@refusals(403, 404)
async def controls(site_id: str) -> Response:
    """The site's controls: the advertisers, campaigns and categories it blocks, and the kinds it refuses."""
    return answer(controls_out(*await site_controls(current_wallet(), site_id)))


@blueprint.put("/publishers/sites/<site_id>/controls")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_account(ApiKeyScope.SITES)
@with_body(ControlsRequest)
@document_response(ControlsOut)
@refusals(400, 404, 409)
async def replace_controls(site_id: str, data: ControlsRequest) -> Response:
    """Replace the site's controls; serving applies them at once, from memory. Blocked advertisers
    (``blockedAdvertisers``, ``adv_…``), campaigns (``blockedCampaigns``, ``cmp_…``) and categories
    (``blockedCategories``) are never shown on the site; ``attachedTasks: false`` shows banners without their tasks,
    ``units: false`` shows no standalone polls, feedback forms or surveys, and ``refusedTaskKinds`` leaves out tasks
    of those kinds, attached or standalone."""
    controls = SiteControls.model_validate(data.model_dump(by_alias=False, exclude={"wallet"}))
    return answer(controls_out(*await set_controls(named_wallet(data.wallet), site_id, controls)))
