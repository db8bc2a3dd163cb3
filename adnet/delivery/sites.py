"""Whose page asks: serve and track compare the page a request comes from with the site it names.

A browser says which page a request comes from: ``Origin`` on every cross-origin fetch and POST (the embed's
``GET /api/serve``, its beacons and keepalive fetches), and ``Referer`` (by default the page's origin) where
``Origin`` is absent. The page's host must be the site's domain or one of its subdomains (``news.example.com`` is a
page of ``example.com``; ``example.com.evil.test`` is not); so must the host of the event's ``pageUrl`` when one
is given. A request that names no page at all — no ``Origin`` and no ``Referer``, as scripts send — cannot be
shown to come from the site, and counts as a mismatch too. A mismatch is recorded, never billed
(``domain_mismatch``): at serve it is carried in the tracking token, at track it is checked again.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from urllib.parse import urlsplit

import idna

from adnet.campaigns.eligibility import NO_CONTROLS, Controls


@dataclass(frozen=True)
class HouseAdEntry:
    """A publisher's own banner for its site (``adnet.delivery.house_ads``), shown when no paid campaign fills a
    slot."""

    id: str
    banner_url: str
    target_url: str
    description: str
    size: str


@dataclass(frozen=True)
class SiteEntry:
    """What serve and track know of a site: its canonical domain, whether its owner proved it, and what its owner
    set for its slots: the floors (smallest units per 1000 impressions; 0 for none), the house ads, and what it
    blocks or refuses (``adnet.delivery.controls``)."""

    id: str
    domain: str
    verified: bool
    floor: int = 0
    placement_floors: Mapping[str, int] = field(default_factory=dict)
    house_ads: tuple[HouseAdEntry, ...] = ()
    controls: Controls = NO_CONTROLS

    def floor_for(self, placement: str) -> int:
        """The least eCPM a paid campaign must offer in ``placement``: its own floor, else the site's."""
        return self.placement_floors.get(placement, self.floor)


def page_host(origin: str | None, referer: str | None) -> str | None:
    """The host of the page a request comes from: ``Origin``'s, else ``Referer``'s; None when neither names one
    (``Origin: null`` names none)."""
    for header in (origin, referer):
        if header and header != "null":
            host = host_of(header)
            if host is not None:
                return host
    return None


@lru_cache(maxsize=16_384)
def host_of(url: str) -> str | None:
    """The canonical host of an absolute URL (lower case, international names in punycode, no trailing dot and no
    leading ``www.``, as domains are stored); None for anything else."""
    try:
        host = urlsplit(url).hostname
    except ValueError:
        return None
    if not host:
        return None
    host = host.rstrip(".")
    try:
        host = idna.encode(host, uts46=True).decode("ascii").lower() if not host.isascii() else host.lower()
    except (idna.IDNAError, UnicodeError):
        return None
    return host.removeprefix("www.")


def on_domain(host: str | None, domain: str) -> bool:
    """Whether ``host`` is ``domain`` or one of its subdomains."""
    return host is not None and (host == domain or host.endswith("." + domain))


def on_site(site: SiteEntry, *, origin: str | None, referer: str | None, page_url: str | None = None) -> bool:
    """Whether a request (and the page URL it reports, if any) comes from a page of ``site``."""
    if not on_domain(page_host(origin, referer), site.domain):
        return False
    return page_url is None or on_domain(host_of(page_url), site.domain)
