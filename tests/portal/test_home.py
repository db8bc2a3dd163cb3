"""The front page says what adnet is and offers the three ways in: publishers and advertisers to the portal,
developers to the API reference, the demo page and the embed script; every link it offers answers."""

from __future__ import annotations

import re

from adnet.app import create_app
from adnet.delivery.sdk import sdk_version

LINK = re.compile(r'href="(/[^"]*)"')


async def test_the_front_page_offers_a_way_in_to_publishers_advertisers_and_developers(client):
    response = await client.get("/")
    page = await response.get_data(as_text=True)

    assert response.status_code == 200 and response.mimetype == "text/html"
    assert "open-source advertising network for Web3 sites" in page
    assert re.findall(r"<h2[^>]*>([^<]+)</h2>", page) == ["Publishers", "Advertisers", "Developers"]
    links = set(LINK.findall(page))
    assert {"/portal/signin?next=/portal", "/portal/signin?next=/portal/advertise", "/docs", "/openapi.json",
            "/demo", "/healthz"} <= links
    assert f"/sdk/{sdk_version()}/sdk.js" in page
    assert "<code>docs/sdk.md</code>" in page
    for link in links - {"/"}:
        assert (await client.get(link)).status_code == 200, link
    advertisers = await (await client.get("/portal/signin?next=/portal/advertise")).get_data(as_text=True)
    assert 'name="next" value="/portal/advertise"' in advertisers  # signing in leads to the advertisers' portal


async def test_the_front_page_offers_no_demo_in_production(settings):
    production = create_app(settings.model_copy(update={"env": "production"}))
    page = await (await production.test_client().get("/")).get_data(as_text=True)
    assert "/demo" not in page
    assert "/docs" in page
