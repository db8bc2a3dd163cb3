"""The publisher API through HTTP: sessions and ownership on every route, registration with domain normalisation
(which never blocks another wallet: tests/api/test_site_verification.py), the sites list with its figures, and the
balance."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest
from eth_account import Account
from tortoise.transactions import in_transaction

from adnet.accounts.models import Publisher, Site
from adnet.core.ids import new_id
from adnet.delivery.models import SiteDailyStat
from adnet.money import ledger
from tests.auth_helpers import bearer, sign_in
from tests.factories import G, fund, make_publisher, make_site

ROUTES = [
    ("POST", "/api/publishers/register", {"domain": "example.com"}),
    ("GET", "/api/publishers/sites", {}),
    ("GET", "/api/publishers/balance", {"siteId": "SITE"}),
    ("POST", "/api/publishers/topup", {"siteId": "SITE", "txHash": "0x" + "ab" * 32}),
    ("POST", "/api/publishers/topup/prepare", {"siteId": "SITE", "amount": "1"}),
    ("POST", "/api/publishers/withdraw", {"siteId": "SITE", "amount": "1"}),
    ("POST", "/api/publishers/exchange", {"siteId": "SITE", "from": "G$", "amount": "1"}),
]
SITE_ROUTES = [route for route in ROUTES if "siteId" in route[2]]


async def call(client, method: str, path: str, params: dict, token: str | None = None):
    headers = bearer(token) if token else {}
    if method == "GET":
        return await client.get(path, query_string=params, headers=headers)
    return await client.post(path, json=params, headers=headers)


async def error_of(response) -> tuple[int, str]:
    return response.status_code, (await response.get_json())["error"]


async def register(client, token: str, wallet: str, domain: str, **extra):
    return await client.post("/api/publishers/register", json={"wallet": wallet, "domain": domain, **extra},
                             headers=bearer(token))


@pytest.fixture
async def owner(client):
    """A signed-in publisher with one site: (account, token, site)."""
    account = Account.create()
    token = await sign_in(client, account)
    site = await make_site(await make_publisher(account.address.lower()))
    return account, token, site


async def test_every_route_needs_a_session(client, owner):
    account, _, site = owner
    for method, path, params in ROUTES:
        params = {k: site.id if v == "SITE" else v for k, v in params.items()}
        response = await call(client, method, path, {"wallet": account.address, **params})
        assert await error_of(response) == (401, "auth_required"), path
    assert await Publisher.all().count() == 1 and await Site.all().count() == 1


async def test_every_route_refuses_another_wallet_than_the_sessions(client, owner):
    _, token, _ = owner
    victim = await make_site()
    victim_wallet = (await victim.publisher).wallet
    for method, path, params in ROUTES:
        params = {k: victim.id if v == "SITE" else v for k, v in params.items()}
        response = await call(client, method, path, {"wallet": victim_wallet, **params}, token)
        assert await error_of(response) == (403, "not_owner"), path
        assert (await response.get_json())["field"] == "wallet"


async def test_every_site_route_refuses_a_site_of_another_wallet(client, owner):
    account, token, _ = owner
    victim = await make_site()
    await fund(ledger.site(victim.id), 5 * G)
    for method, path, params in SITE_ROUTES:
        params = {k: victim.id if v == "SITE" else v for k, v in params.items()}
        response = await call(client, method, path, {"wallet": account.address, **params}, token)
        assert await error_of(response) == (403, "not_owner"), path
        assert (await response.get_json())["field"] == "siteId"
    assert await ledger.balance(ledger.site(victim.id)) == 5 * G


async def test_an_unknown_site_is_404(client, owner):
    account, token, _ = owner
    for site_id in (new_id("site"), "nonsense"):
        response = await client.get("/api/publishers/balance", query_string={"wallet": account.address,
                                                                             "siteId": site_id}, headers=bearer(token))
        assert await error_of(response) == (404, "not_found")


async def test_the_wallet_is_compared_in_one_canonical_form(client, owner):
    account, token, site = owner
    forms = [account.address, account.address.lower(), "0x" + account.address[2:].upper()]
    for form in forms:
        response = await client.get("/api/publishers/balance", query_string={"wallet": form, "siteId": site.id},
                                    headers=bearer(token))
        assert response.status_code == 200, form
    bad_checksum = account.address[:2] + account.address[2:].swapcase()
    if bad_checksum[2:] not in (account.address[2:].lower(), account.address[2:].upper()):
        response = await client.get("/api/publishers/balance", query_string={"wallet": bad_checksum,
                                                                             "siteId": site.id}, headers=bearer(token))
        assert await error_of(response) == (400, "invalid_wallet")
    assert await Publisher.all().count() == 1


async def test_the_first_registration_creates_the_publisher_and_later_ones_add_sites(client):
    account = Account.create()
    token = await sign_in(client, account)
    first = await register(client, token, account.address, "https://www.Example.com:8443/blog?x=1", name="Blog")
    assert first.status_code == 201
    body = await first.get_json()
    assert body["domain"] == "example.com"
    assert body["siteId"].startswith("site_") and body["publisherId"].startswith("pub_")
    second = await register(client, token, account.address.lower(), "news.example.org")
    assert second.status_code == 201
    assert (await second.get_json())["publisherId"] == body["publisherId"]
    again = await register(client, token, account.address, "EXAMPLE.com.")
    assert again.status_code == 200
    assert await again.get_json() == body
    publisher = await Publisher.get(id=body["publisherId"])
    assert publisher.wallet == account.address.lower()
    assert sorted(await Site.filter(publisher=publisher).values_list("domain", flat=True)) == [
        "example.com", "news.example.org"]
    assert (await Site.get(id=body["siteId"])).name == "Blog"


async def test_domains_are_normalised_to_one_form(client):
    token_owner = Account.create()
    token = await sign_in(client, token_owner)
    cases = {
        "Bücher.de": "xn--bcher-kva.de",
        "http://WWW.Bücher.de/katalog": "xn--bcher-kva.de",
        "xn--bcher-kva.de": "xn--bcher-kva.de",
        "https://例え.テスト/": "xn--r8jz45g.xn--zckzah",
        "shop.example.net:80": "shop.example.net",
    }
    for raw, expected in cases.items():
        response = await register(client, token, token_owner.address, raw)
        assert response.status_code in (200, 201), raw
        assert (await response.get_json())["domain"] == expected, raw


async def test_what_is_not_a_domain_is_refused(client):
    account = Account.create()
    token = await sign_in(client, account)
    for raw in ("", "intranet", "ftp://example.com", "user@example.com", "exa mple.com", "-bad.example", "a..b",
                "x" * 64 + ".com", "javascript:alert(1)", "10.1"):
        response = await register(client, token, account.address, raw)
        assert await error_of(response) == (400, "invalid_domain"), raw
    response = await register(client, token, account.address, "example.com", name="n" * 121)
    assert await error_of(response) == (400, "invalid_name")
    assert await Publisher.all().count() == 0 and await Site.all().count() == 0


async def test_development_registers_local_names(client):
    account = Account.create()
    token = await sign_in(client, account)
    for raw, expected in {"localhost": "localhost", "http://127.0.0.1:8000/": "127.0.0.1", "[::1]": "::1",
                          "shop.test": "shop.test"}.items():
        response = await register(client, token, account.address, raw)
        assert response.status_code == 201, raw
        assert (await response.get_json())["domain"] == expected


async def test_concurrent_registrations_of_one_domain_give_each_wallet_one_site(client):
    accounts = [Account.create() for _ in range(5)]
    tokens = [await sign_in(client, account) for account in accounts]
    responses = await asyncio.gather(*(
        register(client, token, account.address, "contested.example")
        for account, token in zip(accounts * 4, tokens * 4, strict=True)
    ))
    statuses = sorted(response.status_code for response in responses)
    assert statuses.count(201) == 5 and statuses.count(200) == 15
    assert await Site.filter(domain="contested.example").count() == 5
    assert await Site.filter(domain="contested.example", verified=True).count() == 0
    assert await Publisher.all().count() == 5


async def test_sites_lists_the_wallets_sites_with_their_figures(client, clock):
    account = Account.create()
    token = await sign_in(client, account)
    publisher = await make_publisher(account.address.lower())
    site = await make_site(publisher, domain="first.example", now=clock.now() - timedelta(days=3))
    quiet = await make_site(publisher, domain="quiet.example", now=clock.now())
    await make_site(domain="stranger.example")
    today, yesterday = clock.now().date(), clock.now().date() - timedelta(days=1)
    await SiteDailyStat.create(site=site, day=yesterday, impressions=100, clicks=4)
    await SiteDailyStat.create(site=site, day=today, impressions=7, clicks=1)
    await fund(ledger.site(site.id), 3 * G, now=clock.now() - timedelta(days=1))
    await fund(ledger.site(site.id), G // 4, now=clock.now())

    response = await client.get("/api/publishers/sites", query_string={"wallet": account.address},
                                headers=bearer(token))
    assert response.status_code == 200
    body = await response.get_json()
    assert body["wallet"] == account.address
    assert [entry["siteId"] for entry in body["sites"]] == [site.id, quiet.id]
    first = body["sites"][0]
    assert first["domain"] == "first.example"
    assert first["today"] == {"impressions": 7, "clicks": 1, "earned": "0.25"}
    assert first["lifetime"] == {"impressions": 107, "clicks": 5, "earned": "3.25"}
    assert body["sites"][1]["lifetime"] == {"impressions": 0, "clicks": 0, "earned": "0"}


async def test_balance_reports_earned_claimable_and_pending(client, owner, clock):
    account, token, site = owner
    await fund(ledger.site(site.id), 10 * G)
    await fund(ledger.site(site.id, "SOV"), 2 * G)
    async with in_transaction():  # a top-up is money in, not revenue
        await ledger.book("deposit", "0x" + "01" * 32, [(ledger.external("G$"), -4 * G), (ledger.site(site.id), 4 * G)],
                          now=clock.now())
    response = await client.get("/api/publishers/balance", query_string={"wallet": account.address,
                                                                         "siteId": site.id}, headers=bearer(token))
    assert response.status_code == 200
    assert await response.get_json() == {
        "siteId": site.id, "token": "G$", "earned": "10", "claimable": "14", "pendingWithdrawals": "0",
        "sov": {"claimable": "2", "pendingWithdrawals": "0"},
    }


async def test_a_session_cookie_works_like_the_bearer(client, owner):
    account, token, site = owner
    response = await client.get("/api/publishers/balance", query_string={"wallet": account.address,
                                                                         "siteId": site.id},
                                headers={"Cookie": f"adnet_session={token}"})
    assert response.status_code == 200


async def test_identifiers_are_random_not_counted(client):
    account = Account.create()
    token = await sign_in(client, account)
    bodies = [await (await register(client, token, account.address, f"s{index}.example")).get_json()
              for index in range(3)]
    site_ids = [body["siteId"] for body in bodies]
    assert all(site_id.startswith("site_") and len(site_id) == len("site_") + 22 for site_id in site_ids)
    assert len(set(site_ids)) == 3
    await Site.filter(id=site_ids[-1]).delete()
    again = await (await register(client, token, account.address, "s2.example")).get_json()
    assert again["siteId"] not in site_ids  # never reused after a delete
