"""Signed-in pages show balances and account data: no answer to a signed-in request may be stored by a browser or
a proxy (``Cache-Control: no-store``), whatever the page, fragment, CSV or refusal."""

from __future__ import annotations

from werkzeug.routing import AnyConverter

from tests.auth_helpers import bearer, sign_in
from tests.chain.helpers import user
from tests.factories import make_advertiser, make_campaign, make_publisher, make_site
from tests.portal.conftest import portal_sign_in


async def test_every_signed_in_portal_page_is_no_store(app, client):
    account = user(2)
    site = await make_site(await make_publisher(account.address.lower()))
    advertiser = await make_advertiser(account.address.lower())
    campaign = await make_campaign(advertiser=advertiser)
    signed_in = await portal_sign_in(client, account)
    pages = [
        "/portal", f"/portal/sites/{site.id}", f"/portal/sites/{site.id}/balance",
        f"/portal/sites/{site.id}/events.csv?from=2026-01-01&to=2026-01-01", "/portal/advertise",
        "/portal/advertise/balance", f"/portal/advertise/campaigns/{campaign.id}",
        f"/portal/advertise/campaigns/{campaign.id}/report",
    ]
    for path in pages:
        response = await signed_in.get(path)
        assert response.status_code == 200, path
        assert response.headers.get("Cache-Control") == "no-store", path
        fragment = await signed_in.get(path, htmx=True)
        assert fragment.headers.get("Cache-Control") == "no-store", path
    # Every other GET of the portal too, refusals included (unknown ids, pages of a role the wallet lacks).
    adapter = app.url_map.bind("adnet.test")
    for rule in app.url_map.iter_rules():
        if not rule.rule.startswith("/portal/") or "GET" not in (rule.methods or ()) or rule.rule == "/portal/signin":
            continue
        values = {name: sorted(converter.items)[0] if isinstance(converter, AnyConverter) else "x"
                  for name, converter in rule._converters.items()}
        path = adapter.build(rule.endpoint, values, method="GET")
        response = await signed_in.get(path)
        assert response.headers.get("Cache-Control") == "no-store", (path, response.status_code)


async def test_every_signed_in_api_answer_is_no_store(client):
    account = user(2)
    site = await make_site(await make_publisher(account.address.lower()))
    token = await sign_in(client, account)
    for path in ("/api/auth/me", f"/api/publishers/sites?wallet={account.address}",
                 f"/api/publishers/balance?wallet={account.address}&siteId={site.id}",
                 f"/api/publishers/balance?wallet={user(3).address}&siteId={site.id}"):
        response = await client.get(path, headers=bearer(token))
        assert response.headers.get("Cache-Control") == "no-store", (path, response.status_code)
