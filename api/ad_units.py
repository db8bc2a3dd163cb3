"""A site's ad units under /api/publishers/sites/<siteId>/ad-units (rules in adnet.delivery.ad_units): list, read,
create, replace and delete the named slots whose embed snippets adnet writes.

Reading takes any member of the site's account (and ``reports:read`` for an API key); changing takes a manager
(``sites:manage``), with the wallet named in the body the signed-in one (403 ``not_owner``). A deleted site answers
409 ``site_deleted`` to changes.
"""

from __future__ import annotations

from datetime import datetime

from quart import Blueprint, Response
from quart_rate_limiter import rate_limit
from quart_schema import document_response

from adnet.accounts.commands import ApiKeyScope
from adnet.delivery import ad_units
from adnet.delivery.ad_units import AdUnitSettings
from adnet.delivery.models import AdUnit
from adnet.delivery.sdk import unit_snippet
from api.http import answer, with_body
from api.schemas import Schema, Time, refusals
from api.sessions import named_wallet, require_account
from api.sites import SiteAction
from web.limits import ACCOUNT_LIMIT
from web.sessions import current_wallet

blueprint = Blueprint("api_ad_units", __name__, url_prefix="/api")

UNITS = "/publishers/sites/<site_id>/ad-units"


class AdUnitRequest(AdUnitSettings, SiteAction):
    """The unit's whole settings."""


class AdUnitOut(Schema):
    """A unit, with the slot element to paste where it should appear (after the script tag, docs/sdk.md)."""

    unit_id: str
    site_id: str
    name: str
    kinds: list[str]
    size: str | None
    attached_tasks: bool
    placement: str
    house_ads: bool
    snippet: str
    created_at: Time
    updated_at: Time


class AdUnitsOut(Schema):
    site_id: str
    units: list[AdUnitOut]


class DeletedAdUnitOut(Schema):
    unit_id: str
    deleted: bool


def ad_unit_out(unit: AdUnit) -> AdUnitOut:
    settings = ad_units.settings_of(unit)
    return AdUnitOut(unit_id=unit.id, site_id=unit.site_id, name=unit.name,
                     kinds=list(settings.kinds), size=unit.size, attached_tasks=unit.attached_tasks,
                     placement=unit.placement, house_ads=unit.house_ads, snippet=unit_snippet(settings),
                     created_at=unit.created_at, updated_at=unit.updated_at)


def _settings(data: AdUnitRequest) -> AdUnitSettings:
    return AdUnitSettings.model_validate(data.model_dump(by_alias=False, exclude={"wallet"}))


@blueprint.get(UNITS)
@rate_limit(limits=ACCOUNT_LIMIT)
@require_account(ApiKeyScope.REPORTS)
@document_response(AdUnitsOut)
@refusals(403, 404)
async def list_units(site_id: str) -> Response:
    """The site's units by name, each with its snippet."""
    site, units = await ad_units.site_units(current_wallet(), site_id)
    return answer(AdUnitsOut(site_id=site.id, units=[ad_unit_out(unit) for unit in units]))


@blueprint.post(UNITS)
@rate_limit(limits=ACCOUNT_LIMIT)
@require_account(ApiKeyScope.SITES)
@with_body(AdUnitRequest)
@document_response(AdUnitOut, 201)
@refusals(400, 403, 404, 409)
async def create_unit(site_id: str, data: AdUnitRequest, now: datetime) -> Response:
    """A new unit: ``name`` (unique on the site: 409 ``unit_name_taken``), ``kinds`` (``BANNER``, ``POLL``,
    ``FEEDBACK``, ``SURVEY``, at least one), ``size`` (``WIDTHxHEIGHT``, or null for a responsive slot),
    ``attachedTasks`` and ``placement``; a size and attached tasks only for a unit that shows banners."""
    unit = await ad_units.create_unit(named_wallet(data.wallet), site_id, _settings(data), now)
    return answer(ad_unit_out(unit), 201)


@blueprint.get(f"{UNITS}/<unit_id>")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_account(ApiKeyScope.REPORTS)
@document_response(AdUnitOut)
@refusals(403, 404)
async def read_unit(site_id: str, unit_id: str) -> Response:
    """One unit of the site, with its snippet."""
    _, unit = await ad_units.site_unit(current_wallet(), site_id, unit_id)
    return answer(ad_unit_out(unit))


@blueprint.put(f"{UNITS}/<unit_id>")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_account(ApiKeyScope.SITES)
@with_body(AdUnitRequest)
@document_response(AdUnitOut)
@refusals(400, 403, 404, 409)
async def replace_unit(site_id: str, unit_id: str, data: AdUnitRequest, now: datetime) -> Response:
    """Replace the unit's settings (the whole of them, as creating takes them). Pages that have its old snippet
    keep it until it is pasted again."""
    unit = await ad_units.replace_unit(named_wallet(data.wallet), site_id, unit_id, _settings(data), now)
    return answer(ad_unit_out(unit))


@blueprint.post(f"{UNITS}/<unit_id>/delete")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_account(ApiKeyScope.SITES)
@with_body(SiteAction)
@document_response(DeletedAdUnitOut)
@refusals(400, 403, 404, 409)
async def delete_unit(site_id: str, unit_id: str, data: SiteAction) -> Response:
    """Delete the unit. Pages that have its snippet keep being served: serving never reads units."""
    unit = await ad_units.delete_unit(named_wallet(data.wallet), site_id, unit_id)
    return answer(DeletedAdUnitOut(unit_id=unit.id, deleted=True))
