"""The three ways a publisher proves a site's domain, what to publish for each, and how adnet reads them.

- ``meta_tag``: ``<meta name="adnet-site-verification" content="TOKEN">`` in the home page (``/``);
- ``well_known``: a file at ``/.well-known/adnet.txt`` with the token on a line of its own;
- ``ads_txt``: a line of the domain's ``/ads.txt`` (IAB Tech Lab ads.txt 1.1) naming adnet as the advertising
  system, the publisher as the seller account, and the relationship ``DIRECT``:
  ``<adnet's domain>, <publisher id>, DIRECT[, <certification authority id>]``. adnet's domain is
  ``ADNET_ADS_SYSTEM_DOMAIN`` (by default the host of ``ADNET_PUBLIC_URL``), the certification authority id
  ``ADNET_ADS_TXT_CERTIFICATION_ID`` when set; the file is read by ``adnet.accounts.ads_txt`` (comments,
  whitespace, extension fields, variable lines; the domain and ``DIRECT`` in any case, the publisher id exactly, a
  fourth field not required). The same line authorises adnet to sell the site's inventory to buyers, so the
  re-check also records whether it is still there (``adnet.accounts.ownership``).

The token is the site's own (``Site.verification_token``), so one wallet's proof never proves another wallet's
site; an ads.txt line names the publisher, so it proves each site that publisher registered on the domain. Each
reader returns everything the document proves (all tokens, all publisher ids), so one fetched document decides
both a claimant's proof and the current holder's (``adnet.accounts.ownership``).
"""

from __future__ import annotations

from dataclasses import dataclass
from html.parser import HTMLParser

from adnet.accounts import ads_txt
from adnet.accounts.models import ProofMethod

META_NAME = "adnet-site-verification"
HOME_PATH = "/"
WELL_KNOWN_PATH = "/.well-known/adnet.txt"
ADS_TXT_PATH = "/ads.txt"
PATHS = {ProofMethod.META_TAG: HOME_PATH, ProofMethod.WELL_KNOWN: WELL_KNOWN_PATH, ProofMethod.ADS_TXT: ADS_TXT_PATH}
# The order a check tries them in: the home page first, as most publishers will use the tag.
METHODS = (ProofMethod.META_TAG, ProofMethod.WELL_KNOWN, ProofMethod.ADS_TXT)


@dataclass(frozen=True)
class Claimant:
    """What proves one site: its token, and its publisher's id for ads.txt."""

    token: str
    publisher_id: str

    def shown_by(self, method: ProofMethod, found: frozenset[str]) -> bool:
        """Whether what a document of ``method`` carries (as ``read`` finds it) proves this claimant."""
        return (self.publisher_id if method is ProofMethod.ADS_TXT else self.token) in found


@dataclass(frozen=True)
class Instruction:
    """One way to prove a domain: where to publish, and the exact text."""

    method: ProofMethod
    title: str
    location: str
    text: str


def instructions(domain: str, claimant: Claimant, ads_system: str,
                 certification_id: str | None = None) -> list[Instruction]:
    """What the site's owner publishes, for each method, to prove ``domain``."""
    return [
        Instruction(ProofMethod.META_TAG, "Meta tag on the home page", f"the <head> of https://{domain}/",
                    f'<meta name="{META_NAME}" content="{claimant.token}">'),
        Instruction(ProofMethod.WELL_KNOWN, "File on the site", f"https://{domain}{WELL_KNOWN_PATH}",
                    claimant.token),
        Instruction(ProofMethod.ADS_TXT, "Line in ads.txt", f"https://{domain}{ADS_TXT_PATH}",
                    ads_txt_line(ads_system, claimant.publisher_id, certification_id)),
    ]


def ads_txt_line(ads_system: str, publisher_id: str, certification_id: str | None = None) -> str:
    """The ads.txt record that names adnet and the publisher (with adnet's certification authority id, when it has
    one)."""
    line = f"{ads_system}, {publisher_id}, DIRECT"
    return f"{line}, {certification_id}" if certification_id else line


def read(method: ProofMethod, text: str, *, ads_system: str, truncated: bool = False) -> frozenset[str]:
    """What a fetched document of ``method`` proves: the tokens it carries, or for ads.txt the publisher ids it
    names with adnet. A truncated text file loses its last, partial line."""
    if method is ProofMethod.META_TAG:
        return meta_tokens(text)
    if method is ProofMethod.ADS_TXT:
        return ads_txt.parse(text, truncated=truncated).direct_accounts(ads_system)
    lines = text.splitlines()
    if truncated and lines:
        lines.pop()
    return frozenset(line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#"))


class _MetaTags(HTMLParser):
    """Collects the content of every ``<meta name="adnet-site-verification">``."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tokens: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag != "meta":
            return
        values = {name.lower(): (value or "") for name, value in attrs}
        if values.get("name", "").strip().lower() == META_NAME and values.get("content", "").strip():
            self.tokens.add(values["content"].strip())

    handle_startendtag = handle_starttag


def meta_tokens(html: str) -> frozenset[str]:
    """The tokens of the page's adnet verification meta tags."""
    parser = _MetaTags()
    parser.feed(html)
    parser.close()
    return frozenset(parser.tokens)

