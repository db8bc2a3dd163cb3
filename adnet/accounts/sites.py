"""Publishers and their sites: registration, and finding a site a wallet owns.

A publisher is a wallet; the wallet's first registration creates its publisher record, later ones add sites.
Domains are stored in one canonical form (``adnet.accounts.commands.normalize_domain``), unique in the database,
so a domain belongs to at most one wallet however it is spelled and however many requests race for it. A site's
figures and money are read in ``adnet.reporting``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime

from tortoise.exceptions import IntegrityError
from tortoise.transactions import in_transaction

from adnet.accounts.commands import SiteRegistration
from adnet.accounts.models import Publisher, Site
from adnet.core.errors import Conflict, Forbidden, NotFound
from adnet.core.ids import has_prefix, new_id

log = logging.getLogger(__name__)



@dataclass(frozen=True)
class Registration:
    """A registered site; ``created`` is False when the wallet had registered this domain before."""

    site: Site
    publisher: Publisher
    created: bool


async def register_site(wallet: str, registration: SiteRegistration, now: datetime) -> Registration:
    """Register the domain for ``wallet`` (already proven by its session), creating the wallet's publisher record
    on its first registration. Registering a domain the wallet holds returns that site (``created`` False);
    a domain another wallet holds: Conflict ``domain_taken``."""
    domain, name = registration.domain, registration.name
    try:
        async with in_transaction():
            publisher = await _publisher_of(wallet, now)
            site = await Site.create(id=new_id("site"), publisher=publisher, domain=domain, name=name,
                                     created_at=now)
    except IntegrityError:
        existing = await Site.get_or_none(domain=domain).select_related("publisher")
        if existing is None:
            raise
        if existing.publisher.wallet != wallet:
            raise Conflict("domain_taken", "This domain is registered by another wallet.", field="domain") from None
        return Registration(existing, existing.publisher, created=False)
    log.info("site registered site=%s publisher=%s domain=%s", site.id, publisher.id, domain)
    return Registration(site, publisher, created=True)


async def owned_site(wallet: str, site_id: object) -> Site:
    """The site ``site_id`` when ``wallet`` owns it: NotFound for no such site, Forbidden ``not_owner`` for another
    wallet's."""
    if not isinstance(site_id, str) or not has_prefix(site_id, "site"):
        raise NotFound.of("site")
    site = await Site.get_or_none(id=site_id).select_related("publisher")
    if site is None:
        raise NotFound.of("site")
    if site.publisher.wallet != wallet:
        raise Forbidden("not_owner", "This site belongs to another wallet.", field="siteId")
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
