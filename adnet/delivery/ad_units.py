"""Ad units: the named slots a publisher defines for a site, so that its pages' snippets are written by adnet
instead of by hand.

A unit says what may fill the slot (banners, polls, feedback forms, surveys), a banner's size or none (responsive),
whether a banner shows its attached tasks, the placement label serving receives, and whether a banner slot no paid
campaign fills shows one of the site's house ads. Its snippet
(``adnet.delivery.sdk.unit_snippet``) is the slot element with the ``data-`` attributes ``static/sdk.js`` reads
(docs/sdk.md), and ``serve_query`` is the query that slot sends, which the portal's preview asks serving about.
Names are unique per site (the database decides: 409 ``unit_name_taken``). Units are the site owner's notes for its
own pages: serving never reads them, so changing one changes no page that already has its snippet.
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Annotated, Any, Literal, Self

from pydantic import AfterValidator, Field, StringConstraints, model_validator
from tortoise.exceptions import IntegrityError

from adnet.accounts.models import MemberRole, Site
from adnet.accounts.sites import managed_site, owned_site
from adnet.campaigns.commands import MAX_PLACEMENT_LENGTH
from adnet.core.errors import Conflict, NotFound
from adnet.core.ids import has_prefix, new_id
from adnet.core.inputs import Command, Size, rule
from adnet.delivery.commands import BANNER, KINDS, ServeQuery
from adnet.delivery.models import AdUnit

log = logging.getLogger(__name__)

MAX_UNIT_NAME = 120
UnitKind = Literal["BANNER", "POLL", "FEEDBACK", "SURVEY"]


def _in_order(kinds: list[str]) -> list[str]:
    """The kinds once each, in the order of ``KINDS`` (so equal units compare and read alike)."""
    return [kind for kind in KINDS if kind in kinds]


class SlotSettings(Command):
    """What a slot asks for, as its snippet says it: what the portal previews while a unit is being built."""

    kinds: Annotated[list[UnitKind], Field(min_length=1), AfterValidator(_in_order)] = Field(
        description="what may fill the slot: BANNER, POLL, FEEDBACK, SURVEY")
    size: Size | None = Field(None, description="a banner's size WIDTHxHEIGHT; null for a responsive slot")
    attached_tasks: bool = Field(False, description="a banner shows up to two of its campaign's attached tasks")
    placement: Annotated[str, StringConstraints(strip_whitespace=True, max_length=MAX_PLACEMENT_LENGTH)] = Field(
        "", description="where the slot is on the page (sidebar, article-end): campaigns may be limited to it")
    house_ads: bool = Field(True, description="a banner slot no paid campaign fills shows one of the site's house "
                                              "ads; false: it stays empty")

    @model_validator(mode="after")
    def _banner_settings_need_banners(self) -> Self:
        if BANNER not in self.kinds:
            if self.size is not None:
                raise rule("invalid_field", "only a unit that shows banners has a size", at="size")
            if self.attached_tasks:
                raise rule("invalid_field", "only a unit that shows banners shows attached tasks",
                           at="attachedTasks")
            if not self.house_ads:
                raise rule("invalid_field", "only a unit that shows banners turns house ads off", at="houseAds")
        return self


class AdUnitSettings(SlotSettings):
    """A unit as its owner defines it; creating and replacing take the whole of it."""

    name: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_UNIT_NAME)] = Field(
        description="unique on the site, shown in the portal")


def settings_of(unit: AdUnit) -> AdUnitSettings:
    """The settings a stored unit has."""
    return AdUnitSettings(name=unit.name, kinds=list(unit.kinds), size=unit.size, attached_tasks=unit.attached_tasks,
                          placement=unit.placement, house_ads=unit.house_ads)


def serve_query(site_id: str, settings: SlotSettings) -> ServeQuery:
    """What a slot of these settings asks ``GET /api/serve`` (docs/sdk.md), without a viewer."""
    return ServeQuery.model_validate({"siteId": site_id, "kind": ",".join(settings.kinds), "size": settings.size,
                                      "placement": settings.placement,
                                      "attached": "1" if settings.attached_tasks else "0",
                                      "house": "1" if settings.house_ads else "0"})


async def site_units(wallet: str, site_id: object) -> tuple[Site, list[AdUnit]]:
    """The site's units by name, for any of its accounts' members (the refusals of ``owned_site``)."""
    site = await owned_site(wallet, site_id, MemberRole.VIEWER)
    return site, await AdUnit.filter(site_id=site.id).order_by("name", "id")


async def site_unit(wallet: str, site_id: object, unit_id: object) -> tuple[Site, AdUnit]:
    """One unit of the site, for any member; NotFound for a unit of another site."""
    site = await owned_site(wallet, site_id, MemberRole.VIEWER)
    return site, await _unit(site, unit_id)


async def create_unit(wallet: str, site_id: object, settings: AdUnitSettings, now: datetime) -> AdUnit:
    """A new unit on the site (the refusals of ``managed_site``); Conflict ``unit_name_taken`` when the site has
    one of that name."""
    site = await managed_site(wallet, site_id)
    try:
        unit = await AdUnit.create(id=new_id("au"), site=site, **_columns(settings), created_at=now, updated_at=now)
    except IntegrityError as error:
        raise _name_taken(settings) from error
    log.info("ad unit created site=%s unit=%s kinds=%s", site.id, unit.id, ",".join(settings.kinds))
    return unit


async def replace_unit(wallet: str, site_id: object, unit_id: object, settings: AdUnitSettings,
                       now: datetime) -> AdUnit:
    """Give a unit new settings (the refusals of ``managed_site``, NotFound, ``unit_name_taken``)."""
    unit = await _unit(await managed_site(wallet, site_id), unit_id)
    try:
        await AdUnit.filter(id=unit.id).update(**_columns(settings), updated_at=now)
    except IntegrityError as error:
        raise _name_taken(settings) from error
    await unit.refresh_from_db()
    return unit


async def delete_unit(wallet: str, site_id: object, unit_id: object) -> AdUnit:
    """Delete a unit (pages that have its snippet keep working: serving never reads units)."""
    unit = await _unit(await managed_site(wallet, site_id), unit_id)
    await AdUnit.filter(id=unit.id).delete()
    log.info("ad unit deleted site=%s unit=%s", unit.site_id, unit.id)
    return unit


async def _unit(site: Site, unit_id: object) -> AdUnit:
    if not isinstance(unit_id, str) or not has_prefix(unit_id, "au"):
        raise NotFound.of("ad unit")
    unit = await AdUnit.get_or_none(id=unit_id, site_id=site.id)
    if unit is None:
        raise NotFound.of("ad unit")
    return unit


def _columns(settings: AdUnitSettings) -> dict[str, Any]:
    return {"name": settings.name, "kinds": list(settings.kinds), "size": settings.size,
            "attached_tasks": settings.attached_tasks, "placement": settings.placement,
            "house_ads": settings.house_ads}


def _name_taken(settings: AdUnitSettings) -> Conflict:
    return Conflict("unit_name_taken", f"The site already has a unit named {settings.name!r}.", field="name")
