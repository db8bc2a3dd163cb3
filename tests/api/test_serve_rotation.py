"""Rotation through HTTP: a campaign's creatives share its slots evenly, by weight, or mostly to the best
click-through rate once each has enough billed impressions (counted from the raw events at index build, then by
tracking as it bills); weights and the mode are set through the advertiser API."""

from __future__ import annotations

from collections import Counter
from decimal import Decimal

import pytest
from quart import current_app

from adnet.campaigns.models import Rotation
from adnet.core.ids import new_ordered_id
from adnet.delivery.models import EventType, TrackingEvent
from adnet.delivery.rotation import MIN_IMPRESSIONS
from tests.api.test_track import billed, event_body, post, serve_ad
from tests.conftest import rebuild_index
from tests.factories import make_campaign, make_creative, make_site

DRAWS = 400


@pytest.fixture(autouse=True)
async def app_context(app):
    async with app.app_context():
        yield


async def draws(client, site) -> Counter[str]:
    served: Counter[str] = Counter()
    for _ in range(DRAWS):
        response = await client.get("/api/serve", query_string={"siteId": site.id})
        served[(await response.get_json())["ad"]["id"]] += 1
    return served


async def test_weighted_rotation_shows_creatives_in_proportion_to_their_weights(client):
    site = await make_site()
    campaign = await make_campaign(rotation=Rotation.WEIGHTED, site_allow=[site.id])
    light, heavy = await make_creative(campaign, weight=1), await make_creative(campaign, weight=3)
    await rebuild_index(current_app)
    served = await draws(client, site)
    assert set(served) == {light.id, heavy.id}
    assert 0.68 < served[heavy.id] / DRAWS < 0.82


async def test_even_rotation_ignores_the_weights(client):
    site = await make_site()
    campaign = await make_campaign(site_allow=[site.id])
    light, heavy = await make_creative(campaign, weight=1), await make_creative(campaign, weight=3)
    await rebuild_index(current_app)
    served = await draws(client, site)
    assert 0.4 < served[heavy.id] / DRAWS < 0.6 and served[light.id] + served[heavy.id] == DRAWS


async def test_best_ctr_favours_the_best_creative_once_each_has_enough_impressions(client, clock):
    site = await make_site()
    campaign = await make_campaign(rotation=Rotation.BEST_CTR, site_allow=[site.id])
    weak, strong = await make_creative(campaign), await make_creative(campaign)
    await bulk_billed(weak, site, MIN_IMPRESSIONS, 2)
    await bulk_billed(strong, site, MIN_IMPRESSIONS - 1, 20)
    await rebuild_index(current_app)
    served = await draws(client, site)
    assert 0.4 < served[strong.id] / DRAWS < 0.6  # not yet: one creative lacks an impression

    ad = await serve_ad(client, site)
    while ad["id"] != strong.id:
        ad = await serve_ad(client, site)
    clock.advance(seconds=2)
    assert await billed((await post(client, event_body(ad, site)))[1])  # tracking counts it in the index
    served = await draws(client, site)
    assert served[strong.id] / DRAWS > 0.9


async def bulk_billed(creative, site, impressions: int, clicks: int) -> None:
    """``impressions`` and ``clicks`` billed events of ``creative`` on ``site``, as tracking would have stored."""
    await TrackingEvent.bulk_create([
        TrackingEvent(id=new_ordered_id("ev"), type=kind, campaign_id=creative.campaign_id, creative_id=creative.id,
                      site_id=site.id, fingerprint=f"fp-{kind.value}-{number}", rendered=True, viewport_visible=True,
                      billable=True, cost=Decimal(0), publisher_amount=Decimal(0), received_at=creative.created_at)
        for kind, count in ((EventType.IMPRESSION, impressions), (EventType.CLICK, clicks)) for number in range(count)])
