"""POST /api/track through HTTP: recording, deduplication in the hour, every refusal reason, billing through the
ledger, exactness under concurrency, validation, CORS and caching."""

import asyncio
import itertools
from collections import Counter
from datetime import timedelta
from decimal import Decimal

import pytest
from quart import current_app
from tortoise import connections

from adnet.accounts.models import Site
from adnet.campaigns.models import Campaign
from adnet.db import sql
from adnet.delivery import tracking
from adnet.delivery.clients import Client, network
from adnet.delivery.models import DedupKey, SiteDailyStat, TrackingEvent
from adnet.delivery.tokens import issue_token
from adnet.money import ledger
from adnet.money.models import LedgerTransaction
from adnet.reporting import campaigns as campaign_reports
from adnet.reporting import traffic
from tests.api.test_serve import app_context  # noqa: F401 - autouse: the app as the current app
from tests.conftest import rebuild_index
from tests.factories import G, make_campaign, make_creative, make_site
from tests.sql import recorded_statements, trips

BROWSER = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36"
# Each served ad goes to a client of its own /24 network (the billing caps count per network), and its events come
# from that client; a token made by hand is bound to PAGE_CLIENT, the address events default to.
PAGE_CLIENT = Client("10.255.255.1", BROWSER)
_addresses = itertools.count(1)
_served_to: dict[str, str] = {}  # tracking token → the address it was served to
_pages: dict[str, dict[str, str]] = {}  # site id → what its pages send (known without a query once served)
CPM = 2 * G
CPC = G // 10


async def setup_ad(**campaign_fields):
    """A site, and a campaign with one creative that runs on it alone: no other test's campaign shares its slots,
    so which ad a serve answers never depends on the draw."""
    site = await make_site()
    campaign = await make_campaign(**{"cpm": CPM, "cpc": CPC, "site_allow": [site.id], **campaign_fields})
    creative = await make_creative(campaign)
    await rebuild_index(current_app)
    return site, campaign, creative


def page(site) -> dict[str, str]:
    """What a browser on a page of ``site`` sends with every request."""
    return {"User-Agent": BROWSER, "Origin": f"https://{site.domain}"}


def page_url(site) -> str:
    return f"https://{site.domain}/article"


def fresh_address() -> str:
    """An address of a network no other call named."""
    number = next(_addresses)
    return f"10.{number // 250 % 250}.{number % 250}.1"


def from_address(address: str) -> dict:
    return {"scope_base": {"client": (address, 40_000)}}


async def serve_ad(client, site, *, address: str | None = None, **params) -> dict:
    """A banner served to a page of ``site`` at ``address`` (a fresh network's by default)."""
    address = address or fresh_address()
    response = await client.get("/api/serve", query_string={"siteId": site.id, **params}, headers=page(site),
                                **from_address(address))
    body = await response.get_json()
    assert body["kind"] == "BANNER", body
    _served_to[body["ad"]["trackingToken"]] = address
    _pages[site.id] = page(site)
    return body["ad"]


def event_body(ad: dict, site, **overrides) -> dict:
    return {
        "type": "IMPRESSION", "campaignId": ad["campaignId"], "adId": ad["id"], "siteId": site.id,
        "fingerprint": "fp-0001", "rendered": True, "viewportVisible": True, "renderTime": 35.5,
        "timestamp": 1767225600000, "pageUrl": page_url(site), "userAgent": BROWSER,
        "trackingToken": ad["trackingToken"], **overrides,
    }


async def post(client, body: dict, *, address: str | None = None, **headers: str):
    """POST ``body`` from a page of the site it names (when there is one), from the client its token was served
    to (else ``PAGE_CLIENT``'s address, or ``address`` when given)."""
    page_headers = _pages.get(body.get("siteId") or "")
    if page_headers is None:
        site = await Site.get_or_none(id=body.get("siteId"))
        page_headers = page(site) if site is not None else {"User-Agent": BROWSER}
    address = address or _served_to.get(body.get("trackingToken") or "", PAGE_CLIENT.ip)
    response = await client.post("/api/track", json=body, headers={**page_headers, **headers},
                                 **from_address(address))
    return response, await response.get_json()


async def billed(body: dict) -> bool:
    """Whether the recorded event was billed: stored, never told to the page."""
    assert body["status"] == "recorded" and set(body) - {"clickUrl"} == {"status", "eventId"}
    return (await TrackingEvent.get(id=body["eventId"])).billable


async def served_and_seen(client, clock, site, **params) -> dict:
    """An ad served, then in view for two seconds."""
    ad = await serve_ad(client, site, **params)
    clock.advance(seconds=2)
    return ad


async def test_billable_impression_moves_cpm_over_1000_through_the_ledger(client, clock, settings):
    site, campaign, creative = await setup_ad()
    ad = await served_and_seen(client, clock, site, placement="top")
    response, body = await post(client, event_body(ad, site))
    assert response.status_code == 201
    assert await billed(body) and body["eventId"].startswith("ev_")
    assert response.headers["Cache-Control"] == "no-store"
    event = await TrackingEvent.get(id=body["eventId"])
    cost = CPM // 1000
    publisher = cost * settings.publisher_share_bps // 10_000
    assert (event.billable, event.refusal_reason, int(event.cost), int(event.publisher_amount)) == (
        True, None, cost, publisher)
    assert (event.creative_id, event.placement, event.render_time_ms) == (creative.id, "top", 36)
    assert await ledger.balance(ledger.campaign(campaign.id)) == 100 * G - cost
    assert await ledger.balance(ledger.site(site.id)) == publisher == cost * 70 // 100
    assert await ledger.balance(ledger.platform("G$")) == cost - publisher
    assert await LedgerTransaction.filter(kind="ad_billing").count() == 1


async def test_click_after_a_billable_impression_costs_the_cpc(client, clock):
    site, campaign, _ = await setup_ad()
    ad = await served_and_seen(client, clock, site)
    await post(client, event_body(ad, site))
    response, body = await post(client, event_body(ad, site, type="CLICK"))
    assert response.status_code == 201 and await billed(body)
    assert await ledger.balance(ledger.campaign(campaign.id)) == 100 * G - CPM // 1000 - CPC


async def test_wallet_of_the_token_is_stored_for_attribution(client, clock):
    site, _, _ = await setup_ad()
    wallet = "0x" + "ab" * 20
    ad = await served_and_seen(client, clock, site, wallet=wallet)
    _, body = await post(client, event_body(ad, site))
    assert (await TrackingEvent.get(id=body["eventId"])).wallet == wallet


async def test_duplicate_in_the_hour_stores_and_bills_nothing(client, clock):
    site, campaign, _ = await setup_ad()
    ad = await served_and_seen(client, clock, site)
    await post(client, event_body(ad, site))
    second_ad = await served_and_seen(client, clock, site)
    response, body = await post(client, event_body(second_ad, site))
    assert response.status_code == 200 and body == {"status": "duplicate"}
    assert await TrackingEvent.all().count() == 1
    assert await ledger.balance(ledger.campaign(campaign.id)) == 100 * G - CPM // 1000


async def test_59th_minute_is_a_duplicate_and_61st_is_not(client, clock):
    site, _, _ = await setup_ad()
    ad = await served_and_seen(client, clock, site)
    await post(client, event_body(ad, site))
    clock.advance(minutes=59)
    ad = await served_and_seen(client, clock, site)
    _, body = await post(client, event_body(ad, site))
    assert body == {"status": "duplicate"}
    clock.advance(minutes=2)
    ad = await served_and_seen(client, clock, site)
    response, body = await post(client, event_body(ad, site))
    assert response.status_code == 201 and await billed(body)
    assert await TrackingEvent.filter(billable=True).count() == 2


async def test_type_and_campaign_are_part_of_the_key(client, clock):
    site, _, _ = await setup_ad()
    other_campaign = await make_campaign(cpm=CPM, cpc=CPC)
    await make_creative(other_campaign)
    await rebuild_index(client.app)
    ad = await served_and_seen(client, clock, site)
    assert (await post(client, event_body(ad, site)))[0].status_code == 201
    assert (await post(client, event_body(ad, site, type="CLICK")))[0].status_code == 201
    seen = {ad["campaignId"]}
    while len(seen) < 2:
        other = await served_and_seen(client, clock, site)
        if other["campaignId"] not in seen:
            seen.add(other["campaignId"])
            assert (await post(client, event_body(other, site)))[0].status_code == 201


async def test_200_identical_events_at_once_record_and_bill_exactly_one(client, clock):
    site, campaign, _ = await setup_ad()
    ad = await served_and_seen(client, clock, site)
    responses = await asyncio.gather(*(post(client, event_body(ad, site)) for _ in range(200)))
    statuses = sorted(response.status_code for response, _ in responses)
    assert statuses == [200] * 199 + [201]
    assert await TrackingEvent.all().count() == 1
    assert await TrackingEvent.filter(billable=True).count() == 1
    assert await DedupKey.all().count() == 2  # the fingerprint's key and the token's
    assert await ledger.balance(ledger.campaign(campaign.id)) == 100 * G - CPM // 1000


async def test_a_batch_is_one_transaction_in_the_writer_process(app, client, clock):
    """A batch's dedup keys, events, billing and counters are one program of statements (adnet.db.sql) run as one
    transaction: on a SQLite file in the worker's writer process (adnet.db.writer_process), so the worker's own
    connection sends none of it; on PostgreSQL statement by statement on one connection of the worker."""
    site, campaign, _ = await setup_ad()
    ads = [await serve_ad(client, site) for _ in range(10)]
    clicks = ads[:3]
    clock.advance(seconds=2)
    await asyncio.gather(*(post(client, event_body(ad, site, fingerprint=f"fp-{n:04d}"))
                           for n, ad in enumerate(ads)))
    tracker = app.extensions["adnet"].tracker
    commit, batches, sent_to_writer = tracker.committer._commit, [], []

    async def counted(batch):
        with trips() as taken, recorded_statements() as sent:
            results = await commit(batch)
        batches.append((len(batch), taken, sent))
        return results

    tracker.committer._commit = counted
    if tracker.writer is not None:
        transaction = tracker.writer.transaction

        async def to_writer(make):
            sent_to_writer.append(make)
            return await transaction(make)

        tracker.writer.transaction = to_writer
    responses = await asyncio.gather(*(post(client, event_body(ad, site, type="CLICK", fingerprint=f"fp-{n:04d}"))
                                       for n, ad in enumerate(clicks)))
    assert [response.status_code for response, _ in responses] == [201] * 3
    assert all([await billed(body) for _, body in responses])
    assert sum(size for size, _, _ in batches) == 3
    if sql.dialect_of(connections.get("default")) == "sqlite":
        assert len(sent_to_writer) == len(batches)
        assert all(taken == [] and sent == [] for _, taken, sent in batches)
    else:
        assert tracker.writer is None
        for _, _, sent in batches:
            tables = " ".join(sent)
            assert all(name in tables for name in ("dedup_key", "tracking_event", "ledger_account", "site_daily_stat"))
    assert await DedupKey.filter(type="CLICK").count() == 6  # each click's fingerprint key and token key
    assert await TrackingEvent.filter(type="CLICK", billable=True).count() == 3
    assert (await SiteDailyStat.get(site_id=site.id)).billable_clicks == 3
    assert await ledger.balance(ledger.campaign(campaign.id)) == 100 * G - 10 * (CPM // 1000) - 3 * CPC


async def test_rotating_the_fingerprint_does_not_bill_one_served_ad_twice(client, clock):
    site, campaign, _ = await setup_ad()
    ad = await served_and_seen(client, clock, site)
    results = await asyncio.gather(*(post(client, event_body(ad, site, fingerprint=f"fp-{n:04d}"))
                                     for n in range(50)))
    assert sum([await billed(body) for _, body in results]) == 1
    assert await TrackingEvent.filter(refusal_reason="token_reused").count() == 49
    assert await ledger.balance(ledger.campaign(campaign.id)) == 100 * G - CPM // 1000


async def test_budget_exhausted_mid_run_spends_exactly_the_budget(client, clock):
    budget = 5 * (CPM // 1000)
    site, campaign, _ = await setup_ad(budget=budget)
    ads = [await serve_ad(client, site) for _ in range(8)]
    clock.advance(seconds=2)
    results = await asyncio.gather(*(post(client, event_body(ad, site, fingerprint=f"fp-{n:04d}"))
                                     for n, ad in enumerate(ads)))
    assert all(response.status_code == 201 for response, _ in results)
    assert sum([await billed(body) for _, body in results]) == 5
    assert await TrackingEvent.filter(refusal_reason="budget_exhausted").count() == 3
    assert await ledger.balance(ledger.campaign(campaign.id)) == 0
    costs = await TrackingEvent.filter(billable=True).values_list("cost", flat=True)
    assert sum(int(cost) for cost in costs) == budget
    response = await client.get("/api/serve", query_string={"siteId": site.id})
    assert await response.get_json() == {"kind": "NONE"}


async def test_spend_never_exceeds_budget_across_batches(client, clock):
    budget = 7 * (CPM // 1000)
    site, campaign, _ = await setup_ad(budget=budget)
    ads = [await serve_ad(client, site) for _ in range(12)]
    clock.advance(seconds=2)
    for n, ad in enumerate(ads):
        await post(client, event_body(ad, site, fingerprint=f"fp-{n:04d}"))
    assert await TrackingEvent.filter(billable=True).count() == 7
    assert await ledger.balance(ledger.campaign(campaign.id)) == 0


async def reason_of(body: dict) -> str | None:
    assert not await billed(body)
    return (await TrackingEvent.get(id=body["eventId"])).refusal_reason


async def test_each_refusal_reason_is_recorded_and_counted(client, clock, settings):
    site, campaign, creative = await setup_ad()
    other_site = await make_site()  # where the campaign may run too, but its token was not served
    await Campaign.filter(id=campaign.id).update(site_allow=[site.id, other_site.id])
    await rebuild_index(current_app)
    seen: dict[str, int] = {}

    async def refused(body: dict, reason: str, headers: dict[str, str] | None = None) -> None:
        response, answer = await post(client, body, **(headers or {}))
        assert response.status_code == 201, answer
        assert await reason_of(answer) == reason
        assert reason not in str(answer)  # never told to the client
        seen[reason] = seen.get(reason, 0) + 1

    fingerprints = iter(range(1000))

    def fingerprint() -> str:
        return f"fp-{next(fingerprints):04d}"

    ad = await served_and_seen(client, clock, site)
    await refused(event_body(ad, site, fingerprint=fingerprint()), "bot_user_agent",
                  {"User-Agent": "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"})
    await refused(event_body(ad, site, fingerprint=fingerprint()), "bot_user_agent", {"User-Agent": ""})
    await refused(event_body(ad, site, fingerprint=fingerprint()), "client_mismatch",
                  {"User-Agent": "Mozilla/5.0 (Windows NT 10.0; rv:133.0) Gecko/20100101 Firefox/133.0"})
    await refused(event_body(ad, site, fingerprint=fingerprint(), trackingToken=None), "token_missing")
    await refused(event_body(ad, site, fingerprint=fingerprint(), trackingToken="abc.def"), "token_invalid")
    forged = issue_token("not-our-secret-" + "z" * 32, ad_id=creative.id, campaign_id=campaign.id,
                         site_id=site.id, placement="", size="300x250", wallet=None, click_active=True, off_site=False,
                         client=PAGE_CLIENT.binding, now=clock.now() - timedelta(seconds=5), nonce=1)
    await refused(event_body(ad, site, fingerprint=fingerprint(), trackingToken=forged), "token_invalid")
    await refused(event_body(ad, other_site, fingerprint=fingerprint()), "token_mismatch")
    await refused(event_body(ad, site, fingerprint=fingerprint()), "domain_mismatch",
                  {"Origin": "https://elsewhere.example"})
    await refused(event_body(ad, site, fingerprint=fingerprint(), pageUrl="https://elsewhere.example/"),
                  "domain_mismatch")
    await refused(event_body(ad, site, fingerprint=fingerprint(), rendered=False), "not_rendered")
    await refused(event_body(ad, site, fingerprint=fingerprint(), viewportVisible=False), "not_viewable")
    fresh = await serve_ad(client, site)
    await refused(event_body(fresh, site, fingerprint=fingerprint()), "view_too_short")
    clock.advance(seconds=2)
    await refused(event_body(fresh, site, fingerprint=fingerprint(), type="CLICK"), "click_without_impression")
    assert await billed((await post(client, event_body(fresh, site, fingerprint=fingerprint())))[1])
    await refused(event_body(fresh, site, fingerprint=fingerprint()), "token_reused")
    clock.advance(minutes=16)
    await refused(event_body(fresh, site, fingerprint=fingerprint()), "token_expired")

    poor_site, poor_campaign, _ = await setup_ad(funded=0)
    poor_ad = await served_and_seen(client, clock, poor_site, attached="1")
    assert poor_ad["campaignId"] == poor_campaign.id
    await refused(event_body(poor_ad, poor_site, fingerprint=fingerprint()), "budget_exhausted")
    await refused(event_body(poor_ad, poor_site, fingerprint=fingerprint(), type="CLICK"), "click_not_priced")

    capped_site, _, _ = await setup_ad(daily_cap=CPM // 1000)
    capped = [await served_and_seen(client, clock, capped_site) for _ in range(2)]
    assert await billed((await post(client, event_body(capped[0], capped_site, fingerprint=fingerprint())))[1])
    await refused(event_body(capped[1], capped_site, fingerprint=fingerprint()), "daily_cap_reached")

    # A frequency cap of one impression per viewer: the second ad served to the same viewer id is not billed.
    often_site = await make_site()
    often = await make_campaign(cpm=CPM, cpc=CPC, frequency_cap=1, frequency_hours=24, site_allow=[often_site.id])
    await make_creative(often, width=160, height=600)  # the only creative of this size: served whatever the draw
    await rebuild_index(current_app)
    seen_twice = [await serve_ad(client, often_site, size="160x600", viewer="viewer-often") for _ in range(2)]
    clock.advance(seconds=2)
    assert await billed((await post(client, event_body(seen_twice[0], often_site, fingerprint=fingerprint())))[1])
    await refused(event_body(seen_twice[1], often_site, fingerprint=fingerprint()), "frequency_capped")

    crowd = [await serve_ad(client, site, address="10.250.0.1") for _ in range(4)]
    clock.advance(seconds=2)
    for ad in crowd[:3]:  # the campaign's cap per network: 3 impressions per 5 minutes
        assert await billed((await post(client, event_body(ad, site, fingerprint=fingerprint())))[1])
    await refused(event_body(crowd[3], site, fingerprint=fingerprint()), "client_rate_exceeded")

    unproven = await make_site(verified=False)
    await make_creative(await make_campaign(cpm=CPM, cpc=CPC, site_allow=[unproven.id]))
    await rebuild_index(current_app)
    on_unproven = await served_and_seen(client, clock, unproven)
    await refused(event_body(on_unproven, unproven, fingerprint=fingerprint()), "site_unverified")

    # Served before the advertiser excluded the site, or before the site's owner blocked the advertiser: the rule
    # of where a campaign may be paid is applied again when the event arrives (tests/api/test_site_rules.py).
    excluded_site, excluded_campaign, _ = await setup_ad()
    blocked_site, blocked_campaign, _ = await setup_ad()
    excluded_ad = await served_and_seen(client, clock, excluded_site)
    blocked_ad = await served_and_seen(client, clock, blocked_site)
    await Campaign.filter(id=excluded_campaign.id).update(site_deny=[excluded_site.id])
    await Site.filter(id=blocked_site.id).update(controls={"blocked_advertisers": [blocked_campaign.advertiser_id]})
    await rebuild_index(current_app)
    await refused(event_body(excluded_ad, excluded_site, fingerprint=fingerprint()), "site_excluded")
    await refused(event_body(blocked_ad, blocked_site, fingerprint=fingerprint()), "site_blocked")

    assert set(seen) == set(tracking.REASONS)
    # Every reason reaches the site's owner and the campaign's advertiser, in their reports of the day.
    day = clock.today()
    assert (await traffic.site_traffic(poor_site.id, day, day)).totals.filtered == {
        "budget_exhausted": 1, "click_not_priced": 1}
    by_sites: Counter[str] = Counter()
    for site_id in await Site.all().values_list("id", flat=True):
        by_sites.update((await traffic.site_traffic(site_id, day, day)).totals.filtered)
    by_campaigns: Counter[str] = Counter()
    for owned in await Campaign.all().prefetch_related("advertiser"):
        report = await campaign_reports.campaign_report(owned.advertiser.wallet, owned.id, day, day)
        by_campaigns.update(report.totals.filtered)
    assert by_sites == by_campaigns == Counter(seen)


async def test_a_script_from_one_address_bills_no_more_than_the_caps(client, clock, settings):
    """One address with a browser's User-Agent: 100 serve + impression pairs with fresh fingerprints, sent at
    once, bill the site's cap per network and window (5), and at most the campaign cap (3) of each campaign."""
    site, _, _ = await setup_ad()
    other = await make_campaign(cpm=CPM, cpc=CPC)
    await make_creative(other)
    await rebuild_index(current_app)
    ads = [await serve_ad(client, site, address="203.0.113.7") for _ in range(100)]
    clock.advance(seconds=2)
    results = await asyncio.gather(*(post(client, event_body(ad, site, fingerprint=f"script-{n}"))
                                     for n, ad in enumerate(ads)))
    assert [response.status_code for response, _ in results] == [201] * 100
    billed_events = await TrackingEvent.filter(billable=True, type="IMPRESSION").values_list("campaign_id", flat=True)
    assert len(billed_events) == settings.cap_site_impressions.count == 5
    assert max(Counter(billed_events).values()) <= settings.cap_campaign_impressions.count
    assert await TrackingEvent.filter(refusal_reason="client_rate_exceeded").count() == 95
    assert await TrackingEvent.filter(client_network="203.0.113.0/24").count() == 100  # never the address

    # Clicks likewise: one per campaign (both have billed impressions, at most 3 of the 5 each), two on the site.
    clicks = await asyncio.gather(*(post(client, event_body(ad, site, type="CLICK", fingerprint=f"script-{n}"))
                                    for n, ad in enumerate(ads)))
    assert sum([await billed(body) for _, body in clicks]) == settings.cap_site_clicks.count == 2

    # The next window opens the caps again.
    clock.advance(seconds=settings.cap_site_impressions.seconds)
    later = await served_and_seen(client, clock, site, address="203.0.113.8")
    assert await billed((await post(client, event_body(later, site, fingerprint="script-later")))[1])


async def test_daily_spend_never_exceeds_the_daily_cap_and_serving_stops_until_the_next_day(client, clock):
    price = CPM // 1000
    site, campaign, _ = await setup_ad(daily_cap=5 * price + price // 2)
    ads = [await serve_ad(client, site) for _ in range(20)]
    clock.advance(seconds=2)
    results = await asyncio.gather(*(post(client, event_body(ad, site, fingerprint=f"fp-{n:04d}"))
                                     for n, ad in enumerate(ads)))
    assert [response.status_code for response, _ in results] == [201] * 20
    assert sum([await billed(body) for _, body in results]) == 5
    assert await TrackingEvent.filter(refusal_reason="daily_cap_reached").count() == 15
    assert await ledger.balance(ledger.campaign(campaign.id)) == 100 * G - 5 * price
    # Clicks cannot pass the cap either, and the campaign is no longer served today, without a rebuild.
    _, click = await post(client, event_body(ads[0], site, type="CLICK", fingerprint="fp-click"))
    assert await reason_of(click) == "daily_cap_reached"
    assert await (await client.get("/api/serve", query_string={"siteId": site.id}, headers=page(site))
                  ).get_json() == {"kind": "NONE"}
    await rebuild_index(current_app)  # today's spend is read back from the database
    assert await (await client.get("/api/serve", query_string={"siteId": site.id}, headers=page(site))
                  ).get_json() == {"kind": "NONE"}

    clock.advance(days=1)
    await rebuild_index(current_app)
    tomorrow = await served_and_seen(client, clock, site)
    assert await billed((await post(client, event_body(tomorrow, site, fingerprint="fp-tomorrow")))[1])


async def test_events_are_counted_per_site_and_day(client, clock):
    site, _, _ = await setup_ad()
    ad = await served_and_seen(client, clock, site)
    await post(client, event_body(ad, site))
    await post(client, event_body(ad, site, type="CLICK"))
    await post(client, event_body(ad, site, fingerprint="fp-bot"), **{"User-Agent": "curl/8.0"})
    stat = await SiteDailyStat.get(site_id=site.id, day=clock.now().date())
    assert (stat.impressions, stat.billable_impressions, stat.clicks, stat.billable_clicks) == (2, 1, 1, 1)


async def test_unknown_site_campaign_or_ad_is_404_and_stores_nothing(client, clock):
    site, _, _ = await setup_ad()
    other_campaign = await make_campaign()
    other_creative = await make_creative(other_campaign)
    ad = await served_and_seen(client, clock, site)
    for overrides in ({"siteId": "site_unknown123456"}, {"campaignId": "cmp_unknown1234567"},
                      {"adId": "ad_unknown12345678"}, {"adId": other_creative.id}):
        response, body = await post(client, event_body(ad, site, **overrides))
        assert response.status_code == 404 and body["error"] == "not_found"
        assert response.headers["Cache-Control"] == "no-store"
    assert await TrackingEvent.all().count() == 0 and await DedupKey.all().count() == 0


async def test_events_for_an_ad_no_longer_served_are_still_recorded(client, clock):
    site, campaign, _ = await setup_ad()
    ad = await served_and_seen(client, clock, site)
    campaign.status = "paused"
    await campaign.save()
    await rebuild_index(client.app)
    response, body = await post(client, event_body(ad, site))
    assert response.status_code == 201 and await billed(body)


@pytest.mark.parametrize(("overrides", "field"), [
    ({"type": "VIEW"}, "type"),
    ({"type": None}, "type"),
    ({"rendered": "true"}, "rendered"),
    ({"viewportVisible": 1}, "viewportVisible"),
    ({"timestamp": "1767225600000"}, "timestamp"),
    ({"timestamp": 1.5}, "timestamp"),
    ({"renderTime": -1}, "renderTime"),
    ({"pageUrl": "javascript:alert(1)"}, "pageUrl"),
    ({"pageUrl": "https://x.example/" + "a" * 2048}, "pageUrl"),
    ({"userAgent": "M" * 513}, "userAgent"),
    ({"fingerprint": ""}, "fingerprint"),
    ({"fingerprint": "has space"}, "fingerprint"),
    ({"campaignId": 5}, "campaignId"),
    ({"trackingToken": "t" * 1025}, "trackingToken"),
    ({"extra": "field"}, "extra"),
])
async def test_invalid_body_is_400_naming_the_field_and_stores_nothing(client, clock, overrides, field):
    site, _, _ = await setup_ad()
    ad = await served_and_seen(client, clock, site)
    response, body = await post(client, event_body(ad, site, **overrides))
    assert response.status_code == 400
    assert body["error"] in ("invalid_field", "missing_field") and body["field"] == field
    assert await TrackingEvent.all().count() == 0


async def test_missing_required_field_is_400(client, clock):
    site, _, _ = await setup_ad()
    ad = await served_and_seen(client, clock, site)
    body = event_body(ad, site)
    del body["fingerprint"]
    response, answer = await post(client, body)
    assert response.status_code == 400 and answer == {
        "error": "missing_field", "message": "fingerprint: this field is required", "field": "fingerprint"}


async def test_the_request_header_decides_and_the_reported_user_agent_is_kept_as_information(client, clock):
    site, _, _ = await setup_ad()
    ad = await served_and_seen(client, clock, site)
    _, body = await post(client, event_body(ad, site), **{"User-Agent": "python-requests/2.32"})
    assert await reason_of(body) == "bot_user_agent"  # a browser's userAgent in the body changes nothing
    event = await TrackingEvent.get(id=body["eventId"])
    assert (event.user_agent, event.reported_user_agent) == ("python-requests/2.32", BROWSER)


async def test_cors_preflight_and_headers(client, clock):
    response = await client.options("/api/track", headers={
        "Origin": "https://publisher.example", "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "content-type"})
    assert response.status_code == 200
    assert response.headers["Access-Control-Allow-Origin"] == "*"
    assert "POST" in response.headers["Access-Control-Allow-Methods"]
    assert "content-type" in response.headers["Access-Control-Allow-Headers"].lower()
    site, _, _ = await setup_ad()
    ad = await served_and_seen(client, clock, site)
    tracked = await client.post("/api/track", json=event_body(ad, site), headers={"Origin": "https://p.example"})
    assert tracked.headers["Access-Control-Allow-Origin"] == "*"
    assert tracked.headers["Cache-Control"] == "no-store"


async def test_amounts_are_exact_for_large_prices(client, clock):
    site, campaign, _ = await setup_ad(budget=10**30, cpm=10**27 + 999)
    ad = await served_and_seen(client, clock, site)
    _, body = await post(client, event_body(ad, site))
    event = await TrackingEvent.get(id=body["eventId"])
    assert event.cost == Decimal((10**27 + 999) // 1000)
    assert await ledger.balance(ledger.campaign(campaign.id)) == 10**30 - (10**27 + 999) // 1000


async def test_forwarded_for_is_ignored_without_a_trusted_proxy_and_no_address_is_stored(client, clock):
    site, _, _ = await setup_ad()
    ad = await served_and_seen(client, clock, site)
    _, body = await post(client, event_body(ad, site), **{"X-Forwarded-For": "192.0.2.7"})
    event = await TrackingEvent.get(id=body["eventId"])
    assert event.client_network == network(_served_to[ad["trackingToken"]])  # the peer's network, never 192.0.2.x


async def test_tokens_of_the_previous_secret_still_bill_after_rotation(app, client, clock):
    old_secret = "the-secret-before-rotation-" + "q" * 32
    tracker = app.extensions["adnet"].tracker
    tracker.settings = tracker.settings.model_copy(update={"tracking_secret_previous": old_secret})
    site, campaign, creative = await setup_ad()

    def signed_with(secret: str, nonce: int) -> dict:
        token = issue_token(secret, ad_id=creative.id, campaign_id=campaign.id, site_id=site.id, placement="",
                            size="300x250", wallet=None, click_active=True, off_site=False,
                            client=PAGE_CLIENT.binding,
                            now=clock.now() - timedelta(seconds=5), nonce=nonce)
        return {"id": creative.id, "campaignId": campaign.id, "trackingToken": token}

    _, body = await post(client, event_body(signed_with(old_secret, 1), site))
    assert await billed(body)
    _, refused = await post(client, event_body(signed_with("never-configured-" + "w" * 32, 2), site,
                                               fingerprint="fp-2"))
    assert await reason_of(refused) == "token_invalid"
