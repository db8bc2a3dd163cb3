"""API keys in the portal: issued with its token shown once (htmx fragment or whole page), listed without it,
usable on the API at once, revoked from the page; a refused form issues nothing."""

from __future__ import annotations

from urllib.parse import urlencode

from eth_account import Account

from adnet.accounts.models import ApiKey
from tests.auth_helpers import bearer, sign_in
from tests.portal.conftest import HTMX


async def issue(publisher, name: str, scopes: list[str], *, htmx: bool = False):
    form = urlencode([("name", name), *[("scopes", scope) for scope in scopes], ("csrf_token", publisher.csrf)])
    headers = {"Content-Type": "application/x-www-form-urlencoded", **(HTMX if htmx else {})}
    return await publisher.client.post("/portal/keys", data=form, headers=headers)


async def test_a_key_issued_in_the_portal_is_shown_once_and_works_on_the_api(publisher):
    response = await issue(publisher, "reports", ["reports:read"])
    assert response.status_code == 201
    html = await response.get_data(as_text=True)
    key = await ApiKey.get(wallet=publisher.wallet)
    token = html.split('<code id="issued-token">')[1].split("</code>")[0]
    assert token.startswith(key.id + ".") and "<h1>API keys</h1>" in html

    listed = await (await publisher.get("/portal/keys")).get_data(as_text=True)
    assert f'id="key-{key.id}"' in listed and token not in listed and "reports:read" in listed
    api = await publisher.client.get("/api/publishers/sites", query_string={"wallet": publisher.wallet},
                                     headers=bearer(token))
    assert api.status_code == 200


async def test_htmx_gets_the_list_with_the_token(publisher):
    response = await issue(publisher, "sites", ["sites:manage", "campaigns:manage"], htmx=True)
    html = await response.get_data(as_text=True)
    assert response.status_code == 201
    assert html.lstrip().startswith('<section id="api-keys"') and 'id="issued-token"' in html
    assert '<button type="button" data-copy="issued-token"' in html  # the secret has its Copy button
    key = await ApiKey.get(wallet=publisher.wallet)
    assert key.scopes == "sites:manage campaigns:manage"


async def test_a_refused_key_form_is_shown_beside_the_form_and_issues_nothing(publisher):
    fragment = await issue(publisher, "no scopes", [], htmx=True)
    assert fragment.status_code == 400 and fragment.headers["HX-Retarget"] == "#issue-key"
    assert "Scopes: at least one." in await fragment.get_data(as_text=True)
    page = await issue(publisher, "", ["reports:read"])
    html = await page.get_data(as_text=True)
    assert page.status_code == 400 and 'role="alert"' in html and "<h1>API keys</h1>" in html
    assert await ApiKey.all().count() == 0


async def test_revoking_from_the_page_stops_the_key(publisher):
    html = await (await issue(publisher, "old", ["reports:read"])).get_data(as_text=True)
    token = html.split('<code id="issued-token">')[1].split("</code>")[0]
    key = await ApiKey.get(wallet=publisher.wallet)

    response = await publisher.post(f"/portal/keys/{key.id}/revoke")
    assert response.status_code == 303 and response.headers["Location"] == "/portal/keys"
    page = await (await publisher.get("/portal/keys")).get_data(as_text=True)
    assert "Revoked" in page and f'action="/portal/keys/{key.id}/revoke"' not in page
    api = await publisher.client.get("/api/publishers/sites", query_string={"wallet": publisher.wallet},
                                     headers=bearer(token))
    assert api.status_code == 401


async def test_another_wallets_key_cannot_be_revoked(publisher, app):
    client = app.test_client()  # its own cookies
    other = await sign_in(client, Account.create())
    issued = await (await client.post("/api/keys", json={"name": "theirs", "scopes": ["reports:read"]},
                                      headers=bearer(other))).get_json()
    response = await publisher.post(f"/portal/keys/{issued['keyId']}/revoke")
    assert response.status_code == 403
    assert (await ApiKey.get(id=issued["keyId"])).revoked_at is None


async def test_the_keys_page_needs_a_session(client):
    response = await client.get("/portal/keys")
    assert response.status_code == 303 and response.headers["Location"].startswith("/portal/signin")
