"""What a wallet asks of its accounts: registering a site or an advertiser account, and signing in."""

from __future__ import annotations

import ipaddress
import re
from enum import StrEnum
from typing import Annotated, Any, ClassVar
from urllib.parse import urlsplit

import idna
from pydantic import AfterValidator, BeforeValidator, Field, StringConstraints, WithJsonSchema

from adnet.accounts import special_names
from adnet.accounts.content_taxonomy import MAX_SITE_CATEGORIES, content_taxonomy
from adnet.accounts.models import MemberRole
from adnet.core.inputs import Command, WalletAddress, rule

MAX_DOMAIN_INPUT = 2048
MAX_SITE_NAME = 120  # Site.name's column
MAX_ADVERTISER_NAME = 120  # Advertiser.name's column
_LABEL = re.compile(r"^(?!-)[a-z0-9-]{1,63}(?<!-)$")


class InvalidDomain(ValueError):
    """Not a public DNS name."""


def normalize_domain(text: object) -> str:
    """The canonical form of a site's domain: scheme, credentials-free authority, port, path, query, a trailing
    dot and one leading ``www.`` removed; lower case; international names in punycode (IDNA 2008 with UTS 46
    mapping); an IP address in its compressed form (IPv6 without brackets). ``localhost`` and IP addresses pass
    here and are refused in production by ``special_use``. Raises InvalidDomain for anything that is no DNS name
    (single labels other than ``localhost``, bad labels, credentials)."""
    if not isinstance(text, str) or not text.strip() or len(text) > MAX_DOMAIN_INPUT:
        raise InvalidDomain(text)
    raw = text.strip()
    literal = _ip_literal(raw)
    if literal is not None:
        return literal
    try:
        parts = urlsplit(raw if "://" in raw else "//" + raw)
        hostname = parts.hostname
    except ValueError:
        raise InvalidDomain(text) from None
    if parts.scheme not in ("", "http", "https") or "@" in parts.netloc or not hostname:
        raise InvalidDomain(text)
    literal = _ip_literal(hostname)
    if literal is not None:
        return literal
    host = hostname.rstrip(".")
    try:
        host = idna.encode(host, uts46=True).decode("ascii").lower()
    except (idna.IDNAError, UnicodeError):
        raise InvalidDomain(text) from None
    if host.startswith("www."):
        host = host[4:]
    if host == "localhost":
        return host
    labels = host.split(".")
    if len(labels) < 2 or len(host) > 253 or labels[-1].isdigit() or not all(_LABEL.match(label) for label in labels):
        raise InvalidDomain(text)
    return host


def special_use(domain: str) -> str | None:
    """Why a canonical domain cannot be anyone's public site, or None when it can: an IP address, or a name no one
    owns publicly (``adnet.accounts.special_names``: IANA's special-use names, all of ``.arpa``, ``localdomain``
    and the like, the name itself or under it). Such names pass ``normalize_domain``, so development can register
    its local sites; production refuses them."""
    if _ip_literal(domain) is not None:
        return "ip_address"
    if special_names.reserved(domain):
        return "reserved_name"
    return None


def _ip_literal(text: str) -> str | None:
    """The compressed form of an IPv4 or IPv6 address (brackets allowed around IPv6), or None."""
    try:
        return str(ipaddress.ip_address(text.removeprefix("[").removesuffix("]")))
    except ValueError:
        return None


def _domain(value: Any) -> str:
    try:
        return normalize_domain(value)
    except InvalidDomain:
        raise rule("invalid_domain", "a site's DNS name, such as example.com or https://example.com/") from None


def _site_name(value: Any) -> str:
    name = value.strip() if isinstance(value, str) else None
    if name is None or len(name) > MAX_SITE_NAME:
        raise rule("invalid_name", f"a site's name is at most {MAX_SITE_NAME} characters")
    return name


# A site's domain in its canonical form (see ``normalize_domain``).
DomainName = Annotated[str, BeforeValidator(_domain), WithJsonSchema(
    {"type": "string", "maxLength": MAX_DOMAIN_INPUT, "examples": ["example.com"]})]
SiteName = Annotated[str, BeforeValidator(_site_name), WithJsonSchema({"type": "string", "maxLength": MAX_SITE_NAME})]


class DomainCheck(Command):
    """A domain as it would be registered."""

    domain: DomainName


class SiteRegistration(DomainCheck):
    """A site to register for the signed-in wallet."""

    name: SiteName = ""


class SiteRename(Command):
    """A site's new name (empty for none)."""

    name: SiteName


def _content_categories(ids: list[str]) -> list[str]:
    entries = content_taxonomy().entries
    for item in ids:
        if item not in entries:
            raise rule("unknown_content_category", f"{item[:20]!r} is not an IAB Content Taxonomy "
                       f"{content_taxonomy().version} id (GET /api/content-categories lists them).")
    return list(dict.fromkeys(ids))


class SiteContent(Command):
    """A site's own content categories: IAB Content Taxonomy ids, replacing those it had (none: an empty list)."""

    content_categories: Annotated[list[Annotated[str, StringConstraints(max_length=16)]], AfterValidator(
        _content_categories)] = Field(max_length=MAX_SITE_CATEGORIES, description=(
            "IAB Tech Lab Content Taxonomy 3.1 ids of what the site's pages are about, as OpenRTB site.cat carries "
            "them"))


class AdvertiserRegistration(Command):
    """The signed-in wallet's advertiser account to open."""

    name: str = Field("", max_length=MAX_ADVERTISER_NAME)


class NewMember(Command):
    """A wallet to add to a publisher or advertiser account, with its role (``owner``, ``manager`` or ``viewer``)."""

    wallet: WalletAddress
    role: MemberRole


class ApiKeyScope(StrEnum):
    """What an API key may do besides being its wallet (docs/auth.md): read reports, manage sites, manage
    campaigns and funds, or report conversions. A manage or write scope does not include reading."""

    REPORTS = "reports:read"
    SITES = "sites:manage"
    CAMPAIGNS = "campaigns:manage"
    CONVERSIONS = "conversions:write"


MAX_API_KEY_NAME = 60  # ApiKey.name's column


class NewApiKey(Command):
    """An API key to issue for the signed-in wallet: a name to recognise it by, and its scopes."""

    name: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_API_KEY_NAME)]
    scopes: list[ApiKeyScope] = Field(min_length=1, max_length=len(ApiKeyScope))


class SignIn(Command):
    """A signed Sign-In with Ethereum message (EIP-4361) and its signature. Any text in either reaches the sign-in's
    own checks (``invalid_message``, ``invalid_signature``), a NUL character included: neither is stored."""

    UNSTORED_TEXT: ClassVar[frozenset[str]] = frozenset({"message", "signature"})

    message: str = Field(description="the EIP-4361 text, as signed")
    signature: str = Field(description="0x-prefixed hex")


class SignInAddress(Command):
    """The wallet that asks for a sign-in message to sign."""

    address: WalletAddress
