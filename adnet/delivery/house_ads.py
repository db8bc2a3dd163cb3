"""What a publisher sets for its site's slots beyond paid campaigns: house ads and floors.

A house ad is the publisher's own banner (a promotion of its site, a newsletter ...). Serving shows one in a banner
slot that no paid campaign fills (``adnet.delivery.selection.house_ad_for``). The embed reports its impressions and
clicks to ``POST /api/track/house``; they are counted per UTC day in ``HouseAdDaily`` (``record_house_event``) and
never billed: no tracking token, no ledger, no budget. A site holds at most ``MAX_HOUSE_ADS``: the count is
taken with the site's row locked, so concurrent additions cannot pass it.

A floor is the least eCPM (``adnet.delivery.selection.ecpm``, G$ per 1000 impressions) a paid campaign must offer to
be served on the site; a placement's floor replaces the site's for that placement (higher, lower, or 0 for none).
Standalone units and house ads are not priced and are not held to floors.

Every change is announced with the site's id, so the serving index takes it at once (``adnet.core.changes``).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime

from tortoise.functions import Sum
from tortoise.transactions import in_transaction

from adnet.accounts.fetching import FetchPolicy
from adnet.accounts.models import MemberRole, Site
from adnet.accounts.sites import managed_site, owned_site
from adnet.campaigns.banners import check_banner_url
from adnet.core import changes
from adnet.core.errors import Conflict, NotFound
from adnet.core.ids import has_prefix, new_id
from adnet.core.inputs import dimensions
from adnet.db import sql
from adnet.db.sql import Program, Statement
from adnet.delivery.clients import Client
from adnet.delivery.commands import HouseEvent, NewHouseAd, SiteFloors
from adnet.delivery.models import EventType, HouseAd, HouseAdDaily
from adnet.delivery.serving import Server
from adnet.delivery.sites import on_site

log = logging.getLogger(__name__)

MAX_HOUSE_ADS = 20


@dataclass(frozen=True)
class Listed:
    """A house ad with the impressions and clicks its site's pages reported so far."""

    house_ad: HouseAd
    impressions: int = 0
    clicks: int = 0


async def house_ads(wallet: str, site_id: object) -> list[Listed]:
    """The house ads of a site ``wallet`` may read (a viewer at least), oldest first, with their counts."""
    return await listed(await owned_site(wallet, site_id, MemberRole.VIEWER))


async def listed(site: Site) -> list[Listed]:
    """The site's house ads, oldest first, with their counts."""
    counts: dict[tuple[str, str], int] = {
        (house_ad_id, kind): int(events) for house_ad_id, kind, events in await HouseAdDaily.filter(
            site_id=site.id).group_by("house_ad_id", "type").annotate(events=Sum("events")).values_list(
            "house_ad_id", "type", "events")}
    return [Listed(house_ad, counts.get((house_ad.id, EventType.IMPRESSION), 0),
                   counts.get((house_ad.id, EventType.CLICK), 0))
            for house_ad in await HouseAd.filter(site_id=site.id).order_by("created_at", "id")]


async def add_house_ad(wallet: str, site_id: object, house_ad: NewHouseAd, now: datetime,
                       banners: FetchPolicy) -> HouseAd:
    """A new house ad of the wallet's site, served from the moment it is announced; its banner's address is held to
    the rule of every banner (``check_banner_url`` under ``banners``, the policy banners are fetched with: https
    only in production). Conflict ``too_many_house_ads`` when the site holds ``MAX_HOUSE_ADS`` already."""
    site = await managed_site(wallet, site_id)
    check_banner_url(house_ad.banner_url, banners)
    width, height = dimensions(house_ad.size)
    async with in_transaction():
        await Site.select_for_update().get(id=site.id)
        if await HouseAd.filter(site_id=site.id).count() >= MAX_HOUSE_ADS:
            raise Conflict("too_many_house_ads", f"A site holds at most {MAX_HOUSE_ADS} house ads; delete one first.",
                           limit=MAX_HOUSE_ADS)
        added = await HouseAd.create(id=new_id("house"), site_id=site.id, banner_url=house_ad.banner_url,
                                     target_url=house_ad.target_url, description=house_ad.description, width=width,
                                     height=height, created_at=now)
    changes.announce(site.id)
    log.info("house ad added house_ad=%s site=%s", added.id, site.id)
    return added


async def delete_house_ad(wallet: str, site_id: object, house_ad_id: object) -> None:
    """Delete a house ad of the wallet's site; NotFound when the site has no such house ad."""
    site = await managed_site(wallet, site_id)
    if not isinstance(house_ad_id, str) or not has_prefix(house_ad_id, "house") \
            or not await HouseAd.filter(id=house_ad_id, site_id=site.id).delete():
        raise NotFound.of("house ad")
    changes.announce(site.id)
    log.info("house ad deleted house_ad=%s site=%s", house_ad_id, site.id)


async def set_floors(wallet: str, site_id: object, floors: SiteFloors) -> Site:
    """Replace the wallet's site's floors (the site's and every placement's)."""
    site = await managed_site(wallet, site_id)
    placement_floors = {placement: str(amount) for placement, amount in floors.placement_floors.items()}
    await Site.filter(id=site.id).update(floor_cpm=floors.floor_cpm, placement_floors=placement_floors)
    site.floor_cpm, site.placement_floors = floors.floor_cpm, placement_floors
    changes.announce(site.id)
    log.info("floors set site=%s floor=%d placements=%d", site.id, floors.floor_cpm, len(placement_floors))
    return site


async def record_house_event(server: Server, event: HouseEvent, client: Client, now: datetime) -> bool:
    """Count an impression or click of one of the site's house ads; whether it was counted: only from a page of the
    site itself (``on_site``, the check tracking makes: its ``Origin``, else its ``Referer``, on the site's domain),
    and not from a bot's User-Agent. NotFound for an unknown site or a house ad the site does not serve. The site
    and its house ads come from the serving index; the count is one upsert, added to in the database, so
    concurrent reports are all counted."""
    site = await server.site(event.site_id)
    if not any(house_ad.id == event.house_ad_id for house_ad in site.house_ads):
        raise NotFound.of("house ad")
    if client.is_bot or not on_site(site, origin=client.origin, referer=client.referer):
        return False
    await sql.run(_count_program(site.id, event, now))
    return True


_COUNT = ("INSERT INTO house_ad_daily (day, site_id, house_ad_id, type, events) "
          "VALUES (:day, :site_id, :house_ad_id, :type, 1) ON CONFLICT (day, house_ad_id, type) "
          "DO UPDATE SET events = house_ad_daily.events + 1")


def _count_program(site_id: str, event: HouseEvent, now: datetime) -> Program[None]:
    yield Statement(_COUNT, {"day": now.date(), "site_id": site_id, "house_ad_id": event.house_ad_id,
                             "type": event.type.value})
