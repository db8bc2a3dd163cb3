"""Reach and frequency through HTTP: impressions served with the embed's viewer id and tracked through
``/api/track``; once the reach job has run, the campaign's reach, average frequency and distribution, per day (and
per UTC hour), creative and site, equal what the viewers were shown, the CSV says the same, no viewer id is
stored, and only the advertiser reads them."""

from __future__ import annotations

import csv
import io
from datetime import timedelta

from eth_account import Account

from adnet.delivery.models import ReachViewerDaily
from adnet.delivery.reach import REACH_LEASE, SETTLE
from tests.api.test_serve import app_context  # noqa: F401 - autouse: the app as the current app
from tests.api.test_track import billed, event_body, post, serve_ad
from tests.auth_helpers import bearer, sign_in
from tests.conftest import rebuild_index
from tests.factories import make_advertiser, make_campaign, make_creative, make_site

# viewer id (None: Do-Not-Track) and how many impressions it is billed on each of two days.
VIEWS = {"viewer-a": (3, 1), "viewer-b": (1, 0), "viewer-c": (0, 2), None: (2, 0)}


async def _show(client, clock, site, campaign, viewer: str | None, number: int) -> None:
    ad = await serve_ad(client, site, **({"viewer": viewer} if viewer else {}))
    assert ad["campaignId"] == campaign.id
    clock.advance(seconds=2)
    assert await billed((await post(client, event_body(ad, site, fingerprint=f"fp-{viewer}-{number}")))[1])


async def test_reach_and_frequency_count_each_viewer_once(client, clock, services):
    account = Account.create()
    advertiser = await make_advertiser(account.address.lower())
    site = await make_site()
    campaign = await make_campaign(advertiser, site_allow=[site.id])
    creative = await make_creative(campaign)
    await rebuild_index(client.app)
    first_day = clock.now().date()
    for day in range(2):
        for viewer, shown in VIEWS.items():
            for number in range(shown[day]):
                await _show(client, clock, site, campaign, viewer, day * 10 + number)
        if day == 0:
            clock.advance(days=1)
    token = await sign_in(client, account)
    path = f"/api/advertisers/campaigns/{campaign.id}/reach"
    query = {"from": first_day.isoformat(), "to": clock.now().date().isoformat()}
    before_the_job = await (await client.get(path, query_string=query, headers=bearer(token))).get_json()
    assert before_the_job["reach"] == 0  # tracking itself writes nothing for reach
    clock.advance(seconds=SETTLE.total_seconds() + 1)
    assert await services.jobs.run(REACH_LEASE) == 7
    assert await services.jobs.run(REACH_LEASE) == 0  # run again: nothing counted twice

    response = await client.get(path, query_string=query, headers=bearer(token))
    body = await response.get_json()
    assert response.status_code == 200, body
    assert (body["reach"], body["impressions"], body["averageFrequency"]) == (3, 7, "2.33")
    assert body["distribution"] == {"1": 1, "2": 1, "3": 0, "4-5": 1, "6-10": 0, ">10": 0}
    assert [(row["reach"], row["impressions"]) for row in body["days"]] == [(2, 4), (2, 3)]
    assert [(row["key"], row["reach"]) for row in body["creatives"]] == [(creative.id, 3)]
    assert [(row["key"], row["reach"]) for row in body["sites"]] == [(site.id, 3)]

    one_day = await (await client.get(path, query_string={"from": first_day.isoformat(),
                                                           "to": first_day.isoformat()},
                                      headers=bearer(token))).get_json()
    assert (one_day["reach"], one_day["distribution"]["3"]) == (2, 1)

    # Per UTC hour (the last 14 days): each day's hours hold its impressions with a viewer, and no hour more viewers
    # than its day.
    for day, daily in zip((first_day, clock.now().date()), body["days"], strict=True):
        hourly = await (await client.get(path, query_string={"from": day.isoformat(), "to": day.isoformat(),
                                                             "granularity": "hour"}, headers=bearer(token))).get_json()
        assert hourly["granularity"] == "hour"
        assert all(row["key"].startswith(f"{day.isoformat()}T") and row["key"].endswith(":00:00Z")
                   for row in hourly["days"])
        assert sum(row["impressions"] for row in hourly["days"]) == daily["impressions"]
        assert max(row["reach"] for row in hourly["days"]) <= daily["reach"] <= sum(
            row["reach"] for row in hourly["days"])
        assert (hourly["reach"], hourly["impressions"]) == (daily["reach"], daily["impressions"])
    weeks_ago = (clock.now() - timedelta(days=20)).date().isoformat()
    too_old = await client.get(path, query_string={"from": weeks_ago, "to": query["to"], "granularity": "hour"},
                               headers=bearer(token))
    assert (too_old.status_code, (await too_old.get_json())["error"]) == (400, "hourly_too_old")
    hourly_csv = await client.get(f"{path}.csv", query_string={**query, "from": query["to"], "granularity": "hour"},
                                  headers=bearer(token))
    assert hourly_csv.status_code == 200 and "hourly" in hourly_csv.headers["Content-Disposition"]
    assert any(row[0] == "hour" for row in csv.reader(io.StringIO((await hourly_csv.get_data()).decode())))

    stored = await ReachViewerDaily.all().values_list("viewer_key", flat=True)
    assert not any(viewer in key for key in stored for viewer in VIEWS if viewer)

    exported = await client.get(f"{path}.csv", query_string=query, headers=bearer(token))
    assert exported.status_code == 200
    rows = list(csv.reader(io.StringIO((await exported.get_data()).decode())))
    assert ["total", f"{query['from']}..{query['to']}", "3", "7", "2.33"] in rows
    assert ["frequency", "4-5", "1", "", ""] in rows
    assert ["site", site.id, "3", "7", "2.33"] in rows

    stranger = await sign_in(client, Account.create())
    refused = await client.get(path, query_string=query, headers=bearer(stranger))
    assert refused.status_code in (403, 404)
    assert (await refused.get_json())["error"] in ("not_owner", "not_found")


async def test_a_range_too_long_is_refused(client, clock):
    account = Account.create()
    campaign = await make_campaign(await make_advertiser(account.address.lower()))
    token = await sign_in(client, account)
    response = await client.get(f"/api/advertisers/campaigns/{campaign.id}/reach",
                                query_string={"from": "2000-01-01"}, headers=bearer(token))
    assert response.status_code == 400
    assert (await response.get_json())["error"] == "invalid_date_range"
