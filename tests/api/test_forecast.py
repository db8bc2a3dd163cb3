"""POST /api/advertisers/forecast and the requests a day of POST /api/advertisers/audiences/reach through HTTP:
figures from the recorded request aggregates, rounded and thresholded, refusals as JSON, and no access without an
account."""

from datetime import timedelta

from adnet.delivery.models import RequestHour
from tests.api.test_advertisers import advertiser_api
from tests.factories import G, make_campaign, make_creative, make_site


async def recorded_requests(clock, site_id: str, per_hour: dict[tuple[str, str], int], hours: int = 48) -> None:
    """``hours`` recorded hours before now of the site, each with ``per_hour`` requests per (country, device)."""
    first = clock.now().replace(minute=0, second=0, microsecond=0) - timedelta(hours=hours)
    await RequestHour.bulk_create([
        RequestHour(site_id=site_id, hour=first + timedelta(hours=hour), size="300x250", country=country,
                    device=device, requests=requests)
        for hour in range(hours) for (country, device), requests in per_hour.items()])


async def test_forecast_counts_matching_requests_the_share_and_the_budget_days(client, clock, services):
    site = await make_site()
    await recorded_requests(clock, site.id, {("DE", "desktop"): 50, ("US", "mobile"): 25})
    rival = await make_campaign(cpm=2 * G, cpc=0)
    await make_creative(rival)
    await services.serving.rebuild()
    api = await advertiser_api(client)

    status, body = await api.call("POST", "/advertisers/forecast", cpm="2", cpc="0", budget="12",
                                  targeting={"geoInclude": ["DE"]})
    assert status == 200, body
    # 50 an hour over two days: 1200 a day; an equal rival: half of them; 600 impressions at 2 G$ CPM = 1.2 G$ a day.
    assert body == {"requestsPerDay": 1200, "winsPerDay": 600, "sharePercent": 50, "budgetDays": 10,
                    "daysRecorded": 2, "threshold": 100}
    status, body = await api.call("POST", "/advertisers/forecast", cpm="2", cpc="0", budget="12",
                                  campaignId=rival.id, siteDeny=[site.id])
    assert body["requestsPerDay"] is None and body["budgetDays"] is None  # nothing left: never told as a number

    status, body = await api.call("POST", "/advertisers/forecast", cpm="-1", cpc="0", budget="12")
    assert status == 400 and body["error"] == "invalid_amount" and "cpm" in body["message"]
    assert (await client.post("/api/advertisers/forecast", json={"cpm": "1", "cpc": "0", "budget": "1"})
            ).status_code == 401


async def test_reach_tells_the_requests_a_day_on_the_campaigns_sites(client, clock):
    site, other = await make_site(), await make_site()
    await recorded_requests(clock, site.id, {("DE", "desktop"): 12, ("US", "desktop"): 3})
    await recorded_requests(clock, other.id, {("DE", "desktop"): 100})
    api = await advertiser_api(client)
    status, body = await api.call("POST", "/advertisers/audiences/reach", siteAllow=[site.id])
    assert status == 200 and body["requestsPerDay"] == 300  # 360 a day, rounded down
    status, body = await api.call("POST", "/advertisers/audiences/reach", siteAllow=[site.id], geoInclude=["US"])
    assert body["requestsPerDay"] is None  # 72 a day: fewer than 100, never told as a number
