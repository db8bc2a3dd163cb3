"""Publishers and their sites: registration, and finding a site a wallet owns.

A publisher is a wallet; the wallet's first registration creates its publisher record, later ones add sites.
Domains are stored in one canonical form (``normalize_domain``), unique in the database, so a domain belongs to at
most one wallet however it is spelled and however many requests race for it. A site's figures and money are read
in ``adnet.reporting``.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from datetime import datetime
from urllib.parse import urlsplit

import idna
from tortoise.exceptions import IntegrityError
from tortoise.transactions import in_transaction

from adnet.accounts.models import Publisher, Site
from adnet.core.errors import Conflict, Forbidden, Invalid, NotFound
from adnet.core.ids import has_prefix, new_id

log = logging.getLogger(__name__)

MAX_DOMAIN_INPUT = 2048
MAX_SITE_NAME = 120  # Site.name's column
_LABEL = re.compile(r"^(?!-)[a-z0-9-]{1,63}(?<!-)$")


@dataclass(frozen=True)
class Registration:
    """A registered site; ``created`` is False when the wallet had registered this domain before."""

    site: Site
    publisher: Publisher
    created: bool


def normalize_domain(text: object) -> str:
    """The canonical form of a site's domain: scheme, credentials-free authority, port, path, query, a trailing
    dot and one leading ``www.`` removed; lower case; international names in punycode (IDNA 2008 with UTS 46
    mapping). Raises Invalid ``invalid_domain`` for anything that is not a public DNS name."""
    if not isinstance(text, str) or not text.strip() or len(text) > MAX_DOMAIN_INPUT:
        raise _invalid_domain()
    raw = text.strip()
    parts = urlsplit(raw if "://" in raw else "//" + raw)
    if parts.scheme not in ("", "http", "https") or "@" in parts.netloc or not parts.hostname:
        raise _invalid_domain()
    host = parts.hostname.rstrip(".")
    try:
        host = idna.encode(host, uts46=True).decode("ascii").lower()
    except (idna.IDNAError, UnicodeError):
        raise _invalid_domain() from None
    if host.startswith("www."):
        host = host[4:]
    labels = host.split(".")
    if len(labels) < 2 or len(host) > 253 or labels[-1].isdigit() or not all(_LABEL.match(label) for label in labels):
        raise _invalid_domain()
    return host


async def register_site(*, wallet: str, domain: str, name: str, now: datetime) -> Registration:
    """Register ``domain`` for ``wallet`` (already proven by its session), creating the wallet's publisher record
    on its first registration. Registering a domain the wallet holds returns that site (``created`` False);
    a domain another wallet holds: Conflict ``domain_taken``."""
    domain = normalize_domain(domain)
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


def _invalid_domain() -> Invalid:
    return Invalid("invalid_domain", "domain is a site's DNS name, such as example.com or https://example.com/.",
                   field="domain")


def site_name_of(text: object) -> str:
    """A site's display name: trimmed, at most ``MAX_SITE_NAME`` characters (Invalid ``invalid_name``)."""
    name = text.strip() if isinstance(text, str) else ""
    if len(name) > MAX_SITE_NAME:
        raise Invalid("invalid_name", f"A site's name is at most {MAX_SITE_NAME} characters.", field="name")
    return name
