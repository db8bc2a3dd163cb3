"""The three ways a publisher proves a site's domain, what to publish for each, and how adnet reads them.

- ``meta_tag``: ``<meta name="adnet-site-verification" content="TOKEN">`` in the home page (``/``);
- ``well_known``: a file at ``/.well-known/adnet.txt`` with the token on a line of its own;
- ``ads_txt``: a line of the domain's ``/ads.txt`` (IAB Tech Lab ads.txt 1.1) naming adnet as the advertising
  system, the publisher as the seller account, and the relationship ``DIRECT``:
  ``<adnet's domain>, <publisher id>, DIRECT``. adnet's domain is the host of ``ADNET_PUBLIC_URL``; fields are
  compared after trimming spaces, the domain and ``DIRECT`` case-insensitively, the publisher id exactly; a
  comment (``#``), extension fields (after ``;``), a fourth field (a certification authority id) and variable
  lines (``contact=…``) are allowed.

The token is the site's own (``Site.verification_token``), so one wallet's proof never proves another wallet's
site; an ads.txt line names the publisher, so it proves each site that publisher registered on the domain. Each
reader returns everything the document proves (all tokens, all publisher ids), so one fetched document decides
both a claimant's proof and the current holder's (``adnet.accounts.ownership``).
"""

from __future__ import annotations

from dataclasses import dataclass
from html.parser import HTMLParser

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


def instructions(domain: str, claimant: Claimant, ads_system: str) -> list[Instruction]:
    """What the site's owner publishes, for each method, to prove ``domain``."""
    return [
        Instruction(ProofMethod.META_TAG, "Meta tag on the home page", f"the <head> of https://{domain}/",
                    f'<meta name="{META_NAME}" content="{claimant.token}">'),
        Instruction(ProofMethod.WELL_KNOWN, "File on the site", f"https://{domain}{WELL_KNOWN_PATH}",
                    claimant.token),
        Instruction(ProofMethod.ADS_TXT, "Line in ads.txt", f"https://{domain}{ADS_TXT_PATH}",
                    ads_txt_line(ads_system, claimant.publisher_id)),
    ]


def ads_txt_line(ads_system: str, publisher_id: str) -> str:
    """The ads.txt record that names adnet and the publisher."""
    return f"{ads_system}, {publisher_id}, DIRECT"


def read(method: ProofMethod, text: str, *, ads_system: str, truncated: bool = False) -> frozenset[str]:
    """What a fetched document of ``method`` proves: the tokens it carries, or for ads.txt the publisher ids it
    names with adnet. A truncated text file loses its last, partial line."""
    if method is ProofMethod.META_TAG:
        return meta_tokens(text)
    lines = text.splitlines()
    if truncated and lines:
        lines.pop()
    if method is ProofMethod.WELL_KNOWN:
        return frozenset(line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#"))
    return ads_txt_publishers(lines, ads_system)


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


def ads_txt_publishers(lines: list[str], ads_system: str) -> frozenset[str]:
    """The publisher ids of the ads.txt records that name ``ads_system`` with a DIRECT relationship."""
    publishers = set()
    for line in lines:
        record = line.split("#", 1)[0].split(";", 1)[0]
        fields = [field.strip() for field in record.split(",")]
        if len(fields) < 3 or "=" in fields[0]:
            continue
        if fields[0].lower() == ads_system.lower() and fields[2].upper() == "DIRECT" and fields[1]:
            publishers.add(fields[1])
    return frozenset(publishers)
