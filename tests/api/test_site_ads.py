"""What ran on a site: GET /api/publishers/sites/{siteId}/ads lists, for a range of UTC days, each campaign served
there (by name, with its advertiser's name) and each of its creatives, with recorded and billed impressions and
clicks and exactly what the site earned; only the site's accounts read it."""

from __future__ import annotations

from datetime import timedelta

from eth_account import Account

from adnet.core.amounts import to_decimal_string
from tests.api.test_serve import app_context  # noqa: F401 - autouse: the app as the current app
from tests.api.test_track import BROWSER, CPC, CPM, event_body, post, served_and_seen
from tests.auth_helpers import bearer, sign_in
from tests.conftest import rebuild_index
from tests.factories import make_advertiser, make_campaign, make_creative, make_publisher, make_site

IMPRESSION_EARNS = CPM // 1000 * 7000 // 10_000
CLICK_EARNS = CPC * 7000 // 10_000


async def ads_of(client, token, site, **query):
    response = await client.get(f"/api/publishers/sites/{site.id}/ads", query_string=query, headers=bearer(token))
    return response.status_code, await response.get_json()


async def test_each_campaign_and_creative_with_exact_figures(client, clock):
    owner = Account.create()
    token = await sign_in(client, owner)
    publisher = await make_publisher(owner.address.lower())
    site = await make_site(publisher, domain="news.example")
    bank, games = await make_advertiser(), await make_advertiser()
    bank.name, games.name = "Chain Bank", "Pixel Games"
    await bank.save()
    await games.save()
    savings = await make_campaign(bank, name="Savings", cpm=CPM, cpc=CPC)
    square = await make_creative(savings, width=300, height=250, description="Earn 5%")
    wide = await make_creative(savings, width=728, height=90, description="Earn 5% wide")
    quest = await make_campaign(games, name="Quest", cpm=CPM, cpc=CPC)
    tall = await make_creative(quest, width=160, height=600, description="Play now")
    await rebuild_index(client.app)

    for fingerprint in ("fp-a", "fp-b"):  # two billed impressions of the square, one of them clicked
        ad = await served_and_seen(client, clock, site, size="300x250")
        assert (await post(client, event_body(ad, site, fingerprint=fingerprint)))[0].status_code == 201
    assert (await post(client, event_body(ad, site, fingerprint="fp-b", type="CLICK")))[0].status_code == 201
    ad = await served_and_seen(client, clock, site, size="728x90")  # one billed, one from a script: not billed
    await post(client, event_body(ad, site, fingerprint="fp-c"))
    ad = await served_and_seen(client, clock, site, size="728x90")
    await post(client, event_body(ad, site, fingerprint="fp-d", userAgent=BROWSER),
               **{"User-Agent": "python-requests/2.31"})
    ad = await served_and_seen(client, clock, site, size="160x600")
    await post(client, event_body(ad, site, fingerprint="fp-e"))

    status, report = await ads_of(client, token, site)
    assert status == 200
    assert (report["siteId"], report["to"], report["token"]) == (site.id, clock.today().isoformat(), "G$")
    savings_earned = 3 * IMPRESSION_EARNS + CLICK_EARNS

    def figures(impressions, billed, clicks, billed_clicks, earned):
        return {"impressions": impressions, "billedImpressions": billed, "clicks": clicks,
                "billedClicks": billed_clicks, "earned": to_decimal_string(earned)}
    assert report["campaigns"] == [
        {"campaignId": savings.id, "name": "Savings", "advertiserId": bank.id, "advertiser": "Chain Bank",
         "category": "other", "figures": figures(4, 3, 1, 1, savings_earned), "creatives": [
             {"creativeId": square.id, "description": "Earn 5%", "size": "300x250", "bannerUrl": square.banner_url,
              "figures": figures(2, 2, 1, 1, 2 * IMPRESSION_EARNS + CLICK_EARNS)},
             {"creativeId": wide.id, "description": "Earn 5% wide", "size": "728x90", "bannerUrl": wide.banner_url,
              "figures": figures(2, 1, 0, 0, IMPRESSION_EARNS)}]},
        {"campaignId": quest.id, "name": "Quest", "advertiserId": games.id, "advertiser": "Pixel Games",
         "category": "other", "figures": figures(1, 1, 0, 0, IMPRESSION_EARNS), "creatives": [
             {"creativeId": tall.id, "description": "Play now", "size": "160x600", "bannerUrl": tall.banner_url,
              "figures": figures(1, 1, 0, 0, IMPRESSION_EARNS)}]},
    ]

    yesterday = (clock.today() - timedelta(days=1)).isoformat()
    status, earlier = await ads_of(client, token, site, **{"from": yesterday, "to": yesterday})
    assert (status, earlier["campaigns"]) == (200, [])
    other_site = await make_site(publisher)
    assert (await ads_of(client, token, other_site))[1]["campaigns"] == []


async def test_only_the_sites_accounts_read_it(client):
    site = await make_site()
    stranger = await sign_in(client, Account.create())
    assert (await client.get(f"/api/publishers/sites/{site.id}/ads")).status_code == 401
    status, body = await ads_of(client, stranger, site)
    assert (status, body["error"]) == (403, "not_owner")
    owner = Account.create()
    token = await sign_in(client, owner)
    mine = await make_site(await make_publisher(owner.address.lower()))
    status, body = await ads_of(client, token, mine, **{"from": "2020-01-02", "to": "2020-01-01"})
    assert (status, body["error"], body["field"]) == (400, "invalid_date_range", "to")
