"""A site's house ads and floors under /api/publishers/sites/<siteId> (rules in adnet.delivery.house_ads).

A session, or an API key with ``reports:read`` to read and ``sites:manage`` to change (docs/auth.md); a change
names the signed-in wallet, which must manage the site (403 ``not_owner``); reading needs a member's view of it. A
deleted site answers 409 ``site_deleted`` to changes.
"""

from __future__ import annotations

from datetime import datetime

from pydantic import Field
from quart import Blueprint, Response
from quart_rate_limiter import rate_limit
from quart_schema import document_response

from adnet.accounts.commands import ApiKeyScope
from adnet.accounts.models import MemberRole, Site
from adnet.accounts.sites import owned_site
from adnet.delivery import house_ads
from adnet.delivery.commands import NewHouseAd, SiteFloors
from adnet.services import Services
from api.http import answer, with_body
from api.schemas import AmountText, Schema, Time, refusals
from api.sessions import named_wallet, require_account
from api.sites import SiteAction
from web.limits import ACCOUNT_LIMIT
from web.sessions import current_wallet

blueprint = Blueprint("api_house_ads", __name__, url_prefix="/api")


class HouseAdRequest(NewHouseAd, SiteAction):
    """The house ad to add: its image, landing page, description and size."""


class FloorsRequest(SiteFloors, SiteAction):
    """The site's floors, replacing the ones it had."""


class HouseAdItemOut(Schema):
    """One of the site's own banners."""

    house_ad_id: str
    banner_url: str
    target_url: str
    description: str
    size: str
    created_at: Time
    impressions: int = Field(description="impressions its site's pages reported so far (counted, never billed)")
    clicks: int


class HouseAdsOut(Schema):
    site_id: str
    house_ads: list[HouseAdItemOut]


class FloorsOut(Schema):
    """The site's floors in G$ per 1000 impressions ("0": none)."""

    site_id: str
    floor_cpm: AmountText
    placement_floors: dict[str, AmountText] = Field(description="placement label -> its floor, replacing floorCpm")


def house_ad_out(listed: house_ads.Listed) -> HouseAdItemOut:
    house_ad = listed.house_ad
    return HouseAdItemOut(house_ad_id=house_ad.id, banner_url=house_ad.banner_url, target_url=house_ad.target_url,
                          description=house_ad.description, size=f"{house_ad.width}x{house_ad.height}",
                          created_at=house_ad.created_at, impressions=listed.impressions, clicks=listed.clicks)


def floors_out(site: Site) -> FloorsOut:
    return FloorsOut(site_id=site.id, floor_cpm=int(site.floor_cpm),
                     placement_floors={label: int(amount) for label, amount in sorted(site.placement_floors.items())})


@blueprint.get("/publishers/sites/<site_id>/house-ads")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_account(ApiKeyScope.REPORTS)
@document_response(HouseAdsOut)
@refusals(403, 404)
async def list_house_ads(site_id: str) -> Response:
    """The site's house ads, oldest first: shown in banner slots that no paid campaign fills."""
    found = await house_ads.house_ads(current_wallet(), site_id)
    return answer(HouseAdsOut(site_id=site_id, house_ads=[house_ad_out(house_ad) for house_ad in found]))


@blueprint.post("/publishers/sites/<site_id>/house-ads")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_account(ApiKeyScope.SITES)
@with_body(HouseAdRequest)
@document_response(HouseAdItemOut, 201)
@refusals(400, 403, 404, 409)
async def add_house_ad(site_id: str, data: HouseAdRequest, run: Services, now: datetime) -> Response:
    """Add a house ad (served at once; its events counted, never billed). Its ``bannerUrl`` follows the rule of
    every banner: https in production (400 ``insecure_url``). 409 ``too_many_house_ads`` past 20."""
    added = await house_ads.add_house_ad(named_wallet(data.wallet), site_id, data, now,
                                         run.banners.policy)
    return answer(house_ad_out(house_ads.Listed(added)), 201)


@blueprint.post("/publishers/sites/<site_id>/house-ads/<house_ad_id>/delete")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_account(ApiKeyScope.SITES)
@with_body(SiteAction)
@document_response(HouseAdsOut)
@refusals(400, 403, 404, 409)
async def delete_house_ad(site_id: str, house_ad_id: str, data: SiteAction) -> Response:
    """Delete a house ad; it stops serving at once. Answers the site's remaining house ads."""
    wallet = named_wallet(data.wallet)
    await house_ads.delete_house_ad(wallet, site_id, house_ad_id)
    remaining = await house_ads.house_ads(wallet, site_id)
    return answer(HouseAdsOut(site_id=site_id, house_ads=[house_ad_out(house_ad) for house_ad in remaining]))


@blueprint.get("/publishers/sites/<site_id>/floors")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_account(ApiKeyScope.REPORTS)
@document_response(FloorsOut)
@refusals(403, 404)
async def floors(site_id: str) -> Response:
    """The site's floors: the least eCPM a paid campaign must offer to be served there."""
    return answer(floors_out(await owned_site(current_wallet(), site_id, MemberRole.VIEWER)))


@blueprint.put("/publishers/sites/<site_id>/floors")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_account(ApiKeyScope.SITES)
@with_body(FloorsRequest)
@document_response(FloorsOut)
@refusals(400, 403, 404, 409)
async def set_floors(site_id: str, data: FloorsRequest) -> Response:
    """Replace the site's floors: ``floorCpm`` for the whole site ("0" for none) and ``placementFloors``, per
    placement label a floor that replaces it there. A paid campaign whose eCPM (its CPM plus its CPC at a 0.2 %
    click-through rate) is below the slot's floor is not served there."""
    return answer(floors_out(await house_ads.set_floors(named_wallet(data.wallet), site_id, data)))
