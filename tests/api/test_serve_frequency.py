"""Frequency caps through HTTP: once a viewer (the embed's ``viewer`` id) was billed a campaign's cap of impressions
in its period, ``/api/serve`` stops offering that campaign to that viewer, without a database query, while other
viewers and requests without a viewer id still get it; the next period it is offered again."""

from __future__ import annotations

import pytest
from quart import current_app

from tests.api.test_track import billed, event_body, fresh_address, from_address, page, post, serve_ad
from tests.conftest import rebuild_index
from tests.factories import make_campaign, make_creative, make_site
from tests.sql import recorded_statements


@pytest.fixture(autouse=True)
async def app_context(app):
    async with app.app_context():
        yield


async def kind_served(client, site, **params) -> str:
    response = await client.get("/api/serve", query_string={"siteId": site.id, **params}, headers=page(site),
                                **from_address(fresh_address()))
    body = await response.get_json()
    return body["ad"]["campaignId"] if body["kind"] == "BANNER" else body["kind"]


async def test_a_viewer_at_the_cap_is_not_offered_the_campaign_until_the_next_period(client, clock):
    clock.advance(minutes=5)  # inside the hour that started at the clock's start
    site = await make_site()
    capped = await make_campaign(frequency_cap=2, frequency_hours=1, site_allow=[site.id])
    await make_creative(capped)
    await rebuild_index(current_app)
    for number in range(2):
        ad = await serve_ad(client, site, viewer="viewer-a")
        assert ad["campaignId"] == capped.id
        clock.advance(seconds=2)
        assert await billed((await post(client, event_body(ad, site, fingerprint=f"fp-a-{number}")))[1])

    with recorded_statements() as queries:
        assert await kind_served(client, site, viewer="viewer-a") == "NONE"
        assert await kind_served(client, site, viewer="viewer-b") == capped.id
        assert await kind_served(client, site) == capped.id  # no viewer id (Do-Not-Track): not capped
    assert queries == []

    clock.advance(hours=1)
    assert await kind_served(client, site, viewer="viewer-a") == capped.id


async def test_an_uncapped_campaign_is_offered_to_a_viewer_whatever_it_saw(client, clock):
    site = await make_site()
    free = await make_campaign(site_allow=[site.id])
    await make_creative(free)
    await rebuild_index(current_app)
    for number in range(3):
        ad = await serve_ad(client, site, viewer="viewer-a")
        clock.advance(seconds=2)
        assert await billed((await post(client, event_body(ad, site, fingerprint=f"fp-{number}")))[1])
    assert await kind_served(client, site, viewer="viewer-a") == free.id


@pytest.mark.parametrize("viewer", ["", "x" * 129, "with space"])
async def test_a_bad_viewer_id_is_refused_or_ignored_when_empty(client, viewer):
    site = await make_site()
    response = await client.get("/api/serve", query_string={"siteId": site.id, "viewer": viewer})
    if viewer:
        assert response.status_code == 400
        assert (await response.get_json())["field"] == "viewer"
    else:
        assert response.status_code == 200
