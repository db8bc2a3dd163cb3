"""Hourly reports through the API: a campaign's report and a site's traffic with ``granularity=hour``, and the
breakdowns ``by=hour``, answer a row per UTC hour whose figures add up exactly to the same report's days, in JSON and
CSV; hours reach back 14 days, and a range further back is refused with ``hourly_too_old``."""

from __future__ import annotations

import csv
import io
from collections import defaultdict
from datetime import timedelta
from decimal import Decimal

from eth_account import Account

from adnet.campaigns.models import ConversionGoal
from adnet.conversions.models import Conversion
from adnet.core.ids import new_id
from tests.api.test_serve import app_context  # noqa: F401 - autouse: the app as the current app
from tests.api.test_track import BROWSER, G, event_body, post, served_and_seen, setup_ad
from tests.auth_helpers import bearer, sign_in

# Figures of a row that add up over its hours (ratios do not: they are recomputed from the sums).
SITE_SUMS = ("impressions", "billedImpressions", "clicks", "billedClicks", "earned", "conversions",
             "conversionEarned")
CAMPAIGN_SUMS = ("impressions", "billableImpressions", "clicks", "billableClicks", "spend", "rewards", "conversions",
                 "conversionSpend", "conversionValue")


async def traffic_over_two_days(client, clock):
    """A site and its campaign, each signed in to by its owner, with events over the first two UTC days of the
    clock: billed impressions and a click at several hours, one event kept from billing by a bot's User-Agent, and
    two paid conversions at different hours. The owners (the site's, the campaign's), the site and the campaign."""
    site, campaign, _ = await setup_ad()
    publisher, advertiser = Account.create(), Account.create()
    await site.fetch_related("publisher")
    site.publisher.wallet = publisher.address.lower()
    await site.publisher.save()
    await campaign.fetch_related("advertiser")
    campaign.advertiser.wallet = advertiser.address.lower()
    await campaign.advertiser.save()
    goal = await ConversionGoal.create(id=new_id("goal"), campaign_id=campaign.id, name="Buy", event="buy", cpa=G,
                                       created_at=clock.now(), updated_at=clock.now())
    for index, hours in enumerate((1, 3, 0, 9, 12, 2)):  # from 00:00 on day one to 03:00 on day two
        clock.advance(hours=hours)
        ad = await served_and_seen(client, clock, site)
        await post(client, event_body(ad, site, fingerprint=f"fp-{index}"))
        if index == 1:
            await post(client, event_body(ad, site, fingerprint=f"fp-{index}", type="CLICK"))
        if index in (2, 4):
            await post(client, event_body(ad, site, fingerprint=f"fp-bot-{index}", userAgent=BROWSER),
                       **{"User-Agent": "python-requests/2.31"})
        if index in (3, 5):
            await Conversion.create(id=new_id("cv"), campaign_id=campaign.id, goal=goal, order_id=f"order-{index}",
                                    site_id=site.id, value=Decimal(3 * G), occurred_at=clock.now(),
                                    received_at=clock.now(), attributed=True, paid=True, cost=Decimal(G),
                                    publisher_amount=Decimal(G * 7 // 10))
    return (publisher, advertiser), site, campaign


async def signed_in(client, owners) -> tuple[str, str]:
    """The owners' tokens, signed in now (a session lasts a day: the events took longer)."""
    return await sign_in(client, owners[0]), await sign_in(client, owners[1])


def summed_by_day(rows: list[dict], names: tuple[str, ...]) -> dict[str, dict[str, int | Decimal]]:
    """Each day's hours added up: the figures ``names`` of every hourly row, by its UTC day."""
    days: dict[str, dict[str, int | Decimal]] = defaultdict(lambda: defaultdict(int))
    for row in rows:
        for name in names:
            days[row["day"]][name] += Decimal(row[name]) if isinstance(row[name], str) else row[name]
    return days


def figures(row: dict, names: tuple[str, ...]) -> dict[str, int | Decimal]:
    return {name: Decimal(row[name]) if isinstance(row[name], str) else row[name] for name in names}


async def test_a_sites_hours_add_up_to_its_days(client, clock):
    owners, site, _ = await traffic_over_two_days(client, clock)
    token, _ = await signed_in(client, owners)
    path = f"/api/publishers/sites/{site.id}/traffic"
    span = {"from": "2026-01-01", "to": "2026-01-02"}
    daily = await (await client.get(path, query_string=span, headers=bearer(token))).get_json()
    response = await client.get(path, query_string={**span, "granularity": "hour"}, headers=bearer(token))
    assert response.status_code == 200
    hourly = await response.get_json()
    assert (daily["granularity"], hourly["granularity"]) == ("day", "hour")
    assert [row["hour"] for row in hourly["days"][:2]] == ["2026-01-01T00:00:00Z", "2026-01-01T01:00:00Z"]
    assert len(hourly["days"]) == 48 and hourly["days"][-1]["hour"] == "2026-01-02T23:00:00Z"
    assert all(row["hour"] is None for row in daily["days"]) and hourly["totals"]["hour"] is None
    sums = summed_by_day(hourly["days"], SITE_SUMS)
    for day in daily["days"]:
        assert sums[day["day"]] == figures(day, SITE_SUMS), day["day"]
    assert hourly["totals"] == daily["totals"]
    busy = {row["hour"]: row for row in hourly["days"] if row["impressions"]}
    assert list(busy) == ["2026-01-01T01:00:00Z", "2026-01-01T04:00:00Z", "2026-01-01T13:00:00Z",
                          "2026-01-02T01:00:00Z", "2026-01-02T03:00:00Z"]
    assert busy["2026-01-01T04:00:00Z"]["filtered"] == {"bot_user_agent": 1}
    assert busy["2026-01-01T04:00:00Z"]["billedClicks"] == 1
    assert [row["conversions"] for row in hourly["days"] if row["conversions"]] == [1, 1]
    assert daily["totals"]["conversions"] == 2 and Decimal(daily["totals"]["earned"]) > 0


async def test_a_campaigns_hours_add_up_to_its_days_in_json_and_csv(client, clock):
    owners, _, campaign = await traffic_over_two_days(client, clock)
    _, token = await signed_in(client, owners)
    path = f"/api/advertisers/campaigns/{campaign.id}/report"
    span = {"from": "2026-01-01", "to": "2026-01-02"}
    daily = await (await client.get(path, query_string=span, headers=bearer(token))).get_json()
    hourly = await (await client.get(path, query_string={**span, "granularity": "hour"},
                                     headers=bearer(token))).get_json()
    assert hourly["granularity"] == "hour" and len(hourly["days"]) == 48
    sums = summed_by_day(hourly["days"], CAMPAIGN_SUMS)
    for day in daily["days"]:
        assert sums[day["day"]] == figures(day, CAMPAIGN_SUMS), day["day"]
    assert hourly["totals"] == daily["totals"] and daily["totals"]["conversions"] == 2

    response = await client.get(f"{path}.csv", query_string={**span, "granularity": "hour"}, headers=bearer(token))
    assert response.status_code == 200 and "-hourly.csv" in response.headers["Content-Disposition"]
    rows = list(csv.DictReader(io.StringIO(await response.get_data(as_text=True))))
    daily_rows = list(csv.DictReader(io.StringIO(await (await client.get(
        f"{path}.csv", query_string=span, headers=bearer(token))).get_data(as_text=True))))
    assert [row["hour"] for row in rows[:2]] == ["2026-01-01T00:00:00Z", "2026-01-01T01:00:00Z"]
    assert len(rows) == 49 and rows[-1]["hour"] == "total"
    assert list(rows[-1].values()) == list(daily_rows[-1].values())  # the same total, under "hour" for "day"
    by_day: dict[str, Decimal] = defaultdict(Decimal)
    for row in rows[:-1]:
        by_day[row["hour"][:10]] += Decimal(row["spend"])
    assert {row["day"]: Decimal(row["spend"]) for row in daily_rows[:-1]} == dict(by_day)
    for hour_row, json_row in zip(rows[:-1], hourly["days"], strict=True):
        assert (hour_row["hour"], int(hour_row["impressions"]), hour_row["spend"]) == (
            json_row["hour"], json_row["impressions"], json_row["spend"])


async def test_hours_reach_back_fourteen_days(client, clock):
    owners, site, campaign = await traffic_over_two_days(client, clock)
    clock.advance(days=20)
    token, advertiser = await signed_in(client, owners)
    today = clock.today()
    oldest = (today - timedelta(days=13)).isoformat()
    for path in (f"/api/publishers/sites/{site.id}/traffic", f"/api/publishers/sites/{site.id}/traffic.csv"):
        allowed = await client.get(path, query_string={"granularity": "hour", "from": oldest},
                                   headers=bearer(token))
        assert allowed.status_code == 200
        for asked in ({"from": (today - timedelta(days=14)).isoformat()},
                      {"to": (today - timedelta(days=14)).isoformat()}):
            refused = await client.get(path, query_string={"granularity": "hour", **asked}, headers=bearer(token))
            assert refused.status_code == 400
            body = await refused.get_json()
            assert (body["error"], body["field"]) == ("hourly_too_old", "from") and oldest in body["message"]
        bad = await client.get(path, query_string={"granularity": "minute"}, headers=bearer(token))
        assert bad.status_code == 400 and (await bad.get_json())["field"] == "granularity"
    one_day = await (await client.get(f"/api/publishers/sites/{site.id}/traffic", query_string={
        "granularity": "hour"}, headers=bearer(token))).get_json()
    assert (one_day["from"], one_day["to"], len(one_day["days"])) == (today.isoformat(), today.isoformat(), 24)
    for path in (f"/api/advertisers/campaigns/{campaign.id}/report",
                 f"/api/advertisers/campaigns/{campaign.id}/report.csv"):
        refused = await client.get(path, query_string={"granularity": "hour", "from": "2026-01-01"},
                                   headers=bearer(advertiser))
        assert refused.status_code == 400 and (await refused.get_json())["error"] == "hourly_too_old"


BREAKDOWN_SUMS = ("impressions", "clicks", "amount", "conversions")


async def test_breakdowns_by_hour_add_up_to_their_days(client, clock):
    owners, site, _ = await traffic_over_two_days(client, clock)
    publisher, advertiser = await signed_in(client, owners)
    span = {"from": "2026-01-01", "to": "2026-01-02"}
    for path, token in ((f"/api/publishers/sites/{site.id}/breakdown", publisher),
                        ("/api/advertisers/reports/breakdown", advertiser)):
        daily = await (await client.get(path, query_string={**span, "by": "day"}, headers=bearer(token))).get_json()
        response = await client.get(path, query_string={**span, "by": "hour"}, headers=bearer(token))
        assert response.status_code == 200, await response.get_json()
        hourly = await response.get_json()
        assert [row["key"] for row in hourly["rows"]] == [
            "2026-01-01T01:00:00Z", "2026-01-01T04:00:00Z", "2026-01-01T13:00:00Z", "2026-01-02T01:00:00Z",
            "2026-01-02T03:00:00Z"]  # the hours billed or converted in, oldest first
        by_day: dict[str, dict[str, int | Decimal]] = defaultdict(lambda: defaultdict(int))
        for row in hourly["rows"]:
            for name in BREAKDOWN_SUMS:
                by_day[row["key"][:10]][name] += figures(row, (name,))[name]
        assert {row["key"]: figures(row, BREAKDOWN_SUMS) for row in daily["rows"]} == by_day
        assert hourly["total"] == daily["total"] and daily["total"]["conversions"] == 2
        rows = list(csv.DictReader(io.StringIO(await (await client.get(
            f"{path}.csv", query_string={**span, "by": "hour"}, headers=bearer(token))).get_data(as_text=True))))
        assert [row["hour"] for row in rows] == [row["key"] for row in hourly["rows"]] + ["total"]
        refused = await client.get(path, query_string={"by": "hour", "from": "2025-12-01", "to": "2026-01-02"},
                                   headers=bearer(token))
        assert refused.status_code == 400 and (await refused.get_json())["error"] == "hourly_too_old"
