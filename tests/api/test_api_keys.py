"""API keys through HTTP: issued once with a session and shown once, stored hashed, used as
``Authorization: Bearer`` on the publisher and advertiser routes within their scopes (403 ``scope_denied``
outside), refused once revoked, never able to make keys, and limited per key; the OpenAPI document names the
scheme and scope of each route."""

from __future__ import annotations

import asyncio
import hashlib

import pytest
from eth_account import Account

from adnet.accounts.models import ApiKey
from adnet.app import create_app
from tests.api.test_advertisers import campaign_settings
from tests.auth_helpers import bearer, sign_in
from tests.conftest import make_settings
from tests.factories import make_publisher, make_site


async def issue(client, token: str, *scopes: str, name: str = "deploy script") -> dict:
    response = await client.post("/api/keys", json={"name": name, "scopes": list(scopes)}, headers=bearer(token))
    assert response.status_code == 201, await response.get_json()
    return await response.get_json()


@pytest.fixture
async def wallet(client):
    """A signed-in wallet: (account, session token)."""
    account = Account.create()
    return account, await sign_in(client, account)


async def test_a_key_is_shown_once_and_stored_as_a_hash(client, wallet):
    account, session = wallet
    issued = await issue(client, session, "sites:manage", "reports:read")

    assert issued["token"].startswith(issued["keyId"] + ".")
    assert issued["scopes"] == ["reports:read", "sites:manage"] and issued["active"] is True
    stored = await ApiKey.get(id=issued["keyId"])
    assert stored.wallet == account.address.lower()
    assert stored.secret_hash == hashlib.sha256(issued["token"].encode()).hexdigest()
    assert issued["token"].split(".")[1] not in stored.secret_hash
    listed = await (await client.get("/api/keys", headers=bearer(session))).get_json()
    assert [key["keyId"] for key in listed["keys"]] == [issued["keyId"]]
    assert "token" not in listed["keys"][0]


async def test_a_key_acts_as_its_wallet_within_its_scopes(client, wallet):
    account, session = wallet
    site = await make_site(await make_publisher(account.address.lower()))
    reader = (await issue(client, session, "reports:read"))["token"]
    manager = (await issue(client, session, "sites:manage"))["token"]

    listed = await client.get("/api/publishers/sites", query_string={"wallet": account.address},
                              headers=bearer(reader))
    assert listed.status_code == 200
    assert [row["siteId"] for row in (await listed.get_json())["sites"]] == [site.id]

    refused = await client.post("/api/publishers/register", json={"wallet": account.address,
                                                                  "domain": "new.example"}, headers=bearer(reader))
    assert refused.status_code == 403
    assert await refused.get_json() == {"error": "scope_denied", "message": refused_message("sites:manage"),
                                        "scope": "sites:manage"}
    registered = await client.post("/api/publishers/register", json={"wallet": account.address,
                                                                     "domain": "new.example"},
                                   headers=bearer(manager))
    assert registered.status_code == 201
    not_read = await client.get("/api/publishers/sites", query_string={"wallet": account.address},
                                headers=bearer(manager))
    assert not_read.status_code == 403 and (await not_read.get_json())["scope"] == "reports:read"


def refused_message(scope: str) -> str:
    return f"This API key does not hold the scope {scope}."


async def test_a_key_is_its_wallet_and_no_other(client, wallet):
    account, session = wallet
    other_site = await make_site(await make_publisher(Account.create().address.lower()))
    key = (await issue(client, session, "reports:read"))["token"]

    response = await client.get("/api/publishers/balance", query_string={"wallet": account.address,
                                                                         "siteId": other_site.id},
                                headers=bearer(key))
    assert response.status_code == 403 and (await response.get_json())["error"] == "not_owner"


async def test_campaigns_and_funds_need_the_campaigns_scope(client, wallet, clock):
    _, session = wallet
    reader = (await issue(client, session, "reports:read"))["token"]
    manager = (await issue(client, session, "campaigns:manage", "reports:read"))["token"]

    assert (await client.post("/api/advertisers/register", json={"name": "Shop"},
                              headers=bearer(reader))).status_code == 403
    assert (await client.post("/api/advertisers/register", json={"name": "Shop"},
                              headers=bearer(manager))).status_code == 201
    refused = await client.post("/api/advertisers/campaigns", json=campaign_settings(clock), headers=bearer(reader))
    assert refused.status_code == 403 and (await refused.get_json())["scope"] == "campaigns:manage"
    created = await client.post("/api/advertisers/campaigns", json=campaign_settings(clock), headers=bearer(manager))
    assert created.status_code == 201
    listed = await (await client.get("/api/advertisers/campaigns", headers=bearer(reader))).get_json()
    assert [campaign["id"] for campaign in listed["campaigns"]] == [(await created.get_json())["id"]]
    withdraw = await client.post("/api/advertisers/withdraw", json={"amount": "1"}, headers=bearer(reader))
    assert withdraw.status_code == 403


async def test_a_revoked_key_is_refused_on_its_next_request(client, wallet, clock):
    account, session = wallet
    issued = await issue(client, session, "reports:read")
    query = {"wallet": account.address}
    assert (await client.get("/api/publishers/sites", query_string=query,
                             headers=bearer(issued["token"]))).status_code == 200

    revoked = await client.post(f"/api/keys/{issued['keyId']}/revoke", json={}, headers=bearer(session))
    assert revoked.status_code == 200
    body = await revoked.get_json()
    assert body["active"] is False and body["revokedAt"] == clock.now().isoformat().replace("+00:00", "Z")

    after = await client.get("/api/publishers/sites", query_string=query, headers=bearer(issued["token"]))
    assert after.status_code == 401 and (await after.get_json())["error"] == "auth_required"
    again = await client.post(f"/api/keys/{issued['keyId']}/revoke", json={}, headers=bearer(session))
    assert again.status_code == 200 and (await again.get_json())["revokedAt"] == body["revokedAt"]


async def test_only_the_owner_revokes_a_key(client, wallet):
    _, session = wallet
    issued = await issue(client, session, "reports:read")
    stranger = await sign_in(client, Account.create())

    refused = await client.post(f"/api/keys/{issued['keyId']}/revoke", json={}, headers=bearer(stranger))
    assert refused.status_code == 403 and (await refused.get_json())["error"] == "not_owner"
    unknown = await client.post("/api/keys/key_nosuchkey123/revoke", json={}, headers=bearer(session))
    assert unknown.status_code == 404
    assert (await ApiKey.get(id=issued["keyId"])).revoked_at is None


async def test_a_forged_or_altered_token_is_refused(client, wallet):
    account, session = wallet
    issued = await issue(client, session, "reports:read")
    key_id, secret = issued["token"].split(".")
    altered = f"{key_id}.{secret[:-1]}{'0' if secret[-1] != '0' else '1'}"
    for token in (altered, f"{key_id}.", "key_" + "a" * 22 + "." + secret):
        response = await client.get("/api/publishers/sites", query_string={"wallet": account.address},
                                    headers=bearer(token))
        assert response.status_code == 401, token


async def test_a_key_never_makes_keys_or_acts_on_session_routes(client, wallet):
    _, session = wallet
    key = (await issue(client, session, "reports:read", "sites:manage", "campaigns:manage"))["token"]

    for method, path in (("POST", "/api/keys"), ("GET", "/api/keys"), ("GET", "/api/auth/me"),
                         ("POST", "/api/auth/logout")):
        body = {"name": "wider", "scopes": ["reports:read"]} if path == "/api/keys" else {}
        if method == "POST":
            response = await client.post(path, json=body, headers=bearer(key))
        else:
            response = await client.get(path, headers=bearer(key))
        assert response.status_code == 403, path
        assert (await response.get_json())["error"] == "session_required"
    assert await ApiKey.all().count() == 1


@pytest.mark.parametrize("body, field", [
    ({"name": "x", "scopes": []}, "scopes"),
    ({"name": "x", "scopes": ["admin"]}, "scopes.0"),
    ({"name": "   ", "scopes": ["reports:read"]}, "name"),
    ({"scopes": ["reports:read"]}, "name"),
    ({"name": "x" * 61, "scopes": ["reports:read"]}, "name"),
])
async def test_a_bad_key_request_is_refused_and_issues_nothing(client, wallet, body, field):
    _, session = wallet
    response = await client.post("/api/keys", json=body, headers=bearer(session))
    assert response.status_code == 400
    assert (await response.get_json())["field"] == field
    assert await ApiKey.all().count() == 0


async def test_keys_need_a_session(client):
    assert (await client.get("/api/keys")).status_code == 401
    assert (await client.post("/api/keys", json={"name": "x", "scopes": ["reports:read"]})).status_code == 401


@pytest.mark.parametrize("store", ["process", "redis"])
async def test_each_key_has_its_own_limit_also_under_concurrency(database_url, tmp_path, clock, request, store):
    shared = {"ADNET_REDIS_URL": request.getfixturevalue("redis_url")} if store == "redis" else {}
    app = create_app(make_settings(database_url, tmp_path, ADNET_RATE_LIMIT_API_KEY="3/60", **shared), clock=clock)
    async with app.test_app() as test_app:
        client = test_app.test_client()
        account = Account.create()
        session = await sign_in(client, account)
        first = (await issue(client, session, "reports:read"))["token"]
        second = (await issue(client, session, "reports:read"))["token"]
        query = {"wallet": account.address}

        answers = await asyncio.gather(*[
            client.get("/api/publishers/sites", query_string=query, headers=bearer(first),
                       scope_base={"client": (f"203.0.113.{n}", 4000)}) for n in range(8)])
        other_key = await client.get("/api/publishers/sites", query_string=query, headers=bearer(second))
        by_session = await client.get("/api/publishers/sites", query_string=query, headers=bearer(session))

    assert sorted(answer.status_code for answer in answers) == [200] * 3 + [429] * 5
    limited = next(answer for answer in answers if answer.status_code == 429)
    assert (await limited.get_json())["error"] == "rate_limited" and int(limited.headers["Retry-After"]) >= 1
    assert other_key.status_code == 200 and by_session.status_code == 200


async def test_the_openapi_document_names_the_key_scheme_and_scope(client):
    document = await (await client.get("/openapi.json")).get_json()
    schemes = document["components"]["securitySchemes"]
    assert schemes["apiKey"]["type"] == "http" and schemes["apiKey"]["scheme"] == "bearer"
    paths = document["paths"]
    assert {"apiKey": ["reports:read"]} in paths["/api/publishers/sites"]["get"]["security"]
    assert {"apiKey": ["sites:manage"]} in paths["/api/publishers/register"]["post"]["security"]
    assert {"apiKey": ["campaigns:manage"]} in paths["/api/advertisers/campaigns"]["post"]["security"]
    assert "403" in paths["/api/publishers/register"]["post"]["responses"]
    assert all("apiKey" not in requirement for requirement in paths["/api/keys"]["post"]["security"])
    issued = paths["/api/keys"]["post"]["responses"]["201"]["content"]["application/json"]["schema"]
    assert "token" in issued["properties"]
    listed = paths["/api/keys"]["get"]["responses"]["200"]["content"]["application/json"]["schema"]
    assert listed["properties"]["keys"]["items"] == {"$ref": "#/components/schemas/ApiKeyOut"}
    assert "keyId" in document["components"]["schemas"]["ApiKeyOut"]["properties"]
    assert "token" not in document["components"]["schemas"]["ApiKeyOut"]["properties"]
