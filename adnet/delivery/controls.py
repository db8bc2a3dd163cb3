"""A publisher's controls over what its site shows: the advertisers, campaigns and categories it blocks, and the
kinds of content it refuses (banners' attached tasks, standalone units, each task kind).

They are stored with the site (``Site.controls``), announced with the site's id when they change, and compiled
(``adnet.campaigns.eligibility.controls_of``) into the site's entry of the serving index
(``adnet.delivery.sites.SiteEntry``), so serving applies them from memory: ``narrow`` takes what the site refuses
out of a serve query before candidates are chosen, and the rule every path that serves or pays applies
(``adnet.campaigns.eligibility.refusal``) leaves out what the site blocks or refuses.
"""

from __future__ import annotations

import logging
from typing import Annotated, Any

from pydantic import AfterValidator, Field

from adnet.accounts.models import MemberRole, Site
from adnet.accounts.sites import managed_site, owned_site
from adnet.campaigns.eligibility import Controls
from adnet.campaigns.models import Category
from adnet.core import changes
from adnet.core.inputs import Command, id_of
from adnet.delivery.commands import BANNER, KINDS, ServeQuery
from adnet.tasks.models import TaskKind

log = logging.getLogger(__name__)

MAX_BLOCKED = 500
UNIT_KINDS = frozenset(KINDS) - {BANNER}


def _distinct(items: list[Any]) -> list[Any]:
    return list(dict.fromkeys(items))


AdvertiserIds = Annotated[list[Annotated[str, id_of("adv")]], Field(max_length=MAX_BLOCKED), AfterValidator(_distinct)]
CampaignIds = Annotated[list[Annotated[str, id_of("cmp")]], Field(max_length=MAX_BLOCKED), AfterValidator(_distinct)]


class SiteControls(Command):
    """What a site blocks and refuses; each list replaces the one before (empty: nothing blocked)."""

    blocked_advertisers: AdvertiserIds = Field([], description="advertiser ids (adv_…) never shown")
    blocked_campaigns: CampaignIds = Field([], description="campaign ids (cmp_…) never shown")
    blocked_categories: Annotated[list[Category], AfterValidator(_distinct)] = Field(
        [], description="campaign categories never shown")
    attached_tasks: bool = Field(True, description="false: banners show without their attached tasks")
    units: bool = Field(True, description="false: no standalone polls, feedback forms or surveys")
    refused_task_kinds: Annotated[list[TaskKind], AfterValidator(_distinct)] = Field(
        [], description="task kinds never shown, attached or standalone")


def narrow(controls: Controls, query: ServeQuery) -> ServeQuery:
    """``query`` without what the site refuses (``Controls.accepts``): its attached tasks and the unit kinds it does
    not show."""
    kinds = frozenset(kind for kind in query.kinds if kind == BANNER or controls.accepts(kind))
    attached = query.attached and controls.attached_tasks
    if kinds == query.kinds and attached == query.attached:
        return query
    return query.model_copy(update={"kinds": kinds, "attached": attached})


def stored_controls(stored: dict[str, Any] | None) -> SiteControls:
    """The controls a site stores (its defaults for none)."""
    return SiteControls.model_validate(stored or {})


async def site_controls(wallet: str, site_id: object) -> tuple[Site, SiteControls]:
    """The site's controls, for its owner or any member (the refusals of ``owned_site``)."""
    site = await owned_site(wallet, site_id, MemberRole.VIEWER)
    return site, stored_controls(site.controls)


async def set_controls(wallet: str, site_id: object, controls: SiteControls) -> tuple[Site, SiteControls]:
    """Replace the site's controls (the refusals of ``managed_site``); serving applies them as soon as the change
    is announced."""
    site = await managed_site(wallet, site_id)
    stored = controls.model_dump(mode="json", by_alias=False)
    await Site.filter(id=site.id).update(controls=stored)
    site.controls = stored
    changes.announce(site.id)
    log.info("site controls set site=%s advertisers=%d campaigns=%d categories=%d", site.id,
             len(controls.blocked_advertisers), len(controls.blocked_campaigns), len(controls.blocked_categories))
    return site, controls
