"""Creatives in production: the app's banner fetcher keeps the production policy, so an http:// banner is refused
before anything is fetched, and an https one is fetched and measured. The app runs with the test settings switched
to production; its fetcher resolves through the test's table and connects to a scripted network."""

from __future__ import annotations

from dataclasses import replace

import pytest

from adnet.accounts.fetching import Fetcher
from adnet.campaigns.models import Creative
from tests.api.test_advertisers import CREATIVE, advertiser_api, draft
from tests.conftest import CDN_ADDRESS, make_settings
from tests.images import png
from tests.site_server import FileNetwork, resolver


@pytest.fixture
def settings(database_url, tmp_path):
    return replace(make_settings(database_url, tmp_path), env="production")


async def test_an_http_banner_is_refused_and_an_https_one_measured(client, clock, services):
    assert services.banners.policy.https_only and services.banners.policy.global_addresses_only
    network = FileNetwork()
    network.serve("/banner.png", png(300, 250))
    services.banners = Fetcher(services.banners.policy, resolve=resolver({"cdn.example": [CDN_ADDRESS]}),
                               network=network)
    api = await advertiser_api(client)
    campaign = await draft(api, clock)
    path = f"/advertisers/campaigns/{campaign['id']}/creatives"
    status, body = await api.call("POST", path, **{**CREATIVE, "bannerUrl": "http://cdn.example/banner.png"})
    assert (status, body["error"], body["field"]) == (400, "insecure_url", "bannerUrl")
    assert network.requested == [] and await Creative.all().count() == 0
    status, _ = await api.call("POST", path, **CREATIVE)
    assert status == 201 and network.requested == ["/banner.png"] and network.tls_names == ["cdn.example"]
