"""Publishers and their sites: registration, renaming, switching serving off and on, and finding a site a wallet
owns (deleting one is ``adnet.money.closing``'s, as it depends on what the site is owed).

A publisher is a wallet; the wallet's first registration creates its publisher record, later ones add sites.
Domains are stored in one canonical form (``adnet.accounts.commands.normalize_domain``), unique per publisher in
the database, so a wallet registers a domain once however it is spelled and however many of its requests race.
Registering proves nothing, so it never blocks another wallet: several may register one domain, and the one that
proves it holds it (``adnet.accounts.ownership``). In production a name no one can own publicly (an IP address,
a special-use name such as ``localhost``, ``.test``, ``example.com`` or anything under ``.arpa``:
``adnet.accounts.special_names``) is refused. A site's figures and money are read in ``adnet.reporting``.

A deactivated site is not served from the moment the change is announced (``adnet.core.changes``: the serving
index drops it) and its events are refused as for an unknown site; reactivating it serves it again. A deleted site
(``deleted_at``) is out of the owner's listings and cannot be managed; registering its domain again restores it,
with its history.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime

from tortoise.exceptions import IntegrityError
from tortoise.transactions import in_transaction

from adnet.accounts.commands import (
    InvalidDomain,
    SiteContent,
    SiteRegistration,
    SiteRename,
    normalize_domain,
    special_use,
)
from adnet.accounts.members import require_role, role_in
from adnet.accounts.models import MemberRole, Publisher, Site
from adnet.core import changes
from adnet.core.errors import Conflict, Invalid, NotFound
from adnet.core.ids import has_prefix, new_id

log = logging.getLogger(__name__)

SPECIAL_USE_REFUSALS = {
    "ip_address": ("ip_address_domain", "An IP address is not a site's domain; register the site's DNS name."),
    "reserved_name": ("reserved_domain", "This name is reserved (for testing, documentation, local networks or the "
                                         "internet's infrastructure) and is no one's public site; register the "
                                         "site's public domain."),
}


@dataclass(frozen=True)
class Registration:
    """A registered site; ``created`` is False when the wallet had registered this domain before."""

    site: Site
    publisher: Publisher
    created: bool


def check_registrable(domain: str, *, allow_special_names: bool) -> None:
    """Refuse a canonical domain that cannot be registered here: unless ``allow_special_names`` (development and
    test), Invalid ``ip_address_domain`` or ``reserved_domain`` for a name no one can own publicly."""
    kind = None if allow_special_names else special_use(domain)
    if kind is not None:
        code, message = SPECIAL_USE_REFUSALS[kind]
        raise Invalid(code, message, field="domain")


async def register_site(wallet: str, registration: SiteRegistration, now: datetime, *,
                        allow_special_names: bool) -> Registration:
    """Register the domain for ``wallet`` (already proven by its session), unverified, creating the wallet's
    publisher record on its first registration. Registering a domain the wallet registered before returns that
    site (``created`` False); other wallets' registrations of the domain, verified or not, do not matter here.
    ``allow_special_names`` lets development register ``localhost`` and the like (``check_registrable``)."""
    domain, name = registration.domain, registration.name
    check_registrable(domain, allow_special_names=allow_special_names)
    try:
        async with in_transaction():
            publisher = await _publisher_of(wallet, now)
            site = await Site.create(id=new_id("site"), publisher=publisher, domain=domain, name=name,
                                     created_at=now)
    except IntegrityError:
        existing = await Site.get_or_none(domain=domain, publisher__wallet=wallet).select_related("publisher")
        if existing is None:
            raise
        if existing.deleted_at is not None and await Site.filter(id=existing.id, deleted_at__isnull=False).update(
                deleted_at=None, active=True, name=name):
            log.info("site restored site=%s domain=%s", existing.id, domain)
            changes.announce(existing.id)
            restored = await Site.get(id=existing.id).select_related("publisher")
            return Registration(restored, restored.publisher, created=True)
        return Registration(existing, existing.publisher, created=False)
    log.info("site registered site=%s publisher=%s domain=%s", site.id, publisher.id, domain)
    changes.announce(site.id)
    return Registration(site, publisher, created=True)


async def owned_site(wallet: str, site_id: object, need: MemberRole = MemberRole.MANAGER) -> Site:
    """The site ``site_id`` when ``wallet`` owns its account or is a member with at least ``need`` (a manager
    unless said: reads ask for a viewer): NotFound for no such site, Forbidden ``not_owner`` for another wallet's,
    ``insufficient_role`` for a member whose role is below ``need`` (``adnet.accounts.members``)."""
    if not isinstance(site_id, str) or not has_prefix(site_id, "site"):
        raise NotFound.of("site")
    site = await Site.get_or_none(id=site_id).select_related("publisher")
    if site is None:
        raise NotFound.of("site")
    require_role(await role_in(site.publisher, wallet), need, "site")
    return site


def site_deleted() -> Conflict:
    """The refusal of managing a deleted site."""
    return Conflict("site_deleted", "This site was deleted; register its domain again to restore it.")


async def managed_site(wallet: str, site_id: object) -> Site:
    """The site ``site_id`` when ``wallet`` owns it and has not deleted it: the refusals of ``owned_site``, and
    Conflict ``site_deleted`` for a deleted one."""
    site = await owned_site(wallet, site_id)
    if site.deleted_at is not None:
        raise site_deleted()
    return site


async def rename_site(wallet: str, site_id: object, rename: SiteRename) -> Site:
    """Give the wallet's site a new name (the refusals of ``managed_site``)."""
    site = await managed_site(wallet, site_id)
    await Site.filter(id=site.id).update(name=rename.name)
    site.name = rename.name
    return site


async def set_content_categories(wallet: str, site_id: object, content: SiteContent) -> Site:
    """Replace the content categories of the wallet's site (the refusals of ``managed_site``): what its pages are
    about, as IAB Content Taxonomy ids. Serving does not read them; they describe the site to the publisher's
    buyers and in adnet's pages."""
    site = await managed_site(wallet, site_id)
    await Site.filter(id=site.id).update(content_categories=content.content_categories)
    site.content_categories = list(content.content_categories)
    return site


async def set_site_active(wallet: str, site_id: object, active: bool) -> Site:
    """Switch serving of the wallet's site off (``active`` False) or on again, announced to the serving index at
    once. Setting the state it has changes nothing."""
    site = await managed_site(wallet, site_id)
    if await Site.filter(id=site.id, active=not active, deleted_at=None).update(active=active):
        log.info("site %s site=%s", "reactivated" if active else "deactivated", site.id)
        changes.announce(site.id)
    site.active = active
    return site


async def _publisher_of(wallet: str, now: datetime) -> Publisher:
    """The wallet's publisher record, created by an insert guarded by the unique wallet (in a savepoint, so a lost
    race leaves the caller's transaction usable)."""
    publisher = await Publisher.get_or_none(wallet=wallet)
    if publisher is not None:
        return publisher
    try:
        async with in_transaction():
            publisher = await Publisher.create(id=new_id("pub"), wallet=wallet, created_at=now)
    except IntegrityError:
        return await Publisher.get(wallet=wallet)
    log.info("publisher created publisher=%s wallet=%s", publisher.id, wallet)
    return publisher


async def sites_of_domains(domains: list[str]) -> dict[str, list[str]]:
    """The ids of the sites registered under each of ``domains`` (written as a publisher would: any case, with or
    without a scheme), by the domain as given; a domain no site has maps to an empty list. Several wallets may
    register one domain, so a domain can name several sites."""
    canonical = {domain: _canonical(domain) for domain in domains}
    found: dict[str, list[str]] = {}
    for site_id, domain in await Site.filter(domain__in=[name for name in canonical.values() if name]).order_by(
            "id").values_list("id", "domain"):
        found.setdefault(str(domain), []).append(str(site_id))
    return {given: found.get(name or "", []) for given, name in canonical.items()}


async def domains_of(site_ids: list[str]) -> dict[str, str]:
    """The domain of each of ``site_ids`` that exists, by id."""
    if not site_ids:
        return {}
    return {str(site_id): str(domain)
            for site_id, domain in await Site.filter(id__in=site_ids).values_list("id", "domain")}


async def verified_domains(limit: int = 500) -> list[str]:
    """The domains verified sites hold, alphabetically (at most ``limit``; deleted sites left out): what an
    advertiser picks sites from."""
    return [str(domain) for domain in await Site.filter(verified=True, deleted_at=None).order_by("domain").limit(
        limit).values_list("domain", flat=True)]


def _canonical(domain: str) -> str | None:
    try:
        return normalize_domain(domain)
    except InvalidDomain:
        return None
