"""Who asks: the client's network and browser as tracking rules see them, never its address.

- ``network``: the client's IPv4 /24 or IPv6 /48, with the rest of the address zeroed (what Ethical Ads keeps). It
  is what events store and what the billing caps count per, so no raw address is written anywhere.
- ``agent_family``: the browser's family as ua-parser names it ("Chrome", "Firefox", "Mobile Safari"), which a
  version update within a token's life does not change.
- ``Client.binding``: a short digest of both, carried in a tracking token, so an event is billed only when it
  comes from the network and browser family the ad was served to.
- ``is_bot``: the request's own User-Agent header names a crawler (the crawler-user-agents list from PyPI), a
  headless or scripted browser, or is empty. What a page writes in a body never decides this.

Each answer is cached per distinct input: a server sees few distinct user agents, and parsing one costs more than
the rest of a request.
"""

from __future__ import annotations

import hashlib
import ipaddress
import re
from dataclasses import dataclass
from functools import lru_cache

import crawleruseragents
from ua_parser import parse

UNKNOWN_NETWORK = "unknown"
# A dotted IPv4 address: four octets 0-255 without leading zeros, as ``ipaddress`` reads them.
_OCTET = r"25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9][0-9]|[0-9]"
_IPV4 = re.compile(rf"({_OCTET})\.({_OCTET})\.({_OCTET})\.(?:{_OCTET})")
# Automation that the crawler list does not name: headless and driven browsers.
HEADLESS_MARKERS = ("headless", "phantomjs", "selenium", "webdriver", "puppeteer", "playwright", "lighthouse")


@lru_cache(maxsize=65_536)
def network(address: str) -> str:
    """``203.0.113.7`` → ``203.0.113.0/24``; ``2001:db8:1:2::7`` → ``2001:db8:1::/48``; anything else
    ``unknown``. A dotted IPv4 address (nearly every request, each client's new to the cache) is read without
    ``ipaddress``, which costs ten times as much."""
    dotted = _IPV4.fullmatch(address)
    if dotted is not None:
        return f"{dotted[1]}.{dotted[2]}.{dotted[3]}.0/24"
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        return UNKNOWN_NETWORK
    if isinstance(parsed, ipaddress.IPv6Address) and parsed.ipv4_mapped is not None:
        parsed = parsed.ipv4_mapped
    prefix = 24 if parsed.version == 4 else 48
    return str(ipaddress.ip_network(f"{parsed}/{prefix}", strict=False))


@lru_cache(maxsize=4096)
def agent_family(user_agent: str) -> str:
    """The browser family of a User-Agent header ("Other" when ua-parser knows none)."""
    found = parse(user_agent).user_agent
    return found.family if found is not None else "Other"


@lru_cache(maxsize=4096)
def is_bot(user_agent: str) -> bool:
    """Whether a User-Agent header is empty, a known crawler's or HTTP library's, or a headless browser's."""
    lowered = user_agent.lower()
    return (not lowered.strip() or any(marker in lowered for marker in HEADLESS_MARKERS)
            or crawleruseragents.is_crawler(user_agent))


@dataclass(frozen=True)
class Client:
    """Who sent a request: its address (never stored), its own User-Agent header, the page it says it comes
    from (its ``Origin`` and ``Referer`` headers, see ``adnet.delivery.sites``), and the country a trusted proxy
    located it in (``adnet.delivery.targeting``)."""

    ip: str
    user_agent: str
    origin: str | None = None
    referer: str | None = None
    country: str | None = None

    @property
    def network(self) -> str:
        return network(self.ip)

    @property
    def is_bot(self) -> bool:
        return is_bot(self.user_agent)

    @property
    def binding(self) -> str:
        """What a tracking token binds its events to: this network and browser family, as a short digest."""
        return _binding(self.network, agent_family(self.user_agent))


@lru_cache(maxsize=65_536)
def _binding(network_text: str, family: str) -> str:
    return hashlib.sha256(f"{network_text}|{family}".encode()).digest()[:9].hex()


def warm_up() -> None:
    """Compile the crawler patterns and ua-parser's rules now, at start-up, rather than in the first request."""
    is_bot("adnet")
    agent_family("adnet")
