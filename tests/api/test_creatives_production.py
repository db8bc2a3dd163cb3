"""Creatives and house ads in production: the app's banner fetcher keeps the production policy, so an http:// banner
is refused before anything is fetched, a creative's and a house ad's alike, and an https one is fetched and
measured. The app runs with the test settings switched
to production; its fetcher resolves through the test's table and connects to a scripted network."""

from __future__ import annotations

import pytest
from eth_account import Account

from adnet.accounts.fetching import Fetcher
from adnet.campaigns.models import Creative
from adnet.delivery.models import HouseAd
from tests.api.test_advertisers import CREATIVE, advertiser_api, draft
from tests.auth_helpers import bearer, sign_in
from tests.conftest import CDN_ADDRESS, make_settings
from tests.factories import make_publisher, make_site
from tests.images import png
from tests.site_server import FileNetwork, resolver


@pytest.fixture
def settings(database_url, tmp_path):
    return make_settings(database_url, tmp_path).model_copy(update={"env": "production"})


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


async def test_a_house_ads_banner_is_held_to_the_same_rule(client):
    """A house ad is a banner on the same pages: production refuses its http:// image as it refuses a
    creative's."""
    account = Account.create()
    token = await sign_in(client, account)
    site = await make_site(await make_publisher(account.address.lower()), domain="news.example.org")
    path = f"/api/publishers/sites/{site.id}/house-ads"
    house_ad = {"wallet": account.address, "targetUrl": "https://news.example.org/join", "size": "300x250"}
    refused = await client.post(path, json={**house_ad, "bannerUrl": "http://news.example.org/house.png"},
                                headers=bearer(token))
    body = await refused.get_json()
    assert (refused.status_code, body["error"], body["field"]) == (400, "insecure_url", "bannerUrl")
    assert await HouseAd.all().count() == 0
    added = await client.post(path, json={**house_ad, "bannerUrl": "https://news.example.org/house.png"},
                              headers=bearer(token))
    assert added.status_code == 201 and await HouseAd.all().count() == 1
