"""Conversions in reports through HTTP: a campaign with two goals (one priced, one not), clicked on a placement of
a site, with conversions reported with and without a value and one that does not attribute; the campaign's report,
the advertiser's breakdowns by goal, placement, site, day and campaign, and the site's breakdown show the
conversions, their rate, cost, value and ROAS, each equal to what the conversions say, and the CSV says what the
JSON says."""

from __future__ import annotations

import csv
import io
import random
from decimal import Decimal

from quart import current_app

from adnet.campaigns.models import ConversionGoal
from adnet.core.amounts import to_decimal_string
from adnet.core.ids import new_id
from adnet.reporting.outcomes import ratio_text
from adnet.webhooks.endpoints import NewWebhookEndpoint, add_endpoint
from adnet.webhooks.models import WebhookEvent, WebhookEventType
from tests.api.test_conversions import CPA, LANDING, _publisher_account, account, click_id_of, report
from tests.api.test_serve import app_context  # noqa: F401 - autouse: the app as the current app
from tests.api.test_track import CPC, CPM, event_body, post, served_and_seen
from tests.auth_helpers import bearer, sign_in
from tests.conftest import rebuild_index
from tests.factories import EPOCH, G, make_campaign, make_creative, make_site

VALUE = 20 * G


async def converted(client, clock):
    """A campaign with a priced and an unpriced goal, clicked once on placement ``top``, then a valued conversion
    of each goal's (the unpriced one without a value) and a forged one: (session, site, campaign, goals)."""
    advertiser, session, key = await account(client)
    await add_endpoint(advertiser.wallet, NewWebhookEndpoint(url="https://hooks.example/in",
                                                             events=[WebhookEventType.CONVERSION_RECORDED]),
                       EPOCH, random.Random(1), production=False)
    site = await make_site()
    campaign = await make_campaign(advertiser, name="Spring sale", cpm=CPM, cpc=CPC, site_allow=[site.id])
    await make_creative(campaign, target_url=LANDING)
    goals = [await ConversionGoal.create(id=new_id("goal"), campaign=campaign, name=name, event=event,
                                         cpa=Decimal(cpa), created_at=EPOCH, updated_at=EPOCH)
             for name, event, cpa in (("Purchase", "purchase", CPA), ("Sign-up", "signup", 0))]
    await rebuild_index(current_app)
    ad = await served_and_seen(client, clock, site, placement="top")
    await post(client, event_body(ad, site))
    response, answer = await post(client, event_body(ad, site, type="CLICK"))
    assert response.status_code == 201, answer
    click_id = click_id_of(answer)
    assert (await report(client, key, click_id, goals[0], order="paid", value=str(VALUE // G)))[0] == 201
    assert (await report(client, key, click_id, goals[1], order="free"))[0] == 201
    assert (await report(client, key, "forged", goals[0], order="forged", value="1000"))[0] == 201
    return session, site, campaign, goals


async def json_of(client, token: str, path: str, **query):
    response = await client.get(path, query_string=query, headers=bearer(token))
    assert response.status_code == 200, await response.get_data(as_text=True)
    return await response.get_json()


async def test_the_campaign_report_shows_conversion_rate_value_and_roas(client, clock):
    session, _, campaign, _ = await converted(client, clock)
    day = clock.now().date().isoformat()
    body = await json_of(client, session, f"/api/advertisers/campaigns/{campaign.id}/report", **{"from": day,
                                                                                                   "to": day})
    spend = CPM // 1000 + CPC + CPA
    totals = body["totals"]
    assert (totals["conversions"], totals["billableClicks"], totals["conversionRate"]) == (2, 1, "2.000000")
    assert (totals["spend"], totals["conversionValue"]) == (to_decimal_string(spend), "20")
    assert totals["roas"] == ratio_text(VALUE, spend) and Decimal(totals["roas"]) * spend <= VALUE
    assert totals["costPerConversion"] == to_decimal_string(spend // 2)
    assert body["days"][0]["roas"] == totals["roas"] and body["conversionRefusals"] == {"click_invalid": 1}
    earlier = await json_of(client, session, f"/api/advertisers/campaigns/{campaign.id}/report",
                            **{"from": "2025-12-31", "to": "2025-12-31"})
    assert (earlier["totals"]["roas"], earlier["totals"]["conversionRate"]) == (None, None)  # nothing spent, no click
    csv_text = await (await client.get(f"/api/advertisers/campaigns/{campaign.id}/report.csv",
                                       query_string={"from": day, "to": day}, headers=bearer(session))).get_data(
        as_text=True)
    rows = list(csv.DictReader(io.StringIO(csv_text)))
    assert [(row["conversion_rate"], row["conversion_value"], row["roas"]) for row in rows] == [
        ("2.000000", "20", totals["roas"])] * 2


async def test_the_webhook_carries_the_goal_value_and_site_reports_need(client, clock):
    _, site, campaign, goals = await converted(client, clock)
    events = await WebhookEvent.filter(type=WebhookEventType.CONVERSION_RECORDED).values_list("payload", flat=True)
    assert sorted((event["orderId"], event["campaignId"], event["goalId"], event["siteId"], event["attributed"],
                   event["cost"], event["value"]) for event in events) == [
        ("forged", campaign.id, goals[0].id, None, False, "0", "1000"),
        ("free", campaign.id, goals[1].id, site.id, True, "0", None),
        ("paid", campaign.id, goals[0].id, site.id, True, "5", "20")]


async def test_breakdowns_show_conversions_per_goal_placement_site_day_and_campaign(client, clock):
    session, site, campaign, goals = await converted(client, clock)
    path = "/api/advertisers/reports/breakdown"
    spend = CPM // 1000 + CPC + CPA
    by_goal = await json_of(client, session, path, by="goal")
    assert [(row["key"], row["label"], row["impressions"], row["clicks"], row["conversions"], row["amount"],
             row["value"], row["roas"], row["costPerConversion"]) for row in by_goal["rows"]] == [
        (goals[0].id, "Purchase", 0, 0, 1, "5", "20", "4.000000", "5"),
        (goals[1].id, "Sign-up", 0, 0, 1, "0", "0", None, "0")]
    assert (by_goal["total"]["conversions"], by_goal["total"]["amount"], by_goal["total"]["value"]) == (2, "5", "20")
    day = clock.now().date().isoformat()
    for by, key, label in (("placement", "top", None), ("site", site.domain, None), ("day", day, None),
                           ("campaign", campaign.id, "Spring sale")):
        body = await json_of(client, session, path, by=by)
        assert [(row["key"], row["label"], row["impressions"], row["clicks"], row["conversions"],
                 row["conversionRate"], row["amount"], row["value"], row["roas"]) for row in body["rows"]] == [
            (key, label, 1, 1, 2, "2.000000", to_decimal_string(spend), "20", ratio_text(VALUE, spend))], by
    lines = list(csv.reader(io.StringIO(await (await client.get(f"{path}.csv", query_string={"by": "goal"},
                                                                  headers=bearer(session))).get_data(as_text=True))))
    assert lines[0] == ["goal", "impressions", "clicks", "ctr", "spend", "conversions", "conversion_rate",
                        "cost_per_conversion", "conversion_value", "roas"]
    assert lines[1:] == [[goals[0].id, "0", "0", "0.000000", "5", "1", "", "5", "20", "4.000000"],
                         [goals[1].id, "0", "0", "0.000000", "0", "1", "", "0", "0", ""],
                         ["total", "0", "0", "0.000000", "5", "2", "", "2.5", "20", "4.000000"]]


async def test_a_sites_breakdown_shows_the_paid_conversions_and_no_value(client, clock, settings):
    _, site, _, _ = await converted(client, clock)
    owner = await sign_in(client, await _publisher_account(site))
    for by, key in (("placement", "top"), ("day", clock.now().date().isoformat())):
        body = await json_of(client, owner, f"/api/publishers/sites/{site.id}/breakdown", by=by)
        [row] = body["rows"]
        assert (row["key"], row["clicks"], row["conversions"], row["conversionRate"]) == (key, 1, 1, "1.000000")
        earned = sum(cost * settings.publisher_share_bps // 10_000 for cost in (CPM // 1000, CPC, CPA))
        assert row["amount"] == body["total"]["amount"] == to_decimal_string(earned)
        assert (row["value"], row["roas"], row["costPerConversion"]) == (None, None, None)
    for by in ("goal", "campaign", "site"):
        refused = await client.get(f"/api/publishers/sites/{site.id}/breakdown", query_string={"by": by},
                                   headers=bearer(owner))
        assert refused.status_code == 400 and (await refused.get_json())["field"] == "by"
