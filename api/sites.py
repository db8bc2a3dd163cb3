"""Managing a publisher's sites under /api/publishers/sites/<siteId>: rename, deactivate, reactivate, delete (rules
in adnet.accounts.sites and adnet.money.closing).

A session or an API key with ``sites:manage``; the wallet named in the body must be the signed-in one and own the
site (403 ``not_owner``). A deleted site answers 409 ``site_deleted``.
"""

from __future__ import annotations

from quart import Blueprint, Response
from quart_rate_limiter import rate_limit
from quart_schema import document_response

from adnet.accounts import sites
from adnet.accounts.commands import ApiKeyScope, SiteRename
from adnet.accounts.models import Site
from adnet.core.inputs import Command, WalletAddress
from adnet.money import closing
from api.http import answer, services, with_body
from api.ratelimit import settings_limit
from api.schemas import Schema, Time, refusals
from api.sessions import named_wallet, require_account

blueprint = Blueprint("api_sites", __name__, url_prefix="/api")

ACCOUNT_LIMIT = settings_limit("rate_limit_account")


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
async def delete(site_id: str, data: SiteAction) -> Response:
    """Delete the site once nothing is owed to it: it stops serving, gives up its verified domain and leaves the
    sites list; its records stay, and money that reaches it later stays withdrawable by its id. 409
    ``site_has_balance`` (with ``claimable`` per token and ``pendingWithdrawals``) while it holds a balance or
    unredeemed withdrawals. Registering the domain again restores it."""
    site = await closing.delete_site(named_wallet(data.wallet), site_id, services().clock.now())
    return answer(managed_site_out(site))
