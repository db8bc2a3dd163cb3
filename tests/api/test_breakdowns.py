"""Breakdowns through HTTP: impressions and clicks tracked through ``/api/track`` from clients of several countries
and devices, on two sites and two placements, for two campaigns of one advertiser; the advertiser's breakdowns by
site, placement, country and device and the site's by placement, country and device equal what the raw events
say, the CSV says what the JSON says, ``adnet reports rebuild`` gives the same rows (twice), and only the account
(a member of the site's, or a key with ``reports:read``) reads them."""

from __future__ import annotations

import asyncio
import csv
import io
import os
import subprocess
import sys
from collections import defaultdict
from datetime import UTC, datetime, timedelta

import pytest
from eth_account import Account

from adnet.accounts.models import MemberRole, PublisherMember
from adnet.core.amounts import to_decimal_string
from adnet.core.ids import new_id
from adnet.delivery.models import ReportDaily, TrackingEvent
from adnet.reporting.breakdowns import rebuild
from tests.api.test_api_keys import issue
from tests.api.test_serve import app_context  # noqa: F401 - autouse: the app as the current app
from tests.api.test_serve_targeting import IPAD, IPHONE
from tests.api.test_track import BROWSER, event_body, fresh_address, from_address
from tests.auth_helpers import bearer, sign_in
from tests.conftest import make_settings, rebuild_index
from tests.factories import make_advertiser, make_campaign, make_creative, make_publisher, make_site

# (site, placement, country header, User-Agent, clicked): each one viewer's served ad, seen and maybe clicked.
VISITS = [
    (0, "top", "DE", BROWSER, True), (0, "top", "DE", IPHONE, False), (0, "side", "FR", IPHONE, True),
    (0, "", None, IPAD, False), (1, "top", "FR", BROWSER, False), (1, "side", "DE", BROWSER, True),
    (1, "side", "XX", IPHONE, False), (0, "top", "FR", BROWSER, False),
]
DIMENSIONS = ("site", "placement", "country", "device")


@pytest.fixture
def settings(database_url, data_dir):
    """Behind one trusted proxy, whose country header locates the client."""
    return make_settings(database_url, data_dir, ADNET_TRUSTED_PROXIES="1")


@pytest.fixture
async def traffic(client, clock):
    """An advertiser (signed in) with two campaigns on two sites of one publisher (signed in), and the events of
    ``VISITS``, plus one impression not billed (never in view): (advertiser token, publisher token, sites,
    campaigns)."""
    advertiser_account, publisher_account = Account.create(), Account.create()
    advertiser = await make_advertiser(advertiser_account.address.lower())
    publisher = await make_publisher(publisher_account.address.lower())
    sites = [await make_site(publisher, domain=f"news{number}.example") for number in range(2)]
    campaigns = [await make_campaign(advertiser, cpm=(2 + number) * 10**18, cpc=10**17 * (1 + number))
                 for number in range(2)]
    for campaign in campaigns:
        await make_creative(campaign)
    await rebuild_index(client.app)
    for number, (site_index, placement, country, agent, clicked) in enumerate(VISITS * 2):
        served = await serve(client, sites[site_index], placement, country, agent)
        clock.advance(seconds=2)
        for tracked in await track(client, served, ["IMPRESSION", "CLICK"] if clicked else ["IMPRESSION"],
                                   f"fp-{number:04d}"):
            assert tracked.status_code == 201, await tracked.get_json()
    unseen = await client.get("/api/serve", query_string={"siteId": sites[0].id},
                              headers={"User-Agent": BROWSER, "Origin": f"https://{sites[0].domain}"},
                              **from_address("10.250.0.1"))
    body = event_body((await unseen.get_json())["ad"], sites[0], fingerprint="fp-unseen", viewportVisible=False)
    await client.post("/api/track", json=body, headers={"User-Agent": BROWSER, "Origin": f"https://{sites[0].domain}"},
                      **from_address("10.250.0.1"))
    return (await sign_in(client, advertiser_account), await sign_in(client, publisher_account), sites, campaigns)


async def serve(client, site, placement: str, country: str | None, agent: str) -> tuple:
    """An ad served to a viewer of its own network: (site, ad, the viewer's headers and address)."""
    address = fresh_address()
    headers = {"User-Agent": agent, "Origin": f"https://{site.domain}",
               **({"CF-IPCountry": country} if country else {})}
    served = await client.get("/api/serve", query_string={"siteId": site.id, "placement": placement},
                              headers=headers, **from_address(address))
    return site, (await served.get_json())["ad"], headers, address


async def track(client, served: tuple, kinds: list[str], fingerprint: str) -> list:
    """The viewer's events of the ad, one after another."""
    site, ad, headers, address = served
    return [await client.post("/api/track", json=event_body(ad, site, type=kind, fingerprint=fingerprint,
                                                             userAgent=headers["User-Agent"]),
                              headers=headers, **from_address(address)) for kind in kinds]


async def expected(by: str, **filters) -> dict[str, tuple[int, int, int, int]]:
    """The breakdown the raw billed events give: key -> (impressions, clicks, cost, publisher amount)."""
    figures: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for event in await TrackingEvent.filter(billable=True, **filters).prefetch_related("site"):
        key = {"site": event.site.domain, "placement": event.placement, "country": event.country,
               "device": event.device}[by] or "unknown"
        figures[key][0 if event.type == "IMPRESSION" else 1] += 1
        figures[key][2] += int(event.cost)
        figures[key][3] += int(event.publisher_amount)
    return {key: tuple(values) for key, values in figures.items()}


def as_figures(body: dict) -> dict[str, tuple[int, int, str]]:
    return {row["key"]: (row["impressions"], row["clicks"], row["amount"]) for row in body["rows"]}


async def get(client, token: str, path: str, **params):
    response = await client.get(path, query_string=params, headers=bearer(token))
    return response.status_code, response


async def test_an_advertisers_breakdowns_equal_the_raw_events(client, traffic):
    advertiser, _, _, campaigns = traffic
    assert await TrackingEvent.filter(billable=False).count() == 1
    for by in DIMENSIONS:
        status, response = await get(client, advertiser, "/api/advertisers/reports/breakdown", by=by)
        assert status == 200
        body = await response.get_json()
        raw = await expected(by)
        assert as_figures(body) == {key: (imps, clicks, to_decimal_string(cost))
                                    for key, (imps, clicks, cost, _) in raw.items()}
        assert body["total"]["impressions"] == sum(value[0] for value in raw.values()) == len(VISITS) * 2
        assert body["total"]["amount"] == to_decimal_string(sum(value[2] for value in raw.values()))
        for row in body["rows"]:
            assert row["ctr"] == f"{row['clicks'] / row['impressions']:.6f}"
    _, response = await get(client, advertiser, "/api/advertisers/reports/breakdown", by="country")
    assert set(as_figures(await response.get_json())) == {"DE", "FR", "unknown"}  # XX is no country
    _, response = await get(client, advertiser, "/api/advertisers/reports/breakdown", by="device")
    assert set(as_figures(await response.get_json())) == {"desktop", "mobile", "tablet"}
    _, response = await get(client, advertiser, "/api/advertisers/reports/breakdown", by="site",
                            campaignId=campaigns[1].id)
    assert as_figures(await response.get_json()) == {
        key: (imps, clicks, to_decimal_string(cost))
        for key, (imps, clicks, cost, _) in (await expected("site", campaign_id=campaigns[1].id)).items()}


async def test_a_sites_breakdowns_equal_the_raw_events(client, traffic):
    _, publisher, sites, _ = traffic
    for by in ("placement", "country", "device"):
        status, response = await get(client, publisher, f"/api/publishers/sites/{sites[1].id}/breakdown", by=by)
        assert status == 200
        assert as_figures(await response.get_json()) == {
            key: (imps, clicks, to_decimal_string(earned))
            for key, (imps, clicks, _, earned) in (await expected(by, site_id=sites[1].id)).items()}
    status, response = await get(client, publisher, f"/api/publishers/sites/{sites[1].id}/breakdown", by="site")
    assert status == 400 and (await response.get_json())["field"] == "by"


async def test_the_csv_says_what_the_json_says(client, traffic):
    advertiser, publisher, sites, _ = traffic
    for token, path, amount in ((advertiser, "/api/advertisers/reports/breakdown", "spend"),
                                (publisher, f"/api/publishers/sites/{sites[0].id}/breakdown", "earned")):
        for by in ("placement", "device"):
            _, json_answer = await get(client, token, path, by=by)
            status, csv_answer = await get(client, token, f"{path}.csv", by=by)
            assert status == 200 and csv_answer.mimetype == "text/csv"
            assert csv_answer.headers["Content-Disposition"].startswith("attachment; filename=")
            body = await json_answer.get_json()
            lines = list(csv.reader(io.StringIO(await csv_answer.get_data(as_text=True))))
            conversions = (["conversions", "conversion_rate", "cost_per_conversion", "conversion_value", "roas"]
                           if amount == "spend" else ["conversions"])
            assert lines[0] == [by, "impressions", "clicks", "ctr", amount, *conversions]
            assert lines[1:] == [[row["key"], str(row["impressions"]), str(row["clicks"]), row["ctr"], row["amount"],
                                  *(str(row["conversions"]), row["conversionRate"] or "", row["costPerConversion"],
                                    row["value"], row["roas"] or "")[:len(conversions)]]
                                 for row in [*body["rows"], body["total"]]]


async def stored_rows() -> list[tuple]:
    return sorted(await ReportDaily.all().values_list(
        "day", "campaign_id", "site_id", "placement", "country", "device", "impressions", "clicks", "cost",
        "publisher_amount"))


async def test_rebuilding_gives_the_same_rows_twice(client, traffic, clock, settings):
    kept = await stored_rows()
    assert kept and sum(row[6] for row in kept) == len(VISITS) * 2
    await rebuild(clock.now(), settings.event_retention_days)
    assert await stored_rows() == kept
    await ReportDaily.all().delete()
    await rebuild(clock.now(), settings.event_retention_days)
    await rebuild(clock.now(), settings.event_retention_days)
    assert await stored_rows() == kept


async def test_a_rebuild_beside_tracking_loses_and_doubles_nothing(client, traffic, clock, settings):
    _, _, sites, _ = traffic
    served = [await serve(client, sites[number % 2], "top", "DE", BROWSER) for number in range(12)]
    clock.advance(seconds=2)
    before = sum(row[6] for row in await stored_rows())
    tracked = await asyncio.gather(rebuild(clock.now(), settings.event_retention_days),
                                   *(track(client, ad, ["IMPRESSION"], f"fp-race-{number}")
                                     for number, ad in enumerate(served)))
    assert [response.status_code for responses in tracked[1:] for response in responses] == [201] * 12
    after = await stored_rows()
    assert sum(row[6] for row in after) == before + 12
    await rebuild(clock.now(), settings.event_retention_days)
    assert await stored_rows() == after


async def test_rebuilding_keeps_the_days_retention_emptied(client, traffic, clock, settings):
    _, _, sites, campaigns = traffic
    long_ago = (clock.now() - timedelta(days=settings.event_retention_days + 5)).date()
    await ReportDaily.create(day=long_ago, campaign_id=campaigns[0].id, site_id=sites[0].id, placement="top",
                             country="DE", device="desktop", impressions=7, clicks=1, cost=1, publisher_amount=0)
    kept = await stored_rows()
    await rebuild(clock.now(), settings.event_retention_days)
    assert await stored_rows() == kept


async def test_the_command_rebuilds_idempotently(client, traffic, settings, clock):
    kept = await stored_rows()
    await ReportDaily.all().delete()
    # The command reads the wall clock: its retention reaches back to the test clock's day.
    retention = (datetime.now(UTC) - clock.now()).days + 2
    env = {**os.environ, "ADNET_ENV": "test", "ADNET_DATABASE_URL": settings.database_url,
           "ADNET_DATA_DIR": str(settings.data_dir), "ADNET_SECRET_KEY": settings.secret_key,
           "ADNET_TRACKING_SECRET": settings.tracking_secret, "ADNET_SIGNER_KEY": settings.signer_key,
           "ADNET_EVENT_RETENTION_DAYS": str(retention)}

    def command() -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "adnet", "reports", "rebuild"], env=env, capture_output=True,
                              text=True, timeout=120, check=False)

    for _ in range(2):
        result = await asyncio.to_thread(command)
        assert result.returncode == 0, result.stderr
        assert f'"rows": {len(kept)}' in result.stdout
        assert await stored_rows() == kept


async def test_only_the_account_its_members_and_its_reading_keys_see_them(client, traffic):
    advertiser, publisher, sites, campaigns = traffic
    stranger_account = Account.create()
    stranger = await sign_in(client, stranger_account)
    site_path = f"/api/publishers/sites/{sites[0].id}/breakdown"
    assert (await get(client, stranger, site_path))[0] == 403
    assert (await get(client, stranger, "/api/advertisers/reports/breakdown",
                      campaignId=campaigns[0].id))[0] == 403
    assert (await get(client, stranger, "/api/advertisers/reports/breakdown"))[0] == 404  # no advertiser account
    assert (await get(client, advertiser, site_path))[0] == 403
    assert (await client.get(site_path)).status_code == 401

    await PublisherMember.create(id=new_id("mem"), publisher_id=sites[0].publisher_id,  # type: ignore[attr-defined]
                                 wallet=stranger_account.address.lower(), role=MemberRole.VIEWER,
                                 created_at=sites[0].created_at)
    assert (await get(client, stranger, site_path))[0] == 200

    reader = (await issue(client, publisher, "reports:read"))["token"]
    manager = (await issue(client, publisher, "sites:manage"))["token"]
    assert (await get(client, reader, f"{site_path}.csv"))[0] == 200
    status, refused = await get(client, manager, site_path)
    assert status == 403 and (await refused.get_json())["error"] == "scope_denied"
