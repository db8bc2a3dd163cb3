"""Domain names no one owns on the public internet, as data: production refuses to register a site under any of
them, the name itself or any name below it (``adnet.accounts.commands.special_use``).

``IANA_SPECIAL_USE`` is the IANA registry of Special-Use Domain Names, entry by entry with the document that
reserved it. Source: https://www.iana.org/assignments/special-use-domain-names/special-use-domain-names.xhtml
(established by RFC 6761). ``ALSO_RESERVED`` adds names that registry does not list and no one owns publicly
either, each with why.
"""

from __future__ import annotations

IANA_SPECIAL_USE: tuple[tuple[str, str], ...] = (
    ("alt", "RFC 9476"),
    ("6tisch.arpa", "RFC 9031"),
    ("10.in-addr.arpa", "RFC 6761"),
    *((f"{octet}.172.in-addr.arpa", "RFC 6761") for octet in range(16, 32)),
    ("168.192.in-addr.arpa", "RFC 6761"),
    ("170.0.0.192.in-addr.arpa", "RFC 8880"),
    ("171.0.0.192.in-addr.arpa", "RFC 8880"),
    ("254.169.in-addr.arpa", "RFC 6762"),
    ("8.e.f.ip6.arpa", "RFC 6762"),
    ("9.e.f.ip6.arpa", "RFC 6762"),
    ("a.e.f.ip6.arpa", "RFC 6762"),
    ("b.e.f.ip6.arpa", "RFC 6762"),
    ("eap-noob.arpa", "RFC 9140"),
    ("example", "RFC 6761"),
    ("example.com", "RFC 6761"),
    ("example.net", "RFC 6761"),
    ("example.org", "RFC 6761"),
    ("home.arpa", "RFC 8375"),
    ("invalid", "RFC 6761"),
    ("ipv4only.arpa", "RFC 8880"),
    ("local", "RFC 6762"),
    ("localhost", "RFC 6761"),
    ("onion", "RFC 7686"),
    ("resolver.arpa", "RFC 9462"),
    ("service.arpa", "RFC 9665"),
    ("test", "RFC 6761"),
)

ALSO_RESERVED: tuple[tuple[str, str], ...] = (
    ("arpa", "the infrastructure zone (RFC 3172): reverse mapping of addresses (1.0.0.127.in-addr.arpa), never a site"),
    ("localdomain", "the suffix systems give localhost (localhost.localdomain); not delegated in the root zone"),
    ("internal", "reserved by ICANN for private networks (2024)"),
    ("intranet", "a private namespace in use (RFC 6762, Appendix G); not delegated"),
    ("private", "a private namespace in use (RFC 6762, Appendix G); not delegated"),
    ("corp", "a private namespace in use (RFC 6762, Appendix G); ICANN will not delegate it"),
    ("home", "a private namespace in use (RFC 6762, Appendix G); ICANN will not delegate it"),
    ("lan", "a private namespace in use (RFC 6762, Appendix G); not delegated"),
)

RESERVED_NAMES = frozenset(name for name, _ in IANA_SPECIAL_USE + ALSO_RESERVED)


def reserved(domain: str) -> bool:
    """Whether a canonical domain is one of ``RESERVED_NAMES`` or below one (``nas.home.arpa``, ``a.test``)."""
    labels = domain.split(".")
    return any(".".join(labels[index:]) in RESERVED_NAMES for index in range(len(labels)))
