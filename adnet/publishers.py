"""Publishers and their sites: registration, the sites a wallet owns with their figures, and a site's balance.

A publisher is a wallet; the wallet's first registration creates its publisher record, later ones add sites.
Domains are stored in one canonical form (``normalize_domain``), unique in the database, so a domain belongs to at
most one wallet however it is spelled and however many requests race for it.

Money figures come from the ledger (integers in the smallest unit):

- ``claimable`` is the balance of the site's account (``ledger.site``), what can be withdrawn or exchanged now;
- ``earned`` is the lifetime ad revenue credited to the site: every posting on the site's G$ account except those
  of the money movements this module's neighbours make (``NOT_EARNINGS``: top-ups, exchanges and the claims of
  withdrawals). It is computed as the balance minus those postings, so it reads the few non-earning postings
  rather than one posting per billed event;
- ``pending_withdrawals`` are the withdrawals whose claim is signed and neither redeemed nor released.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, time
from urllib.parse import urlsplit

import idna
from tortoise.exceptions import IntegrityError
from tortoise.transactions import in_transaction

from adnet import ledger
from adnet.errors import ApiError, bad_request, conflict, not_found
from adnet.ids import has_prefix, new_id
from adnet.models import LedgerAccount, LedgerPosting, Publisher, Site, SiteDailyStat, Withdrawal, WithdrawalStatus

log = logging.getLogger(__name__)

EARNINGS_SYMBOL = "G$"  # ad revenue is credited in the payout token
# Ledger transaction kinds that move a site's money without being ad revenue.
NOT_EARNINGS = frozenset({"deposit", "exchange", "claim_issue", "claim_expire", "claim_redeem"})
MAX_DOMAIN_INPUT = 2048
_LABEL = re.compile(r"^(?!-)[a-z0-9-]{1,63}(?<!-)$")


@dataclass(frozen=True)
class Registration:
    """A registered site; ``created`` is False when the wallet had registered this domain before."""

    site: Site
    publisher: Publisher
    created: bool


@dataclass(frozen=True)
class Figures:
    """Impressions, clicks and G$ earnings (smallest unit) over some period."""

    impressions: int
    clicks: int
    earned: int


@dataclass(frozen=True)
class SiteSummary:
    """A site with its figures for today (UTC) and for its whole life."""

    site: Site
    today: Figures
    lifetime: Figures


@dataclass(frozen=True)
class SiteBalance:
    """A site's money, in the smallest unit of each token."""

    site_id: str
    earned: int
    claimable: int
    pending_withdrawals: int
    sov_claimable: int
    sov_pending_withdrawals: int


def normalize_domain(text: object) -> str:
    """The canonical form of a site's domain: scheme, credentials-free authority, port, path, query, a trailing
    dot and one leading ``www.`` removed; lower case; international names in punycode (IDNA 2008 with UTS 46
    mapping). Raises ApiError 400 ``invalid_domain`` for anything that is not a public DNS name."""
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
    a domain another wallet holds: 409 ``domain_taken``."""
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
            raise conflict("domain_taken", "This domain is registered by another wallet.", field="domain") from None
        return Registration(existing, existing.publisher, created=False)
    log.info("site registered site=%s publisher=%s domain=%s", site.id, publisher.id, domain)
    return Registration(site, publisher, created=True)


async def owned_site(wallet: str, site_id: object) -> Site:
    """The site ``site_id`` when ``wallet`` owns it: 404 ``not_found`` for no such site, 403 ``not_owner`` for
    another wallet's."""
    if not isinstance(site_id, str) or not has_prefix(site_id, "site"):
        raise not_found("site")
    site = await Site.get_or_none(id=site_id).select_related("publisher")
    if site is None:
        raise not_found("site")
    if site.publisher.wallet != wallet:
        raise ApiError(403, "not_owner", "This site belongs to another wallet.", field="siteId")
    return site


async def list_sites(wallet: str, now: datetime) -> list[SiteSummary]:
    """The wallet's sites, oldest first, each with today's (UTC) and lifetime impressions, clicks and earnings."""
    sites = await Site.filter(publisher__wallet=wallet).order_by("created_at", "id")
    if not sites:
        return []
    ids = [site.id for site in sites]
    today = now.astimezone(UTC).date()
    counts = await SiteDailyStat.filter(site_id__in=ids).values_list("site_id", "day", "impressions", "clicks")
    lifetime_counts: dict[str, tuple[int, int]] = {}
    today_counts: dict[str, tuple[int, int]] = {}
    for site_id, day, impressions, clicks in counts:
        total = lifetime_counts.get(site_id, (0, 0))
        lifetime_counts[site_id] = (total[0] + impressions, total[1] + clicks)
        if day == today:
            today_counts[site_id] = (impressions, clicks)
    lifetime_earned = await _earned(ids)
    today_earned = await _earned_since(ids, _start_of(today))
    return [
        SiteSummary(
            site=site,
            today=Figures(*today_counts.get(site.id, (0, 0)), earned=today_earned.get(site.id, 0)),
            lifetime=Figures(*lifetime_counts.get(site.id, (0, 0)), earned=lifetime_earned.get(site.id, 0)),
        )
        for site in sites
    ]


async def site_balance(wallet: str, site_id: object) -> SiteBalance:
    """The money of a site ``wallet`` owns (404 / 403 otherwise, see ``owned_site``)."""
    site = await owned_site(wallet, site_id)
    pending: dict[str, int] = {"G$": 0, "SOV": 0}
    for symbol, amount in await Withdrawal.filter(site_id=site.id, status=WithdrawalStatus.ISSUED).values_list(
            "token_symbol", "amount"):
        pending[symbol] += int(amount)
    return SiteBalance(
        site_id=site.id,
        earned=(await _earned([site.id])).get(site.id, 0),
        claimable=await ledger.balance(ledger.site(site.id)),
        pending_withdrawals=pending["G$"],
        sov_claimable=await ledger.balance(ledger.site(site.id, "SOV")),
        sov_pending_withdrawals=pending["SOV"],
    )


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


async def _earned(site_ids: list[str]) -> dict[str, int]:
    """Lifetime ad revenue per site: the G$ balance minus every non-earning posting (see the module docstring)."""
    balances = await LedgerAccount.filter(kind="site", token=EARNINGS_SYMBOL, owner__in=site_ids).values_list(
        "owner", "balance")
    rows = await LedgerPosting.filter(account__kind="site", account__token=EARNINGS_SYMBOL, account__owner__in=site_ids,
                                      transaction__kind__in=NOT_EARNINGS).values_list("account__owner", "amount")
    earned = {owner: int(balance) for owner, balance in balances}
    for owner, amount in rows:
        earned[owner] = earned.get(owner, 0) - int(amount)
    return earned


async def _earned_since(site_ids: list[str], since: datetime) -> dict[str, int]:
    """Ad revenue per site booked from ``since`` on (postings of today only, so a bounded read)."""
    rows = await LedgerPosting.filter(account__kind="site", account__token=EARNINGS_SYMBOL, account__owner__in=site_ids,
                                      created_at__gte=since).exclude(transaction__kind__in=NOT_EARNINGS).values_list(
        "account__owner", "amount")
    earned: dict[str, int] = {}
    for owner, amount in rows:
        earned[owner] = earned.get(owner, 0) + int(amount)
    return earned


def _start_of(day: date) -> datetime:
    return datetime.combine(day, time.min, tzinfo=UTC)


def _invalid_domain() -> ApiError:
    return bad_request("invalid_domain", "domain is a site's DNS name, such as example.com or https://example.com/.",
                       field="domain")
