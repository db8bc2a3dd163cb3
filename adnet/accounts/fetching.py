"""Fetching a publisher's pages, and posting to an account's webhook endpoints, without letting a stranger point
adnet at anything else.

Verifying a site means adnet requests a URL whose host a stranger chose, so the request must never reach what only
adnet can reach: its own machine, the private network, a cloud's metadata service. In production:

- only ``https`` (plain ``http`` in development and test only), on the scheme's default port;
- the host is resolved by adnet itself when the connection is made, and refused unless every address is a global
  unicast one (no private, loopback, link-local, shared, reserved, documentation, multicast or unspecified
  address, nor one embedding such an IPv4 address: mapped, 6to4, NAT64, Teredo). The connection then goes to an
  address that was checked, so a name that resolves to a public address for a check and to a private one for the
  connection (DNS rebinding) cannot slip through; TLS still names and verifies the host (SNI);
- redirects are followed by hand, at most ``MAX_REDIRECTS``, each checked as the first URL was, and only to the
  same domain or its subdomains;
- connecting, and the whole request, have time limits; at most ``MAX_BYTES`` of a body are read, as it streams
  (a caller may ask for a larger bound, as the review queue's banner previews do).

A webhook's POST (``Fetcher.post``) passes the same guard and URL rules, follows no redirect, and reads at most
``MAX_BYTES`` of the answer. Outside production the policy allows any port (``default_ports_only``), where
webhook receivers and banners are served by test servers.

The guard lives in the network backend that httpcore connects through (``GuardedNetwork``), so every connection
of a fetch passes it, whatever URL led there. Tests give ``Fetcher`` their own resolver and backend.
"""

from __future__ import annotations

import asyncio
import functools
import ipaddress
import logging
import socket
import ssl
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import urljoin, urlsplit

import certifi
import httpcore

log = logging.getLogger(__name__)

MAX_BYTES = 64 * 1024
MAX_REDIRECTS = 3
CONNECT_SECONDS = 3.0
TOTAL_SECONDS = 5.0
USER_AGENT = "adnet-site-verification/1"
REDIRECTS = frozenset({301, 302, 303, 307, 308})
DEFAULT_PORTS = {"https": 443, "http": 80}
# IPv6 prefixes that carry an IPv4 address in their last 32 bits (NAT64, RFC 6052 and RFC 8215).
_NAT64 = (ipaddress.IPv6Network("64:ff9b::/96"), ipaddress.IPv6Network("64:ff9b:1::/48"))

Resolver = Callable[[str, int], Awaitable[Sequence[str]]]
T = TypeVar("T")


class FetchFailed(Exception):
    """A page could not be fetched; ``reason`` is a short sentence for the site's owner."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class AddressRefused(FetchFailed):
    """The host resolves to an address adnet does not connect to."""


@dataclass(frozen=True)
class FetchPolicy:
    """What a fetch may reach: production allows https on its default port to global addresses only; development
    and test also allow http, any address and any port, and may send every request to one port (a site served on
    localhost:3000)."""

    https_only: bool = True
    global_addresses_only: bool = True
    default_ports_only: bool = True
    port: int | None = None

    @classmethod
    def for_environment(cls, production: bool, port: int | None = None) -> FetchPolicy:
        if production:
            return cls()
        return cls(https_only=False, global_addresses_only=False, default_ports_only=False, port=port)

    @property
    def schemes(self) -> tuple[str, ...]:
        """The schemes to try, in order."""
        return ("https",) if self.https_only else ("https", "http")


@dataclass(frozen=True)
class Page:
    """What a URL answered: the final URL after redirects, its status, and at most ``MAX_BYTES`` of its body
    (``truncated`` when there was more)."""

    url: str
    status: int
    body: bytes
    truncated: bool

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", errors="replace")


def forbidden_address(address: str) -> bool:
    """Whether an IP address is one adnet never connects to in production: anything but global unicast, including
    an IPv6 address that embeds a non-global IPv4 one."""
    ip = ipaddress.ip_address(address)
    if ip.is_multicast or not ip.is_global:
        return True
    if isinstance(ip, ipaddress.IPv6Address):
        embedded = [ip.ipv4_mapped, ip.sixtofour, *(ip.teredo or ())]
        embedded += [ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF) for network in _NAT64 if ip in network]
        return any(v4 is not None and forbidden_address(str(v4)) for v4 in embedded)
    return False


async def system_resolver(host: str, port: int) -> Sequence[str]:
    """Every address the system's resolver gives for ``host`` (an IP literal resolves to itself)."""
    try:
        answers = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror:
        raise FetchFailed(f"{host} does not resolve") from None
    return list(dict.fromkeys(str(answer[4][0]) for answer in answers))


class GuardedNetwork(httpcore.AsyncNetworkBackend):
    """httpcore's network backend with the address guard: it resolves the host itself, refuses it when any of its
    addresses is forbidden (``global_addresses_only``), and connects to a checked address. TLS is started by
    httpcore on the returned stream with the host's name, not the address. ``port``, when set (development and
    test only), replaces every URL's port."""

    def __init__(self, *, global_addresses_only: bool, resolve: Resolver = system_resolver,
                 inner: httpcore.AsyncNetworkBackend | None = None, port: int | None = None) -> None:
        self.global_addresses_only = global_addresses_only
        self.resolve = resolve
        self.inner = inner or httpcore.AnyIOBackend()
        self.port = port

    # httpcore's interface names these parameters: the timeout is httpcore's connect timeout, passed on.
    async def connect_tcp(self, host: str, port: int, timeout: float | None = None,  # noqa: ASYNC109
                          local_address: str | None = None,
                          socket_options: Iterable[Any] | None = None) -> httpcore.AsyncNetworkStream:
        host = host.strip("[]")
        port = self.port or port
        addresses = await self.resolve(host, port)
        if not addresses:
            raise FetchFailed(f"{host} does not resolve")
        if self.global_addresses_only and any(forbidden_address(address) for address in addresses):
            log.warning("site fetch refused host=%s addresses=%s", host, ",".join(addresses))
            raise AddressRefused(f"{host} resolves to an address that is not public")
        failure: Exception | None = None
        for address in addresses[:3]:
            try:
                return await self.inner.connect_tcp(address, port, timeout=timeout, local_address=local_address,
                                                    socket_options=socket_options)
            except (httpcore.ConnectError, httpcore.ConnectTimeout, OSError) as exc:
                failure = exc
        raise FetchFailed(f"could not connect to {host}") from failure

    async def connect_unix_socket(self, path: str, timeout: float | None = None,  # noqa: ASYNC109
                                  socket_options: Iterable[Any] | None = None) -> httpcore.AsyncNetworkStream:
        raise FetchFailed("adnet fetches sites over TCP only")

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


@functools.cache
def tls_context() -> ssl.SSLContext:
    """The TLS settings of every fetch: certifi's authorities, verified. Made once per process: loading the
    authorities is what building a context costs, and a context is safe to share between connections."""
    return ssl.create_default_context(cafile=certifi.where())


class Fetcher:
    """GETs a publisher's URLs under a ``FetchPolicy``, through the address guard."""

    def __init__(self, policy: FetchPolicy, *, resolve: Resolver = system_resolver,
                 network: httpcore.AsyncNetworkBackend | None = None, user_agent: str = USER_AGENT) -> None:
        self.policy = policy
        self.user_agent = user_agent
        self._network = GuardedNetwork(global_addresses_only=policy.global_addresses_only, resolve=resolve,
                                       inner=network, port=policy.port)
        self._tls = tls_context()

    def url(self, scheme: str, domain: str, path: str) -> str:
        """The URL of ``path`` on ``domain`` (an IPv6 literal in brackets), on the policy's port if it sets one."""
        host = f"[{domain}]" if ":" in domain else domain
        port = f":{self.policy.port}" if self.policy.port else ""
        return f"{scheme}://{host}{port}{path}"

    async def get(self, url: str, *, scope: str, max_bytes: int = MAX_BYTES) -> Page:
        """GET ``url``, following redirects that stay on ``scope`` (a domain, its subdomains included), reading at
        most ``max_bytes`` of the body; FetchFailed says why nothing came back. A status other than 200 is a Page,
        not a failure."""
        return await self._through_guard(lambda pool: self._follow(pool, url, scope, max_bytes))

    async def _through_guard(self, work: Callable[[httpcore.AsyncConnectionPool], Awaitable[T]]) -> T:
        """``work`` on a connection pool of the guarded network, within the time limit; FetchFailed otherwise."""
        try:
            async with asyncio.timeout(TOTAL_SECONDS):
                async with httpcore.AsyncConnectionPool(ssl_context=self._tls, network_backend=self._network,
                                                        max_connections=2, retries=0) as pool:
                    return await work(pool)
        except TimeoutError:
            raise FetchFailed(f"no answer within {TOTAL_SECONDS:g} seconds") from None
        except FetchFailed:
            raise
        except httpcore.TimeoutException:
            raise FetchFailed(f"no answer within {TOTAL_SECONDS:g} seconds") from None
        except (httpcore.ConnectError, OSError) as exc:
            raise FetchFailed(_connect_failure(exc)) from None
        except (httpcore.NetworkError, httpcore.ProtocolError, httpcore.UnsupportedProtocol) as exc:
            raise FetchFailed(f"the connection failed ({type(exc).__name__})") from None

    async def post(self, url: str, body: bytes, headers: dict[str, str]) -> int:
        """POST ``body`` to ``url`` with ``headers`` (JSON), following no redirect: the answer's status;
        FetchFailed says why there was none."""
        host = (urlsplit(url).hostname or "").rstrip(".")
        self._check_url(url, host)
        sent = [(b"User-Agent", self.user_agent.encode()), (b"Content-Type", b"application/json"),
                *((name.encode(), value.encode()) for name, value in headers.items())]
        answer = await self._through_guard(
            lambda pool: self._request(pool, url, method="POST", content=body, headers=sent))
        return answer[0]

    async def _follow(self, pool: httpcore.AsyncConnectionPool, url: str, scope: str, max_bytes: int) -> Page:
        for _ in range(MAX_REDIRECTS + 1):
            self._check_url(url, scope)
            status, location, body, truncated = await self._request(pool, url, max_bytes=max_bytes)
            if status not in REDIRECTS:
                return Page(url=url, status=status, body=body, truncated=truncated)
            if not location:
                raise FetchFailed(f"{url} redirects without a Location")
            url = urljoin(url, location)
        raise FetchFailed(f"more than {MAX_REDIRECTS} redirects")

    def _check_url(self, url: str, scope: str) -> None:
        """Refuse a URL the policy does not allow, before any connection."""
        try:
            parts = urlsplit(url)
            port = parts.port
        except ValueError:
            raise FetchFailed("a redirect to a malformed URL") from None
        if parts.scheme not in self.policy.schemes:
            raise FetchFailed(f"{parts.scheme or 'a relative'} URL refused: adnet fetches https only")
        host = (parts.hostname or "").rstrip(".")
        if parts.username is not None or parts.password is not None:
            raise FetchFailed("a URL with credentials")
        if host != scope and not host.endswith("." + scope):
            raise FetchFailed(f"a redirect away from {scope} (to {host or 'nowhere'})")
        if (self.policy.default_ports_only and self.policy.port is None and port is not None
                and port != DEFAULT_PORTS[parts.scheme]):
            raise FetchFailed(f"a URL on port {port}: adnet fetches the default port only")

    async def _request(self, pool: httpcore.AsyncConnectionPool, url: str, *, method: str = "GET",
                       content: bytes = b"", headers: list[tuple[bytes, bytes]] | None = None,
                       max_bytes: int = MAX_BYTES) -> tuple[int, str, bytes, bool]:
        headers = headers or [(b"User-Agent", self.user_agent.encode()),
                              (b"Accept", b"text/html, text/plain;q=0.9, */*;q=0.1")]
        timeouts = {"connect": CONNECT_SECONDS, "read": CONNECT_SECONDS, "write": CONNECT_SECONDS,
                    "pool": CONNECT_SECONDS}
        async with pool.stream(method, url, headers=headers, content=content or None,
                               extensions={"timeout": timeouts}) as response:
            location = next((value.decode("latin-1") for name, value in response.headers
                             if name.lower() == b"location"), "")
            if response.status in REDIRECTS:
                return response.status, location, b"", False
            body = bytearray()
            truncated = False
            async for chunk in response.aiter_stream():
                body += chunk
                if len(body) > max_bytes:
                    truncated = True
                    break
            return response.status, location, bytes(body[:max_bytes]), truncated


def _connect_failure(exc: BaseException) -> str:
    if isinstance(exc, ssl.SSLCertVerificationError) or "CERTIFICATE_VERIFY_FAILED" in str(exc):
        return "its TLS certificate is not valid for the domain"
    if isinstance(exc, ssl.SSLError):
        return "the TLS handshake failed"
    return "could not connect"
