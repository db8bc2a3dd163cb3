"""adnet's ``/sellers.json`` (IAB Tech Lab sellers.json 1.0): the publishers adnet sells inventory for, so a buyer
can match an ads.txt line (``adnet.accounts.proofs.ads_txt_line``) and a bid's seller to a known party.

A seller is a publisher that holds at least one site verified now (``Site.verified``): proving a domain is what
makes its inventory adnet's to sell. Its ``seller_id`` is its publisher id, the same as in its ads.txt line, so it
never changes; its ``seller_type`` is ``PUBLISHER`` (adnet sells only its publishers' own sites). ``name`` and
``domain`` are those of its first verified site (its name, or the domain when it has none), unless the publisher
marked itself confidential (``Publisher.confidential``), which lists it with ``is_confidential: 1`` and nothing
that names it. The contact, the version and adnet's certification authority id (as a ``TAG-ID`` identifier) come
from the settings.

The document is built by one query and kept in each process's memory for ``ADNET_SELLERS_CACHE_SECONDS``
(``SellersDirectory``), the ``max-age`` it is served with: a crawler's requests never scan the sites, and a change
(a verification, a lapse, a publisher turning confidential) shows within that time.
"""

from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from adnet.accounts.models import Publisher, Site
from adnet.config import Settings
from adnet.core.errors import NotFound
from adnet.core.inputs import Command

log = logging.getLogger(__name__)

SELLER_TYPE = "PUBLISHER"


@dataclass(frozen=True)
class Seller:
    """One publisher as sellers.json lists it."""

    seller_id: str
    name: str
    domain: str
    confidential: bool

    def entry(self) -> dict[str, Any]:
        """The seller's object in the document."""
        if self.confidential:
            return {"seller_id": self.seller_id, "seller_type": SELLER_TYPE, "is_confidential": 1}
        return {"seller_id": self.seller_id, "seller_type": SELLER_TYPE, "name": self.name, "domain": self.domain}


@dataclass(frozen=True)
class Contact:
    """What the document says about adnet itself."""

    email: str | None = None
    address: str | None = None
    version: str = "1.0"
    certification_id: str | None = None

    @classmethod
    def from_settings(cls, settings: Settings) -> Contact:
        return cls(email=settings.sellers_contact_email, address=settings.sellers_contact_address,
                   version=settings.sellers_version, certification_id=settings.ads_txt_certification_id)


async def sellers() -> list[Seller]:
    """Every publisher that holds a verified site, with its first verified site (one query), by seller id in code
    point order: the same on every database, whatever PostgreSQL's collation makes of ``ORDER BY``."""
    rows = await Site.filter(verified=True, deleted_at=None).order_by("verified_at", "id").values(
        "publisher_id", "domain", "name", "publisher__confidential")
    first: dict[str, Seller] = {}
    for row in rows:
        seller_id = str(row["publisher_id"])
        if seller_id not in first:
            first[seller_id] = Seller(seller_id=seller_id, name=str(row["name"] or row["domain"]),
                                      domain=str(row["domain"]), confidential=bool(row["publisher__confidential"]))
    return sorted(first.values(), key=lambda seller: seller.seller_id)


def document(listed: list[Seller], contact: Contact) -> dict[str, Any]:
    """The sellers.json document of ``listed``: contact and version first, as the specification shows them."""
    body: dict[str, Any] = {}
    if contact.email:
        body["contact_email"] = contact.email
    if contact.address:
        body["contact_address"] = contact.address
    body["version"] = contact.version
    if contact.certification_id:
        body["identifiers"] = [{"name": "TAG-ID", "value": contact.certification_id}]
    body["sellers"] = [seller.entry() for seller in listed]
    return body


class Confidentiality(Command):
    """How sellers.json lists a publisher: confidential (no name, no domain) or by name."""

    confidential: bool


class SellersDirectory:
    """The process's copy of the document, built again once it is ``max_age`` old; concurrent requests for an old
    copy wait for one query rather than each making one."""

    def __init__(self, contact: Contact, max_age: timedelta) -> None:
        self.contact = contact
        self.max_age = max_age
        self._body: bytes | None = None
        self._built_at: datetime | None = None
        self._lock = asyncio.Lock()

    async def body(self, now: datetime) -> bytes:
        """The document as JSON bytes, at most ``max_age`` old."""
        cached = self._cached(now)
        if cached is not None:
            return cached
        async with self._lock:
            cached = self._cached(now)
            if cached is None:
                listed = await sellers()
                cached = self._body = json.dumps(document(listed, self.contact), separators=(",", ":")).encode()
                self._built_at = now
                log.info("sellers.json built sellers=%d", len(listed))
        return cached

    def _cached(self, now: datetime) -> bytes | None:
        if self._built_at is None or now - self._built_at >= self.max_age:
            return None
        return self._body


async def own_publisher(wallet: str) -> Publisher:
    """The publisher record of ``wallet`` (made by its first site registration): NotFound ``not_found`` before."""
    publisher = await Publisher.get_or_none(wallet=wallet)
    if publisher is None:
        raise NotFound.of("publisher")
    return publisher


async def set_confidential(publisher: Publisher, confidential: bool) -> Publisher:
    """Mark ``publisher`` (whose owner the caller proved to be) confidential in sellers.json (listed without name or
    domain) or not; each process's copy shows it once it is built again."""
    await Publisher.filter(id=publisher.id).update(confidential=confidential)
    publisher.confidential = confidential
    log.info("publisher confidentiality set publisher=%s confidential=%s", publisher.id, confidential)
    return publisher
