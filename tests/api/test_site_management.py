"""Managing sites through HTTP: rename, deactivate (serving stops at once, through the change announcement and the
serving index) and reactivate, delete only when nothing is owed (and restore by registering again), with a
session or a ``sites:manage`` API key; refusals change nothing."""

from __future__ import annotations

import asyncio
import secrets

import pytest
from eth_account import Account

from adnet.accounts.models import Site, SiteState, VerifiedDomain
from adnet.core.amounts import Token
from adnet.money import ledger
from tests.auth_helpers import bearer, sign_in
from tests.factories import G, fund, make_campaign, make_creative, make_publisher, make_site
from tests.waiting import eventually


@pytest.fixture
async def owner(client):
    """A signed-in publisher with one site: (account, token, site)."""
    account = Account.create()
    token = await sign_in(client, account)
    site = await make_site(await make_publisher(account.address.lower()), domain=f"{secrets.token_hex(4)}.example")
    return account, token, site


async def act(client, owner, action: str, site_id: str | None = None, **body):
    account, token, site = owner
    path = f"/api/publishers/sites/{site_id or site.id}"
    payload = {"wallet": account.address, **body}
    if action == "rename":
        response = await client.patch(path, json=payload, headers=bearer(token))
    else:
        response = await client.post(f"{path}/{action}", json=payload, headers=bearer(token))
    return response.status_code, await response.get_json()


async def serve_status(client, site) -> int:
    response = await client.get("/api/serve", query_string={"siteId": site.id},
                                headers={"Origin": f"https://{site.domain}"})
    return response.status_code


async def until_serve_answers(client, site, status: int) -> None:
    """Wait for the serving index's job to hear the announced change: it rebuilds at once when woken."""
    async def answered() -> bool:
        return await serve_status(client, site) == status

    await eventually(answered, f"/api/serve answering {status} for the site")


async def test_rename(client, owner):
    account, token, site = owner
    status, body = await act(client, owner, "rename", name="  My news  ")
    assert status == 200
    assert body == {"siteId": site.id, "domain": site.domain, "name": "My news", "active": True, "deletedAt": None}
    listed = await (await client.get("/api/publishers/sites", query_string={"wallet": account.address},
                                     headers=bearer(token))).get_json()
    assert listed["sites"][0]["name"] == "My news"

    status, body = await act(client, owner, "rename", name="n" * 121)
    assert (status, body["error"], body["field"]) == (400, "invalid_name", "name")
    status, body = await act(client, owner, "rename")
    assert (status, body["error"]) == (400, "missing_field")
    assert (await Site.get(id=site.id)).name == "My news"


async def test_deactivating_stops_serving_at_once_and_reactivating_serves_again(client, owner):
    _, _, site = owner
    await make_creative(await make_campaign())
    await client.app.extensions["adnet"].serving.rebuild()
    assert await serve_status(client, site) == 200

    status, body = await act(client, owner, "deactivate")
    assert status == 200 and body["active"] is False
    await until_serve_answers(client, site, 404)
    assert (await act(client, owner, "deactivate"))[0] == 200  # again: nothing changes

    status, body = await act(client, owner, "reactivate")
    assert status == 200 and body["active"] is True
    await until_serve_answers(client, site, 200)


async def test_another_wallets_site_or_an_unknown_one_is_refused(client, owner):
    _, _, site = owner
    stranger_site = await make_site(await make_publisher(Account.create().address.lower()), name="Theirs")
    for action, extra in (("rename", {"name": "Mine"}), ("deactivate", {}), ("delete", {})):
        status, body = await act(client, owner, action, stranger_site.id, **extra)
        assert (status, body["error"]) == (403, "not_owner"), action
        status, body = await act(client, owner, action, "site_unknown0000000000", **extra)
        assert status == 404, action
    unchanged = await Site.get(id=stranger_site.id)
    assert (unchanged.name, unchanged.active, unchanged.deleted_at) == ("Theirs", True, None)
    _, token, _ = owner
    other = Account.create()
    response = await client.post(f"/api/publishers/sites/{site.id}/deactivate", json={"wallet": other.address},
                                 headers=bearer(token))
    assert response.status_code == 403 and (await Site.get(id=site.id)).active is True


async def test_a_site_that_is_owed_money_cannot_be_deleted(client, owner):
    _, _, site = owner
    await fund(ledger.site(site.id), 3 * G)
    await fund(ledger.site(site.id, Token.SOV), G // 2)

    status, body = await act(client, owner, "delete")
    assert status == 409
    assert body == {"error": "site_has_balance", "message": body["message"],
                    "claimable": {"G$": "3", "SOV": "0.5"}, "pendingWithdrawals": 0}
    assert (await Site.get(id=site.id)).deleted_at is None


async def test_a_site_with_an_unredeemed_withdrawal_cannot_be_deleted(client, owner):
    account, token, site = owner
    await fund(ledger.site(site.id), 2 * G)
    withdrawn = await client.post("/api/publishers/withdraw", json={"wallet": account.address, "siteId": site.id,
                                                                    "amount": "2"}, headers=bearer(token))
    assert withdrawn.status_code == 201
    status, body = await act(client, owner, "delete")
    assert status == 409 and body["pendingWithdrawals"] == 1 and body["claimable"] == {}


async def test_deleting_stops_serving_frees_the_domain_and_registering_restores(client, owner, clock):
    account, token, site = owner
    assert site.verified  # it holds its domain
    await make_creative(await make_campaign())
    await client.app.extensions["adnet"].serving.rebuild()
    assert await serve_status(client, site) == 200

    status, body = await act(client, owner, "delete")
    assert status == 200 and body["active"] is False
    assert body["deletedAt"] == clock.now().isoformat().replace("+00:00", "Z")
    await until_serve_answers(client, site, 404)
    deleted = await Site.get(id=site.id)
    assert deleted.verified is False and deleted.state == SiteState.LAPSED
    assert await VerifiedDomain.filter(domain=site.domain).count() == 0
    listed = await (await client.get("/api/publishers/sites", query_string={"wallet": account.address},
                                     headers=bearer(token))).get_json()
    assert listed["sites"] == []
    for action in ("rename", "reactivate", "delete", "verify"):
        status, body = await act(client, owner, action, name="x")
        assert (status, body["error"]) == (409, "site_deleted"), action
    # Its balance stays readable (and withdrawable) by id.
    balance = await client.get("/api/publishers/balance", query_string={"wallet": account.address,
                                                                        "siteId": site.id}, headers=bearer(token))
    assert balance.status_code == 200

    again = await client.post("/api/publishers/register", json={"wallet": account.address, "domain": site.domain,
                                                                "name": "Back"}, headers=bearer(token))
    assert again.status_code == 201 and (await again.get_json())["siteId"] == site.id
    restored = await Site.get(id=site.id)
    assert (restored.deleted_at, restored.active, restored.name) == (None, True, "Back")
    await until_serve_answers(client, site, 200)


async def test_concurrent_deletes_delete_once(client, owner):
    answers = await asyncio.gather(*[act(client, owner, "delete") for _ in range(5)])
    assert sorted(status for status, _ in answers) == [200] + [409] * 4
    assert {body["error"] for status, body in answers if status == 409} == {"site_deleted"}


async def test_an_api_key_manages_sites_only_with_its_scope(client, owner):
    account, token, site = owner
    keys = {}
    for scope in ("reports:read", "sites:manage"):
        issued = await client.post("/api/keys", json={"name": scope, "scopes": [scope]}, headers=bearer(token))
        keys[scope] = (await issued.get_json())["token"]
    path = f"/api/publishers/sites/{site.id}/deactivate"
    refused = await client.post(path, json={"wallet": account.address}, headers=bearer(keys["reports:read"]))
    assert refused.status_code == 403 and (await refused.get_json())["error"] == "scope_denied"
    assert (await Site.get(id=site.id)).active is True
    done = await client.post(path, json={"wallet": account.address}, headers=bearer(keys["sites:manage"]))
    assert done.status_code == 200 and (await Site.get(id=site.id)).active is False


async def test_content_categories_take_iab_content_taxonomy_ids(client, owner):
    account, token, site = owner
    path = f"/api/publishers/sites/{site.id}/content"
    response = await client.put(path, json={"wallet": account.address, "contentCategories": ["599", "596", "599"]},
                                headers=bearer(token))
    assert response.status_code == 200
    assert await response.get_json() == {"siteId": site.id, "contentCategories": [
        {"id": "599", "parent": "596", "name": "Computing", "label": "Technology & Computing / Computing"},
        {"id": "596", "parent": None, "name": "Technology & Computing", "label": "Technology & Computing"}]}
    refused = await client.put(path, json={"wallet": account.address, "contentCategories": ["596", "1448"]},
                               headers=bearer(token))
    body = await refused.get_json()
    assert (refused.status_code, body["error"], body["field"]) == (400, "unknown_content_category",
                                                                   "contentCategories")
    too_many = await client.put(path, json={"wallet": account.address, "contentCategories": [str(n) for n in
                                                                                           range(597, 608)]},
                                headers=bearer(token))
    assert too_many.status_code == 400
    other = await sign_in(client, Account.create())
    assert (await client.put(path, json={"wallet": account.address, "contentCategories": []},
                             headers=bearer(other))).status_code in (400, 403)
    assert (await Site.get(id=site.id)).content_categories == ["599", "596"]

    listed = await (await client.get("/api/content-categories")).get_json()
    assert (listed["taxonomy"], listed["version"]) == ("IAB Tech Lab Content Taxonomy", "3.1")
    assert len(listed["categories"]) == 704 and {"id": "596", "parent": None, "name": "Technology & Computing",
                                                 "label": "Technology & Computing"} in listed["categories"]
