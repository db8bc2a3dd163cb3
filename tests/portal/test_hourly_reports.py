"""Hourly figures in the portal: the campaign report's "Per hour" toggle shows a row per UTC hour written in the
time zone the viewer picks (named on the page, remembered in a cookie, UTC by default), its CSV keeps the hours in
UTC, and hours further back than 14 days are refused beside the form; so do a site's traffic section, the
breakdowns by hour and the earnings chart."""

from __future__ import annotations

import csv
import io
import re
from datetime import timedelta
from decimal import Decimal

from tortoise.transactions import in_transaction

from adnet.campaigns.models import ConversionGoal
from adnet.conversions.models import Conversion
from adnet.core.amounts import Token
from adnet.core.ids import new_id
from adnet.money import ledger
from portal.zones import ZONE_COOKIE
from tests.factories import EPOCH, G, make_advertiser, make_campaign, make_publisher, make_site


async def converted_at_two_hours(wallet: str, clock, site_id: str | None = None):
    """A campaign of ``wallet``'s advertiser with a paid conversion at 01:20 and another at 13:05 UTC today (for
    clicks on ``site_id`` when given)."""
    campaign = await make_campaign(await make_advertiser(wallet), name="Night and day")
    goal = await ConversionGoal.create(id=new_id("goal"), campaign=campaign, name="Buy", event="buy", cpa=G,
                                       created_at=EPOCH, updated_at=EPOCH)
    for order, minutes in (("a", 80), ("b", 13 * 60 + 5)):
        moment = clock.now().replace(hour=0, minute=0) + timedelta(minutes=minutes)
        await Conversion.create(id=new_id("cv"), campaign_id=campaign.id, goal=goal, order_id=order, site_id=site_id,
                                value=Decimal(2 * G), occurred_at=moment, received_at=moment, attributed=True,
                                paid=True, cost=Decimal(G), publisher_amount=Decimal(G * 7 // 10))
    return campaign


def conversion_rows(html: str) -> list[tuple[str, str]]:
    """(row header, conversions) of the conversions table's rows that have any."""
    body = re.search(r'<table class="report" id="conversion-days">.*?<tbody>(.*?)</tbody>', html, re.S).group(1)
    return [(header, count) for header, count in re.findall(r'<th scope="row">(.*?)</th>\s*<td>(\d+)</td>', body)
            if count != "0"]


async def test_the_hourly_toggle_writes_hours_in_the_viewers_zone(publisher, clock):
    campaign = await converted_at_two_hours(publisher.wallet, clock)
    path = f"/portal/advertise/campaigns/{campaign.id}/report"
    daily = await (await publisher.get(path)).get_data(as_text=True)
    assert 'id="per-day" href' in daily and 'aria-current="page">Per day' in daily
    today = clock.today().isoformat()
    assert conversion_rows(daily) == [(today, "2")]
    reach = (clock.today() - timedelta(days=13)).isoformat()  # the toggle keeps the range, within 14 days
    assert f'href="{path}?from={reach}&amp;to={today}&amp;granularity=hour">Per hour' in daily

    response = await publisher.get(path, query_string={"from": today, "granularity": "hour", "tz": "Asia/Kolkata"})
    assert response.status_code == 200
    assert f"{ZONE_COOKIE}=Asia/Kolkata" in response.headers["Set-Cookie"]
    html = await response.get_data(as_text=True)
    assert '<strong id="report-zone">Asia/Kolkata</strong>' in html and "Hour (Asia/Kolkata)" in html
    assert conversion_rows(html) == [  # newest first
        ('<time datetime="2026-01-01T13:00:00Z">2026-01-01 18:30 (UTC+05:30)</time>', "1"),
        ('<time datetime="2026-01-01T01:00:00Z">2026-01-01 06:30 (UTC+05:30)</time>', "1"),
    ]
    assert '<option selected>Asia/Kolkata</option>' in html
    assert 'aria-current="page">Per hour' in html

    remembered = await (await publisher.get(path, query_string={"granularity": "hour"})).get_data(as_text=True)
    assert '<strong id="report-zone">Asia/Kolkata</strong>' in remembered  # the cookie's zone
    not_a_zone = await publisher.get(path, query_string={"granularity": "hour", "tz": "Mars/Olympus"})
    assert '<strong id="report-zone">Asia/Kolkata</strong>' in await not_a_zone.get_data(as_text=True)


async def test_hours_default_to_utc_and_the_csv_keeps_utc(publisher, clock):
    campaign = await converted_at_two_hours(publisher.wallet, clock)
    path = f"/portal/advertise/campaigns/{campaign.id}/report"
    html = await (await publisher.get(path, query_string={"granularity": "hour"})).get_data(as_text=True)
    assert '<strong id="report-zone">UTC</strong>' in html
    assert conversion_rows(html)[-1] == ('<time datetime="2026-01-01T01:00:00Z">2026-01-01 01:00 (UTC)</time>', "1")
    assert '&amp;granularity=hour" hx-boost="false" download>Download CSV' in html
    response = await publisher.get(f"{path}.csv", query_string={"granularity": "hour"})
    assert "-hourly.csv" in response.headers["Content-Disposition"]
    rows = list(csv.DictReader(io.StringIO(await response.get_data(as_text=True))))
    assert len(rows) == 25 and [row["hour"] for row in rows if row["conversions"] != "0"] == [
        "2026-01-01T01:00:00Z", "2026-01-01T13:00:00Z", "total"]


async def test_hours_older_than_fourteen_days_are_refused_beside_the_form(publisher, clock):
    campaign = await converted_at_two_hours(publisher.wallet, clock)
    response = await publisher.get(f"/portal/advertise/campaigns/{campaign.id}/report",
                                   query_string={"granularity": "hour", "from": "2025-12-18"})
    assert response.status_code == 400
    html = await response.get_data(as_text=True)
    assert 'id="report-error"' in html and "2025-12-19" in html  # the first day hours reach
    assert 'aria-current="page">Per day' in html  # the last 30 days per day, meanwhile


async def test_a_sites_traffic_toggles_to_hours_in_the_viewers_zone(publisher, clock):
    site = await make_site(await make_publisher(publisher.wallet), domain="hours.example")
    await converted_at_two_hours(publisher.wallet, clock, site.id)
    path = f"/portal/sites/{site.id}/traffic"
    daily = await (await publisher.get(path)).get_data(as_text=True)
    assert "Traffic quality, last 30 days" in daily and f'href="{path}?granularity=hour">Per hour' in daily
    html = await (await publisher.get(path, query_string={"granularity": "hour", "tz": "America/New_York"})
                  ).get_data(as_text=True)
    assert "Traffic quality, last 14 days per hour" in html
    assert '<strong id="traffic-zone">America/New_York</strong>' in html and "Hour (America/New_York)" in html
    assert '<th scope="row"><time datetime="2026-01-01T13:00:00Z">2026-01-01 08:00 (UTC-05:00)</time></th>' in html
    assert '<th scope="row"><time datetime="2026-01-01T01:00:00Z">2025-12-31 20:00 (UTC-05:00)</time></th>' in html
    assert f"/portal/sites/{site.id}/traffic.csv?granularity=hour" in html
    response = await publisher.get(f"/portal/sites/{site.id}/traffic.csv", query_string={"granularity": "hour"})
    rows = list(csv.DictReader(io.StringIO(await response.get_data(as_text=True))))
    assert len(rows) == 14 * 24 + 1
    assert [row["hour"] for row in rows if row["conversions"] != "0"] == [
        "2026-01-01T01:00:00Z", "2026-01-01T13:00:00Z", "total"]


async def test_a_breakdown_by_hour_is_written_in_the_viewers_zone(publisher, clock):
    site = await make_site(await make_publisher(publisher.wallet), domain="rows.example")
    await converted_at_two_hours(publisher.wallet, clock, site.id)
    path = f"/portal/sites/{site.id}/breakdown"
    daily = await (await publisher.get(path)).get_data(as_text=True)
    assert '<option value="hour">Hour</option>' in daily and 'id="breakdown-tz"' not in daily
    html = await (await publisher.get(path, query_string={"by": "hour", "tz": "Europe/Berlin"})).get_data(as_text=True)
    assert '<strong id="breakdown-zone">Europe/Berlin</strong>' in html and "Hour (Europe/Berlin)</th>" in html
    assert ('<th scope="row"><time datetime="2026-01-01T01:00:00Z">2026-01-01 02:00 (UTC+01:00)</time></th>'
            in html)
    refused = await publisher.get(path, query_string={"by": "hour", "from": "2025-12-01"})
    assert refused.status_code == 400 and "hourly figures reach back 14 days" in await refused.get_data(as_text=True)


async def test_the_earnings_chart_toggles_to_hours_in_the_viewers_zone(publisher, clock):
    site = await make_site(await make_publisher(publisher.wallet), domain="charted.example")
    for minutes, amount in ((80, G), (13 * 60 + 5, 3 * G)):
        async with in_transaction():
            await ledger.book("ad_billing", new_id("ltx"), [(ledger.external(Token.GS), -amount),
                                                            (ledger.site(site.id), amount)],
                              now=clock.now() + timedelta(minutes=minutes))
    clock.advance(hours=14)
    daily = await (await publisher.get("/portal")).get_data(as_text=True)
    assert 'aria-label="2026-01-01: 4 G$"' in daily and 'href="/portal?from=' in daily
    html = await (await publisher.get("/portal", query_string={"granularity": "hour", "tz": "Asia/Tokyo"})
                  ).get_data(as_text=True)
    assert '<strong id="earnings-zone">Asia/Tokyo</strong>' in html and "(hours in Asia/Tokyo)" in html
    assert 'aria-label="2026-01-01 10:00: 1 G$"' in html and 'aria-label="2026-01-01 22:00: 3 G$"' in html
    assert "total 4 G$" in html  # the hours add up to the day
    assert html.count('class="chart-day"') == 24
