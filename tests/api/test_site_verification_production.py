"""Site ownership through HTTP in production: names no one can own publicly are refused at registration, and a
verification never fetches over http nor connects to a private, loopback or link-local address, not even through
a redirect. The app runs with the test settings switched to production; its fetcher keeps the production policy
with the test's resolver and a scripted network that records every connection."""

from __future__ import annotations

from dataclasses import replace

import pytest
from eth_account import Account

from adnet.accounts.fetching import Fetcher, FetchPolicy
from adnet.accounts.models import Publisher, Site, SiteState
from adnet.accounts.proofs import META_NAME
from tests.auth_helpers import bearer, sign_in
from tests.conftest import make_settings
from tests.site_server import ScriptedNetwork, http_response, resolver

PUBLIC = "93.184.216.34"


@pytest.fixture
def settings(database_url, tmp_path):
    """The test settings as production reads them (the development chain stays: only the environment changes)."""
    return make_settings(database_url, tmp_path).model_copy(update={"env": "production"})


@pytest.fixture
async def owner(client):
    account = Account.create()
    return account, await sign_in(client, account)


def network_with(services, table: dict[str, list[str]], *responses: bytes) -> ScriptedNetwork:
    """Have the app's fetcher resolve from ``table`` and connect to a scripted network (production policy kept)."""
    network = ScriptedNetwork(*responses)
    services.site_checks = replace(services.site_checks, fetcher=Fetcher(
        FetchPolicy.for_environment(production=True), resolve=resolver(table), network=network))
    return network


async def register(client, owner, domain: str):
    account, token = owner
    return await client.post("/api/publishers/register", json={"wallet": account.address, "domain": domain},
                             headers=bearer(token))


async def verify(client, owner, site_id: str):
    account, token = owner
    return await client.post(f"/api/publishers/sites/{site_id}/verify", json={"wallet": account.address},
                             headers=bearer(token))


REFUSED = {
    "localhost": "reserved_domain", "http://localhost:3000/": "reserved_domain", "shop.localhost": "reserved_domain",
    "news.test": "reserved_domain", "x.invalid": "reserved_domain", "site.example": "reserved_domain",
    "printer.local": "reserved_domain", "abc.onion": "reserved_domain", "nas.home.arpa": "reserved_domain",
    "db.internal": "reserved_domain", "localhost.localdomain": "reserved_domain",
    "1.0.0.127.in-addr.arpa": "reserved_domain", "example.com": "reserved_domain", "127.0.0.1": "ip_address_domain",
    "http://10.0.0.1:8080/": "ip_address_domain",
    "169.254.169.254": "ip_address_domain", "[::1]": "ip_address_domain",
    "https://[2606:4700::1111]/": "ip_address_domain", "example": "invalid_domain", "www.example": "invalid_domain",
}


async def test_names_no_one_owns_publicly_are_refused(client, owner):
    for domain, code in REFUSED.items():
        response = await register(client, owner, domain)
        body = await response.get_json()
        assert (response.status_code, body["error"], body["field"]) == (400, code, "domain"), domain
    assert await Site.all().count() == 0 and await Publisher.all().count() == 0


async def test_a_public_name_registers(client, owner):
    response = await register(client, owner, "https://www.News.newsroom.io/")
    assert response.status_code == 201
    assert (await response.get_json())["domain"] == "news.newsroom.io"


@pytest.mark.parametrize("address", ["127.0.0.1", "10.0.0.5", "169.254.169.254", "::1"])
async def test_a_domain_resolving_to_a_private_address_is_never_fetched(client, owner, services, address):
    site_id = (await (await register(client, owner, "intranet.newsroom.io")).get_json())["siteId"]
    network = network_with(services, {"intranet.newsroom.io": [address]}, http_response(200, b"anything"))
    response = await verify(client, owner, site_id)
    body = await response.get_json()
    assert (response.status_code, body["error"]) == (400, "fetch_failed")
    assert {check["result"] for check in body["checks"]} == {
        "intranet.newsroom.io resolves to an address that is not public"}
    assert all(check["url"].startswith("https://intranet.newsroom.io/") for check in body["checks"])
    assert network.connected == []
    assert (await Site.get(id=site_id)).state == SiteState.UNVERIFIED


async def test_a_redirect_to_a_private_address_or_to_http_is_not_followed(client, owner, services):
    site_id = (await (await register(client, owner, "shop.newsroom.io")).get_json())["siteId"]
    token = (await Site.get(id=site_id)).verification_token
    page = f'<html><head><meta name="{META_NAME}" content="{token}"></head></html>'.encode()
    network = network_with(
        services, {"shop.newsroom.io": [PUBLIC], "admin.shop.newsroom.io": ["10.0.0.7"]},
        http_response(302, headers={"Location": "https://admin.shop.newsroom.io/"}),
        http_response(301, headers={"Location": "http://shop.newsroom.io/.well-known/adnet.txt"}),
        http_response(302, headers={"Location": f"https://shop.newsroom.io:{8443}/ads.txt"}),
        http_response(200, page))
    response = await verify(client, owner, site_id)
    body = await response.get_json()
    assert (response.status_code, body["error"]) == (400, "fetch_failed")
    assert [check["result"] for check in body["checks"]] == [
        "admin.shop.newsroom.io resolves to an address that is not public",
        "http URL refused: adnet fetches https only",
        "a URL on port 8443: adnet fetches the default port only"]
    assert network.connected == [(PUBLIC, 443)] * 3  # never the private address, never port 80 or 8443
    assert network.tls_names == ["shop.newsroom.io"] * 3


async def test_a_public_site_verifies_over_https(client, owner, services):
    site_id = (await (await register(client, owner, "shop.newsroom.io")).get_json())["siteId"]
    token = (await Site.get(id=site_id)).verification_token
    network = network_with(services, {"shop.newsroom.io": [PUBLIC]}, http_response(
        200, f'<html><head><meta name="{META_NAME}" content="{token}"></head></html>'.encode()))
    response = await verify(client, owner, site_id)
    assert response.status_code == 200
    assert (await response.get_json())["verification"]["state"] == "verified"
    assert network.connected == [(PUBLIC, 443)] and network.tls_names == ["shop.newsroom.io"]
