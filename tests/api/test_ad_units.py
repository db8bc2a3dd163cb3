"""A site's ad units through HTTP: created, listed, read, replaced and deleted by the site's owner, each answered with
the snippet static/sdk.js reads; bad settings, a taken name and other wallets are refused and change nothing."""

from __future__ import annotations

import asyncio
import secrets

import pytest
from eth_account import Account

from adnet.delivery.models import AdUnit
from tests.auth_helpers import bearer, sign_in
from tests.factories import make_publisher, make_site

SIDEBAR = {"name": "Sidebar", "kinds": ["BANNER"], "size": "300x250", "attachedTasks": True, "placement": "sidebar"}


@pytest.fixture
async def owner(client):
    """A signed-in publisher with one site: (account, token, site)."""
    account = Account.create()
    token = await sign_in(client, account)
    site = await make_site(await make_publisher(account.address.lower()), domain=f"{secrets.token_hex(4)}.example")
    return account, token, site


async def call(client, owner, method: str, path: str = "", **body):
    account, token, site = owner
    url = f"/api/publishers/sites/{site.id}/ad-units{path}"
    if method == "GET":
        response = await client.get(url, headers=bearer(token))
    else:
        response = await client.open(url, method=method, json={"wallet": account.address, **body},
                                     headers=bearer(token))
    return response.status_code, await response.get_json()


async def test_a_unit_is_created_read_listed_replaced_and_deleted(client, owner):
    site = owner[2]
    status, unit = await call(client, owner, "POST", **SIDEBAR)
    assert status == 201 and unit["unitId"].startswith("au_")
    assert {key: unit[key] for key in SIDEBAR} == SIDEBAR and unit["siteId"] == site.id
    assert unit["snippet"] == ('<div data-adnet-slot data-kind="BANNER" data-size="300x250" '
                               'data-placement="sidebar" data-tasks></div>')
    status, polls = await call(client, owner, "POST", name="Article end", kinds=["SURVEY", "POLL", "SURVEY"],
                               placement='end "of" <article>')
    assert status == 201 and polls["size"] is None and polls["attachedTasks"] is False and polls["houseAds"] is True
    assert polls["snippet"] == ('<div data-adnet-slot data-kind="POLL,SURVEY" '
                                'data-placement="end &quot;of&quot; &lt;article&gt;"></div>')
    assert await call(client, owner, "GET", f"/{unit['unitId']}") == (200, unit)
    status, listing = await call(client, owner, "GET")
    assert status == 200 and [item["name"] for item in listing["units"]] == ["Article end", "Sidebar"]

    status, replaced = await call(client, owner, "PUT", f"/{unit['unitId']}", name="Sidebar", kinds=["BANNER", "POLL"],
                                  houseAds=False)
    assert status == 200
    assert (replaced["kinds"], replaced["size"], replaced["attachedTasks"], replaced["placement"],
            replaced["houseAds"]) == (["BANNER", "POLL"], None, False, "", False)
    assert replaced["snippet"] == '<div data-adnet-slot data-kind="BANNER,POLL" data-house="off"></div>'
    assert (await AdUnit.get(id=unit["unitId"])).house_ads is False
    assert (await call(client, owner, "POST", f"/{unit['unitId']}/delete")) == (
        200, {"unitId": unit["unitId"], "deleted": True})
    assert (await call(client, owner, "GET", f"/{unit['unitId']}"))[0] == 404
    assert await AdUnit.filter(site_id=site.id).count() == 1


@pytest.mark.parametrize(("unit", "code", "field"), [
    ({"kinds": ["BANNER"]}, "missing_field", "name"),
    ({"name": "  ", "kinds": ["BANNER"]}, "invalid_field", "name"),
    ({"name": "A", "kinds": []}, "invalid_field", "kinds"),
    ({"name": "A", "kinds": ["VIDEO"]}, "invalid_field", "kinds.0"),
    ({"name": "A", "kinds": ["BANNER"], "size": "big"}, "invalid_field", "size"),
    ({"name": "A", "kinds": ["POLL"], "size": "300x250"}, "invalid_field", "size"),
    ({"name": "A", "kinds": ["POLL"], "attachedTasks": True}, "invalid_field", "attachedTasks"),
    ({"name": "A", "kinds": ["POLL"], "houseAds": False}, "invalid_field", "houseAds"),
    ({"name": "A", "kinds": ["BANNER"], "placement": "p" * 65}, "invalid_field", "placement"),
])
async def test_bad_settings_are_refused_and_create_nothing(client, owner, unit, code, field):
    status, body = await call(client, owner, "POST", **unit)
    assert (status, body["error"], body["field"]) == (400, code, field)
    assert await AdUnit.all().count() == 0


async def test_a_name_is_taken_once_per_site_also_under_concurrent_requests(client, owner):
    answers = await asyncio.gather(*(call(client, owner, "POST", **SIDEBAR) for _ in range(5)))
    assert sorted(status for status, _ in answers) == [201, 409, 409, 409, 409]
    refused = next(body for status, body in answers if status == 409)
    assert (refused["error"], refused["field"]) == ("unit_name_taken", "name")
    _, other = await call(client, owner, "POST", name="Footer", kinds=["BANNER"])
    status, body = await call(client, owner, "PUT", f"/{other['unitId']}", **SIDEBAR)
    assert (status, body["error"]) == (409, "unit_name_taken")
    assert await AdUnit.all().count() == 2 and (await AdUnit.get(id=other["unitId"])).name == "Footer"


async def test_other_wallets_and_other_sites_are_refused(client, owner):
    _, unit = await call(client, owner, "POST", **SIDEBAR)
    stranger = Account.create()
    stranger_owner = (stranger, await sign_in(client, stranger), owner[2])
    assert (await call(client, stranger_owner, "GET"))[1]["error"] == "not_owner"
    for method, path in (("POST", ""), ("PUT", f"/{unit['unitId']}"), ("POST", f"/{unit['unitId']}/delete")):
        status, body = await call(client, stranger_owner, method, path, **SIDEBAR)
        assert (status, body["error"]) == (403, "not_owner"), (method, path)
    other_site = await make_site(await make_publisher(stranger.address.lower()))
    stranger_site = (stranger, stranger_owner[1], other_site)
    assert (await call(client, stranger_site, "GET", f"/{unit['unitId']}"))[0] == 404
    assert (await call(client, stranger_site, "PUT", f"/{unit['unitId']}", **SIDEBAR))[0] == 404
    assert await AdUnit.all().count() == 1
    assert (await client.get(f"/api/publishers/sites/{owner[2].id}/ad-units")).status_code == 401


async def test_the_openapi_document_describes_the_routes(client):
    document = await (await client.get("/openapi.json")).get_json()
    paths = document["paths"]
    assert set(paths["/api/publishers/sites/{site_id}/ad-units"]) >= {"get", "post"}
    assert set(paths["/api/publishers/sites/{site_id}/ad-units/{unit_id}"]) >= {"get", "put"}
    created = paths["/api/publishers/sites/{site_id}/ad-units"]["post"]
    assert "201" in created["responses"] and "requestBody" in created
    assert {"apiKey": ["sites:manage"]} in created["security"]
    listed = paths["/api/publishers/sites/{site_id}/ad-units"]["get"]
    assert {"apiKey": ["reports:read"]} in listed["security"] and "200" in listed["responses"]
