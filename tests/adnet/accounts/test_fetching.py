"""The verification fetch's guard against reaching what only adnet can reach: in production, https only, no
private, loopback, link-local, reserved or multicast address (checked when connecting, so a name that changes its
answer cannot slip through), redirects checked hop by hop, bodies and redirects bounded."""

from __future__ import annotations

import pytest

from adnet.accounts.fetching import (
    MAX_BYTES,
    AddressRefused,
    Fetcher,
    FetchFailed,
    FetchPolicy,
    GuardedNetwork,
    forbidden_address,
)
from tests.site_server import Answer, ScriptedNetwork, http_response, resolver, serve_site

PRODUCTION = FetchPolicy.for_environment(production=True)
PUBLIC = "93.184.216.34"

FORBIDDEN = ["127.0.0.1", "127.8.9.10", "10.0.0.5", "172.16.3.4", "192.168.1.1", "169.254.169.254", "100.64.0.1",
             "0.0.0.0", "255.255.255.255",  # noqa: S104 (an address refused, not bound) "224.0.0.251", "239.1.2.3", "240.0.0.1", "192.0.2.10", "198.18.0.1",
             "::1", "::", "fe80::1", "fc00::1", "fd12:3456::1", "ff02::1", "ff0e::1", "2001:db8::1",
             "::ffff:127.0.0.1", "::ffff:10.0.0.1", "2002:7f00:1::", "2002:a00:1::", "64:ff9b::7f00:1",
             "64:ff9b::a9fe:a9fe"]
ALLOWED = ["93.184.216.34", "8.8.8.8", "1.1.1.1", "2606:4700::1111", "2a00:1450:4001:82a::200e",
           "2002:5db8:d822::", "64:ff9b::808:808"]


@pytest.mark.parametrize("address", FORBIDDEN)
def test_every_address_but_global_unicast_is_forbidden(address):
    assert forbidden_address(address)


@pytest.mark.parametrize("address", ALLOWED)
def test_global_unicast_addresses_are_allowed(address):
    assert not forbidden_address(address)


@pytest.mark.parametrize("address", ["127.0.0.1", "10.1.2.3", "169.254.169.254", "::1"])
async def test_a_name_resolving_to_a_private_address_is_refused_in_production(address):
    network = ScriptedNetwork(http_response(200, b"token"))
    fetcher = Fetcher(PRODUCTION, resolve=resolver({"intranet.example.com": [address]}), network=network)
    with pytest.raises(AddressRefused) as refused:
        await fetcher.get("https://intranet.example.com/.well-known/adnet.txt", scope="intranet.example.com")
    assert "not public" in refused.value.reason
    assert network.connected == []


async def test_a_name_with_any_private_address_among_public_ones_is_refused():
    network = ScriptedNetwork(http_response(200))
    fetcher = Fetcher(PRODUCTION, resolve=resolver({"mixed.example.com": [PUBLIC, "10.0.0.1"]}), network=network)
    with pytest.raises(AddressRefused):
        await fetcher.get("https://mixed.example.com/", scope="mixed.example.com")
    assert network.connected == []


async def test_the_connection_goes_to_the_checked_address_and_tls_names_the_host():
    network = ScriptedNetwork(http_response(200, b"hello"))
    fetcher = Fetcher(PRODUCTION, resolve=resolver({"news.example.com": [PUBLIC]}), network=network)
    page = await fetcher.get("https://news.example.com/", scope="news.example.com")
    assert (page.status, page.body) == (200, b"hello")
    assert network.connected == [(PUBLIC, 443)]
    assert network.tls_names == ["news.example.com"]


async def test_a_name_that_rebinds_to_a_private_address_is_refused_at_connect_time():
    """The guard resolves when it connects: a name public for the first request and private for the next never
    gets a connection to the private address."""
    answers = iter([[PUBLIC], ["127.0.0.1"]])

    async def rebinding(host: str, port: int) -> list[str]:
        return next(answers)

    network = ScriptedNetwork(http_response(200, b"first"), http_response(200, b"second"))
    fetcher = Fetcher(PRODUCTION, resolve=rebinding, network=network)
    assert (await fetcher.get("https://rebind.example.com/", scope="rebind.example.com")).body == b"first"
    with pytest.raises(AddressRefused):
        await fetcher.get("https://rebind.example.com/ads.txt", scope="rebind.example.com")
    assert network.connected == [(PUBLIC, 443)]


async def test_a_redirect_to_a_private_address_is_refused():
    network = ScriptedNetwork(http_response(302, headers={"Location": "https://metadata.shop.example.com/latest"}))
    fetcher = Fetcher(PRODUCTION, resolve=resolver({"shop.example.com": [PUBLIC],
                                                    "metadata.shop.example.com": ["169.254.169.254"]}),
                      network=network)
    with pytest.raises(AddressRefused):
        await fetcher.get("https://shop.example.com/", scope="shop.example.com")
    assert network.connected == [(PUBLIC, 443)]


@pytest.mark.parametrize(("location", "why"), [
    ("http://shop.example.com/", "https only"),
    ("https://127.0.0.1/", "away from shop.example.com"),
    ("https://evil.example.net/", "away from shop.example.com"),
    ("https://shop.example.com:8443/", "port 8443"),
    ("https://user:pw@shop.example.com/", "credentials"),
    ("file:///etc/passwd", "https only"),
])
async def test_a_redirect_is_checked_like_the_first_url(location, why):
    network = ScriptedNetwork(http_response(301, headers={"Location": location}))
    fetcher = Fetcher(PRODUCTION, resolve=resolver({"shop.example.com": [PUBLIC]}), network=network)
    with pytest.raises(FetchFailed) as refused:
        await fetcher.get("https://shop.example.com/", scope="shop.example.com")
    assert why in refused.value.reason
    assert network.connected == [(PUBLIC, 443)]


async def test_http_is_refused_in_production_before_any_connection():
    network = ScriptedNetwork(http_response(200))
    fetcher = Fetcher(PRODUCTION, resolve=resolver({"shop.example.com": [PUBLIC]}), network=network)
    with pytest.raises(FetchFailed) as refused:
        await fetcher.get("http://shop.example.com/", scope="shop.example.com")
    assert "https only" in refused.value.reason and network.connected == []
    assert PRODUCTION.schemes == ("https",)


async def test_redirects_within_the_domain_are_followed_a_few_times_only():
    hop = http_response(302, headers={"Location": "/next"})
    fetcher = Fetcher(PRODUCTION, resolve=resolver({"shop.example.com": [PUBLIC], "www.shop.example.com": [PUBLIC]}),
                      network=ScriptedNetwork(http_response(301, headers={"Location": "https://www.shop.example.com/"}),
                                              http_response(200, b"home")))
    page = await fetcher.get("https://shop.example.com/", scope="shop.example.com")
    assert (page.url, page.body) == ("https://www.shop.example.com/", b"home")

    looping = Fetcher(PRODUCTION, resolve=resolver({"shop.example.com": [PUBLIC]}),
                      network=ScriptedNetwork(*[hop] * 10))
    with pytest.raises(FetchFailed) as refused:
        await looping.get("https://shop.example.com/", scope="shop.example.com")
    assert "more than 3 redirects" in refused.value.reason


async def test_at_most_64_kib_of_a_body_is_read():
    fetcher = Fetcher(PRODUCTION, resolve=resolver({"big.example.com": [PUBLIC]}),
                      network=ScriptedNetwork(http_response(200, b"x" * (MAX_BYTES * 4))))
    page = await fetcher.get("https://big.example.com/", scope="big.example.com")
    assert len(page.body) == MAX_BYTES and page.truncated


async def test_a_name_that_does_not_resolve_is_a_failure():
    fetcher = Fetcher(PRODUCTION, resolve=resolver({}), network=ScriptedNetwork())
    with pytest.raises(FetchFailed) as failed:
        await fetcher.get("https://nowhere.example.com/", scope="nowhere.example.com")
    assert "does not resolve" in failed.value.reason


async def test_development_reaches_a_local_site_over_http():
    with serve_site() as site:
        site.pages["/ads.txt"] = Answer(body="ok")
        fetcher = Fetcher(FetchPolicy.for_environment(production=False, port=site.port))
        page = await fetcher.get(fetcher.url("http", "127.0.0.1", "/ads.txt"), scope="127.0.0.1")
        assert (page.status, page.text) == (200, "ok")
        with pytest.raises(FetchFailed):  # the same site, as production would try it
            await Fetcher(PRODUCTION).get(f"https://127.0.0.1:{site.port}/", scope="127.0.0.1")


async def test_the_guard_is_the_network_httpcore_connects_through():
    guard = GuardedNetwork(global_addresses_only=True, resolve=resolver({"x.example.com": ["10.0.0.1"]}),
                           inner=ScriptedNetwork())
    with pytest.raises(AddressRefused):
        await guard.connect_tcp("x.example.com", 443)
    literal = GuardedNetwork(global_addresses_only=True, inner=ScriptedNetwork())  # the system's resolver
    for host in ("[::1]", "127.0.0.1", "169.254.169.254"):
        with pytest.raises(AddressRefused):
            await literal.connect_tcp(host, 443)
