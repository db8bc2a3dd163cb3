"""House ads and floors through HTTP: a publisher's own banner fills a slot no paid campaign fills and is never
billed; a floor keeps cheaper campaigns out of a site or placement; both are set through the publisher API, reach
the serving index through the change announcement, and serving still reads nothing from the database."""

from __future__ import annotations

import asyncio
import json
import secrets
from collections import Counter

import pytest
from eth_account import Account

from adnet.accounts.models import MemberRole, PublisherMember
from adnet.core.ids import new_id
from adnet.delivery.house_ads import MAX_HOUSE_ADS
from adnet.delivery.models import HouseAd, HouseAdDaily, TrackingEvent
from adnet.money import ledger
from adnet.money.models import LedgerTransaction
from tests.api.test_api_keys import issue
from tests.api.test_serve import app_context  # noqa: F401 - autouse: the app as the current app
from tests.api.test_track import fresh_address, from_address, page
from tests.auth_helpers import bearer, sign_in
from tests.conftest import rebuild_index
from tests.factories import G, make_campaign, make_creative, make_publisher, make_site
from tests.sql import recorded_statements
from tests.waiting import eventually

HOUSE_AD = {"bannerUrl": "https://publisher.example/newsletter.png", "targetUrl": "https://publisher.example/join",
            "description": "Our newsletter", "size": "300x250"}


@pytest.fixture
async def owner(client):
    """A signed-in publisher with one site: (account, token, site)."""
    account = Account.create()
    token = await sign_in(client, account)
    site = await make_site(await make_publisher(account.address.lower()), domain=f"{secrets.token_hex(4)}.example")
    return account, token, site


async def call(client, owner, method: str, path: str, **body):
    account, token, site = owner
    response = await client.open(f"/api/publishers/sites/{site.id}/{path}", method=method,
                                 json={"wallet": account.address, **body} if method != "GET" else None,
                                 headers=bearer(token))
    return response.status_code, await response.get_json()


async def serve(client, site, **params) -> dict:
    response = await client.get("/api/serve", query_string={"siteId": site.id, **params}, headers=page(site),
                                **from_address(fresh_address()))
    assert response.status_code == 200
    return await response.get_json()


async def report(client, site, house_ad_id: str, kind: str) -> tuple[int, dict]:
    """What the embed sends for a house ad's impression or click, as ``navigator.sendBeacon`` sends it."""
    response = await client.post("/api/track/house", data=json.dumps(
        {"type": kind, "siteId": site.id, "houseAdId": house_ad_id}), headers={
        **page(site), "Content-Type": "text/plain;charset=UTF-8"}, **from_address(fresh_address()))
    return response.status_code, await response.get_json()


async def counts(site) -> dict[tuple[str, str], int]:
    return {(row.house_ad_id, row.type.value): row.events for row in await HouseAdDaily.filter(site_id=site.id)}


async def until_served(client, site, kind: str, **params) -> dict:
    """The site's serve answer once it is of ``kind``: the serving index's job takes an announced change."""
    async def answer() -> dict | None:
        body = await serve(client, site, **params)
        return body if body["kind"] == kind else None

    return await eventually(answer, f"/api/serve answering {kind} for the site")


async def test_a_house_ad_fills_an_unfilled_slot_and_is_never_billed(client, owner):
    _, _, site = owner
    await client.app.extensions["adnet"].serving.rebuild()
    assert (await serve(client, site))["kind"] == "NONE"

    status, added = await call(client, owner, "POST", "house-ads", **HOUSE_AD)
    assert status == 201
    assert {key: added[key] for key in HOUSE_AD} == HOUSE_AD and added["houseAdId"].startswith("house_")
    body = await until_served(client, site, "HOUSE")
    assert body == {"kind": "HOUSE", "ad": {"id": added["houseAdId"], "bannerUrl": HOUSE_AD["bannerUrl"],
                                            "targetUrl": HOUSE_AD["targetUrl"], "description": "Our newsletter",
                                            "size": "300x250"}}
    # Its impressions and clicks are counted, never billed: no tracking event, no ledger transaction, no balance.
    books = await LedgerTransaction.all().count()
    for kind in ("IMPRESSION", "IMPRESSION", "CLICK"):
        status, counted = await report(client, site, added["houseAdId"], kind)
        assert (status, counted) == (201, {"status": "counted"})
    assert await TrackingEvent.all().count() == 0
    assert await LedgerTransaction.all().count() == books
    assert await ledger.balance(ledger.site(site.id)) == 0
    assert await counts(site) == {(added["houseAdId"], "IMPRESSION"): 2, (added["houseAdId"], "CLICK"): 1}
    _, listed = await call(client, owner, "GET", "house-ads")
    assert (listed["houseAds"][0]["impressions"], listed["houseAds"][0]["clicks"]) == (2, 1)

    # A slot of another size, one that takes no banner, or one that turns house ads off gets no house ad.
    assert (await serve(client, site, size="728x90"))["kind"] == "NONE"
    assert (await serve(client, site, kind="POLL"))["kind"] == "NONE"
    assert [(await serve(client, site, house=switch))["kind"] for switch in ("0", "1")] == ["NONE", "HOUSE"]
    refused = await client.get("/api/serve", query_string={"siteId": site.id, "house": "off"})
    body = await refused.get_json()
    assert refused.status_code == 400 and (body["error"], body["field"]) == ("invalid_field", "house")


async def test_concurrent_house_ad_reports_are_all_counted(client, owner):
    _, _, site = owner
    _, added = await call(client, owner, "POST", "house-ads", **HOUSE_AD)
    await until_served(client, site, "HOUSE")
    results = await asyncio.gather(*(report(client, site, added["houseAdId"], "IMPRESSION") for _ in range(25)))
    assert {status for status, _ in results} == {201}
    assert await counts(site) == {(added["houseAdId"], "IMPRESSION"): 25}


async def test_house_ad_reports_that_name_nothing_served_are_refused(client, owner):
    _, _, site = owner
    other = await make_site(await make_publisher(Account.create().address.lower()))
    _, added = await call(client, owner, "POST", "house-ads", **HOUSE_AD)
    await until_served(client, site, "HOUSE")
    assert (await report(client, other, added["houseAdId"], "IMPRESSION"))[0] == 404  # another site's house ad
    assert (await report(client, site, "house_unknown0000000000", "CLICK"))[0] == 404
    status, body = await report(client, site, added["houseAdId"], "VIEW")
    assert (status, body["field"]) == (400, "type")
    bot = await client.post("/api/track/house", json={"type": "CLICK", "siteId": site.id,
                                                      "houseAdId": added["houseAdId"]},
                            headers={**page(site), "User-Agent": "Googlebot/2.1 (+http://www.google.com/bot.html)"})
    assert (bot.status_code, await bot.get_json()) == (201, {"status": "ignored"})
    assert await counts(site) == {}


async def test_house_ad_events_count_only_from_the_sites_own_pages(client, owner):
    _, _, site = owner
    _, added = await call(client, owner, "POST", "house-ads", **HOUSE_AD)
    await until_served(client, site, "HOUSE")

    async def report_from(headers: dict[str, str]) -> dict:
        response = await client.post("/api/track/house", json={"type": "CLICK", "siteId": site.id,
                                                               "houseAdId": added["houseAdId"]},
                                     headers={"User-Agent": page(site)["User-Agent"], **headers},
                                     **from_address(fresh_address()))
        assert response.status_code == 201
        return await response.get_json()

    elsewhere = [{"Origin": "https://attacker.example"}, {"Origin": f"https://{site.domain}.attacker.example"},
                 {"Referer": "https://attacker.example/page"}, {"Origin": "null"}, {}]
    for headers in elsewhere:
        assert await report_from(headers) == {"status": "ignored"}, headers
    assert await counts(site) == {}
    for headers in [{"Origin": f"https://{site.domain}"}, {"Referer": f"https://news.{site.domain}/story"}]:
        assert await report_from(headers) == {"status": "counted"}, headers
    assert await counts(site) == {(added["houseAdId"], "CLICK"): 2}


async def test_a_paid_campaign_fills_the_slot_before_any_house_ad(client, owner):
    _, _, site = owner
    assert (await call(client, owner, "POST", "house-ads", **HOUSE_AD))[0] == 201
    creative = await make_creative(await make_campaign(site_allow=[site.id]))
    await rebuild_index(client.app)
    kinds = Counter([(await serve(client, site))["kind"] for _ in range(20)])
    assert kinds == {"BANNER": 20}
    assert (await serve(client, site, size="300x250"))["ad"]["id"] == creative.id


async def test_house_ads_are_listed_and_deleted(client, owner, clock):
    _, added = await call(client, owner, "POST", "house-ads", **HOUSE_AD)
    clock.advance(seconds=1)
    _, second = await call(client, owner, "POST", "house-ads", **{**HOUSE_AD, "size": "728x90"})
    status, listed = await call(client, owner, "GET", "house-ads")
    assert status == 200
    assert [item["houseAdId"] for item in listed["houseAds"]] == [added["houseAdId"], second["houseAdId"]]

    status, left = await call(client, owner, "POST", f"house-ads/{added['houseAdId']}/delete")
    assert status == 200 and [item["houseAdId"] for item in left["houseAds"]] == [second["houseAdId"]]
    await until_served(client, owner[2], "NONE", size="300x250")
    status, body = await call(client, owner, "POST", f"house-ads/{added['houseAdId']}/delete")
    assert (status, body["error"]) == (404, "not_found")


@pytest.mark.parametrize(("change", "field"), [
    ({"bannerUrl": "javascript:alert(1)"}, "bannerUrl"),
    ({"targetUrl": "ftp://publisher.example/"}, "targetUrl"),
    ({"size": "300by250"}, "size"),
    ({"description": "x" * 501}, "description"),
])
async def test_an_invalid_house_ad_is_refused_naming_the_field(client, owner, change, field):
    status, body = await call(client, owner, "POST", "house-ads", **{**HOUSE_AD, **change})
    assert status == 400 and body["field"] == field
    assert await HouseAd.all().count() == 0


async def test_another_wallets_site_is_refused(client, owner):
    stranger = await make_site(await make_publisher(Account.create().address.lower()))
    account, token, _ = owner
    for method, path, body in (("POST", "house-ads", HOUSE_AD), ("PUT", "floors", {"floorCpm": "1"})):
        response = await client.open(f"/api/publishers/sites/{stranger.id}/{path}", method=method,
                                     json={"wallet": account.address, **body}, headers=bearer(token))
        assert (response.status_code, (await response.get_json())["error"]) == (403, "not_owner")
    response = await client.get(f"/api/publishers/sites/{stranger.id}/house-ads", headers=bearer(token))
    assert response.status_code == 403
    assert await HouseAd.all().count() == 0


async def test_concurrent_additions_never_pass_the_limit(client, owner):
    results = await asyncio.gather(*(call(client, owner, "POST", "house-ads", **HOUSE_AD)
                                     for _ in range(MAX_HOUSE_ADS + 5)))
    statuses = Counter(status for status, _ in results)
    assert statuses == {201: MAX_HOUSE_ADS, 409: 5}
    assert {body["error"] for status, body in results if status == 409} == {"too_many_house_ads"}
    assert await HouseAd.filter(site_id=owner[2].id).count() == MAX_HOUSE_ADS


async def test_a_floor_excludes_a_cheaper_campaign_on_the_site_or_placement(client, owner):
    _, _, site = owner
    cheap = await make_campaign(cpm=G, cpc=0, site_allow=[site.id])
    dear = await make_campaign(cpm=5 * G, cpc=0, site_allow=[site.id])
    cheap_ad, dear_ad = await make_creative(cheap), await make_creative(dear)
    await rebuild_index(client.app)
    shown = {(await serve(client, site))["ad"]["id"] for _ in range(60)}
    assert shown == {cheap_ad.id, dear_ad.id}

    status, floors = await call(client, owner, "PUT", "floors", floorCpm="3", placementFloors={"sidebar": "0"})
    assert status == 200 and floors == {"siteId": site.id, "floorCpm": "3", "placementFloors": {"sidebar": "0"}}
    serving = client.app.extensions["adnet"].serving
    await eventually(lambda: serving.index.sites[site.id].floor == 3 * G, "the site's floor in the serving index")
    assert {(await serve(client, site))["ad"]["id"] for _ in range(40)} == {dear_ad.id}
    # A placement's floor replaces the site's there.
    assert {(await serve(client, site, placement="sidebar"))["ad"]["id"] for _ in range(60)} == {cheap_ad.id,
                                                                                               dear_ad.id}
    # Above every offer: the slot shows the house ad, or nothing without one.
    assert (await call(client, owner, "PUT", "floors", floorCpm="6"))[0] == 200
    await until_served(client, site, "NONE")
    assert (await call(client, owner, "POST", "house-ads", **HOUSE_AD))[0] == 201
    await until_served(client, site, "HOUSE")
    status, read = await call(client, owner, "GET", "floors")
    assert status == 200 and read == {"siteId": site.id, "floorCpm": "6", "placementFloors": {}}


async def test_floors_are_counted_with_clicks_at_the_assumed_click_through_rate(client, owner):
    _, _, site = owner
    # 0.5 G$ per click at 0.2 % is 1 G$ per 1000 impressions: with a CPM of 1 G$, an eCPM of 2 G$.
    creative = await make_creative(await make_campaign(cpm=G, cpc=G // 2, site_allow=[site.id]))
    assert (await call(client, owner, "PUT", "floors", floorCpm="2"))[0] == 200
    await rebuild_index(client.app)
    assert (await serve(client, site))["ad"]["id"] == creative.id
    assert (await call(client, owner, "PUT", "floors", floorCpm="2.01"))[0] == 200
    await until_served(client, site, "NONE")


@pytest.mark.parametrize(("body", "field"), [
    ({"floorCpm": "-1"}, "floorCpm"),
    ({"floorCpm": "abc"}, "floorCpm"),
    ({"placementFloors": {"top": "1.0000000000000000001"}}, "placementFloors.top"),
    ({"placementFloors": {"x" * 65: "1"}}, "placementFloors"),
])
async def test_invalid_floors_are_refused_and_change_nothing(client, owner, body, field):
    status, refused = await call(client, owner, "PUT", "floors", **body)
    assert status == 400 and refused["field"].startswith(field), refused
    _, floors = await call(client, owner, "GET", "floors")
    assert floors["floorCpm"] == "0" and floors["placementFloors"] == {}


async def test_serving_house_ads_and_floors_reads_nothing_from_the_database(client, owner):
    _, _, site = owner
    await call(client, owner, "POST", "house-ads", **HOUSE_AD)
    await call(client, owner, "PUT", "floors", floorCpm="3", placementFloors={"top": "1"})
    await make_creative(await make_campaign(cpm=2 * G, cpc=0, site_allow=[site.id]))
    await rebuild_index(client.app)
    await serve(client, site)  # warm-up outside the count
    with recorded_statements() as queries:
        kinds = Counter()
        for params in ({}, {"placement": "top"}, {"size": "300x250"}, {"size": "728x90"}):
            for _ in range(5):
                kinds[(await serve(client, site, **params))["kind"]] += 1
    assert queries == []
    assert kinds == {"HOUSE": 10, "BANNER": 5, "NONE": 5}


async def test_an_api_key_reads_with_reports_read_and_changes_with_sites_manage(client, owner):
    """As docs/auth.md's scope table says: ``reports:read`` covers every read, a manage scope only changes."""
    account, session, site = owner
    manager = (await issue(client, session, "sites:manage"))["token"]
    reader = (await issue(client, session, "reports:read"))["token"]
    path = f"/api/publishers/sites/{site.id}"
    added = await client.post(f"{path}/house-ads", json={"wallet": account.address, **HOUSE_AD},
                              headers=bearer(manager))
    assert added.status_code == 201
    floors = await client.put(f"{path}/floors", json={"wallet": account.address, "floorCpm": "1"},
                              headers=bearer(manager))
    assert floors.status_code == 200 and (await floors.get_json())["floorCpm"] == "1"
    listed = await client.get(f"{path}/house-ads", headers=bearer(reader))
    assert len((await listed.get_json())["houseAds"]) == 1
    read = await client.get(f"{path}/floors", headers=bearer(reader))
    assert (await read.get_json())["floorCpm"] == "1"
    for refused in (await client.get(f"{path}/house-ads", headers=bearer(manager)),
                    await client.get(f"{path}/floors", headers=bearer(manager)),
                    await client.put(f"{path}/floors", json={"wallet": account.address, "floorCpm": "2"},
                                     headers=bearer(reader)),
                    await client.post(f"{path}/house-ads", json={"wallet": account.address, **HOUSE_AD},
                                      headers=bearer(reader))):
        body = await refused.get_json()
        assert refused.status_code == 403 and body["error"] == "scope_denied"
    assert (await call(client, owner, "GET", "floors"))[1]["floorCpm"] == "1"


async def test_a_viewer_member_reads_but_does_not_change(client, owner):
    _, _, site = owner
    viewer = Account.create()
    await PublisherMember.create(id=new_id("mem"), publisher_id=site.publisher_id,  # type: ignore[attr-defined]
                                 wallet=viewer.address.lower(), role=MemberRole.VIEWER, created_at=site.created_at)
    token = await sign_in(client, viewer)
    read = await client.get(f"/api/publishers/sites/{site.id}/floors", headers=bearer(token))
    assert read.status_code == 200
    refused = await client.put(f"/api/publishers/sites/{site.id}/floors",
                               json={"wallet": viewer.address, "floorCpm": "5"}, headers=bearer(token))
    assert (refused.status_code, (await refused.get_json())["error"]) == (403, "insufficient_role")
    assert (await call(client, owner, "GET", "floors"))[1]["floorCpm"] == "0"
