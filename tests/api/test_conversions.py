"""Conversions through HTTP: goals under the advertiser's campaign, the click id a recorded click hands the
landing page, ``POST /api/conversions`` with every reason, exactly-once recording and paying (also under 40
concurrent posts of one order), the ledger and its audit, reports, CSV and the webhook."""

import asyncio
import random
from datetime import timedelta
from decimal import Decimal
from urllib.parse import parse_qs, urlsplit

from eth_account import Account
from quart import current_app

from adnet.accounts.commands import ApiKeyScope
from adnet.campaigns.models import CampaignStatus, ConversionGoal
from adnet.conversions.models import Conversion
from adnet.core.ids import new_id
from adnet.delivery.models import TrackingEvent
from adnet.money import ledger
from adnet.money.audit import audit
from adnet.money.models import LedgerTransaction
from adnet.webhooks.endpoints import NewWebhookEndpoint, add_endpoint
from adnet.webhooks.models import WebhookEvent, WebhookEventType
from tests.api.test_api_keys import issue
from tests.api.test_serve import app_context  # noqa: F401 - autouse: the app as the current app
from tests.api.test_track import CPC, CPM, event_body, post, served_and_seen
from tests.auth_helpers import bearer, sign_in
from tests.conftest import rebuild_index
from tests.factories import EPOCH, G, make_advertiser, make_campaign, make_creative, make_site

CPA = 5 * G
LANDING = "https://shop.example/welcome?from={siteId}#top"


async def account(client):
    """A signed-in advertiser: (advertiser, session token, a key scoped conversions:write)."""
    wallet = Account.create()
    session = await sign_in(client, wallet)
    advertiser = await make_advertiser(wallet.address.lower())
    key = (await issue(client, session, ApiKeyScope.CONVERSIONS.value))["token"]
    return advertiser, session, key


async def clicked(client, clock, advertiser, *, cpa: int = CPA, impression: bool = True, **campaign_fields):
    """A campaign of ``advertiser`` with a goal, served on a site of its own, seen and clicked: (site, campaign,
    goal, the click's answer)."""
    site = await make_site()
    campaign = await make_campaign(advertiser, cpm=CPM, cpc=CPC, site_allow=[site.id], **campaign_fields)
    await make_creative(campaign, target_url=LANDING)
    goal = await ConversionGoal.create(id=new_id("goal"), campaign=campaign, name="Purchase", event="purchase",
                                       cpa=Decimal(cpa), created_at=EPOCH, updated_at=EPOCH)
    await rebuild_index(current_app)
    ad = await served_and_seen(client, clock, site)
    if impression:
        await post(client, event_body(ad, site))
    response, body = await post(client, event_body(ad, site, type="CLICK"))
    assert response.status_code == 201, body
    return site, campaign, goal, body


def click_id_of(answer: dict, param: str = "adnet_click") -> str:
    return parse_qs(urlsplit(answer["clickUrl"]).query)[param][0]


async def report(client, key: str, click_id: str, goal, order: str = "order-1", **fields):
    response = await client.post("/api/conversions", json={"clickId": click_id, "goalId": goal.id, "orderId": order,
                                                           **fields}, headers=bearer(key))
    return response.status_code, await response.get_json()


async def test_a_recorded_click_hands_the_landing_page_its_click_id_and_replaces_the_macros(client, clock):
    advertiser, _, _ = await account(client)
    site, _, _, answer = await clicked(client, clock, advertiser, click_param="ref")
    url = urlsplit(answer["clickUrl"])
    assert (url.scheme, url.netloc, url.path, url.fragment) == ("https", "shop.example", "/welcome", "top")
    query = parse_qs(url.query)
    assert query["from"] == [site.id] and len(query["ref"][0]) > 40
    assert (await TrackingEvent.filter(type="CLICK").count()) == 1


async def test_a_paid_conversion_moves_the_cpa_once_in_one_balanced_transaction(client, clock, settings):
    advertiser, _, key = await account(client)
    site, campaign, goal, answer = await clicked(client, clock, advertiser)
    await add_endpoint(advertiser.wallet, NewWebhookEndpoint(url="https://hooks.example/in",
                                                             events=[WebhookEventType.CONVERSION_RECORDED]),
                       EPOCH, random.Random(1), production=False)
    before = await ledger.balances_of([ledger.campaign(campaign.id), ledger.site(site.id), ledger.platform()])
    clock.advance(hours=2)
    status, body = await report(client, key, click_id_of(answer), goal, value="120")
    assert status == 201, body
    assert (body["attributed"], body["paid"], body["reason"], body["cost"], body["siteId"]) == (
        True, True, None, "5", site.id)
    share = CPA * settings.publisher_share_bps // 10_000
    after = await ledger.balances_of(before)
    assert after[ledger.campaign(campaign.id)] == before[ledger.campaign(campaign.id)] - CPA
    assert after[ledger.site(site.id)] == before[ledger.site(site.id)] + share
    assert after[ledger.platform()] == before[ledger.platform()] + CPA - share
    assert await LedgerTransaction.filter(kind="conversion_billing", reference=body["conversionId"]).count() == 1
    assert (await audit(None)).problems == []
    events = await WebhookEvent.filter(type=WebhookEventType.CONVERSION_RECORDED).values_list("payload", flat=True)
    assert [(event["conversionId"], event["paid"], event["cost"]) for event in events] == [
        (body["conversionId"], True, "5")]

    again_status, again = await report(client, key, click_id_of(answer), goal)
    assert (again_status, again) == (200, body)
    assert await LedgerTransaction.filter(kind="conversion_billing").count() == 1


async def test_forty_concurrent_posts_of_one_order_record_and_pay_one_conversion(client, clock):
    advertiser, _, key = await account(client)
    _, campaign, goal, answer = await clicked(client, clock, advertiser)
    before = await ledger.balance(ledger.campaign(campaign.id))
    answers = await asyncio.gather(*(report(client, key, click_id_of(answer), goal, order="order-40")
                                     for _ in range(40)))
    assert sorted(status for status, _ in answers).count(201) == 1
    assert {status for status, _ in answers} == {200, 201}
    assert len({body["conversionId"] for _, body in answers}) == 1
    assert await Conversion.filter(order_id="order-40").count() == 1
    assert await ledger.balance(ledger.campaign(campaign.id)) == before - CPA
    assert (await audit(None)).problems == []


async def test_each_reason_is_recorded_and_never_paid(client, clock):
    advertiser, _, key = await account(client)
    site, campaign, goal, answer = await clicked(client, clock, advertiser)
    click_id = click_id_of(answer)

    async def refused(reason: str, order: str, click: str = click_id, **fields) -> None:
        status, body = await report(client, key, click, goal, order=order, **fields)
        assert (status, body["paid"], body["reason"]) == (201, False, reason), body
        assert not await LedgerTransaction.filter(kind="conversion_billing", reference=body["conversionId"]).exists()

    await refused("click_invalid", "o-forged", click_id[:-3] + ("AAA" if not click_id.endswith("AAA") else "BBB"))
    await refused("before_click", "o-early", occurredAt=(clock.now() - timedelta(hours=1)).isoformat())
    wallet = Account.create().address
    status, first = await report(client, key, click_id, goal, order="o-wallet-1", wallet=wallet)
    assert (status, first["paid"]) == (201, True)
    await refused("wallet_cap_reached", "o-wallet-2", wallet=wallet)
    await ConversionGoal.filter(id=goal.id).update(cpa=Decimal(10**30))
    status, unpaid = await report(client, key, click_id, goal, order="o-poor")
    assert (status, unpaid["attributed"], unpaid["paid"], unpaid["reason"]) == (201, True, False, "budget_exhausted")
    await ConversionGoal.filter(id=goal.id).update(cpa=Decimal(CPA))

    other_site = await make_site()
    await type(campaign).filter(id=campaign.id).update(site_allow=[other_site.id])
    await refused("site_excluded", "o-excluded")
    await type(campaign).filter(id=campaign.id).update(site_allow=[site.id])

    clock.advance(days=7, seconds=1)
    await refused("outside_window", "o-late")

    _, _, filtered_goal, filtered = await clicked(client, clock, advertiser, impression=False)
    status, body = await report(client, key, click_id_of(filtered), filtered_goal, order="o-filtered")
    assert (status, body["reason"], body["paid"]) == (201, "click_filtered", False)


async def test_daily_cap_stops_paying_conversions_and_counts_with_tracking(client, clock):
    advertiser, _, key = await account(client)
    # The click and impression cost CPM/1000 + CPC today; one CPA still fits, a second does not.
    _, _, goal, answer = await clicked(client, clock, advertiser, daily_cap=CPM // 1000 + CPC + CPA)
    assert (await report(client, key, click_id_of(answer), goal, order="a"))[1]["paid"]
    status, body = await report(client, key, click_id_of(answer), goal, order="b")
    assert (status, body["attributed"], body["paid"], body["reason"]) == (201, True, False, "daily_cap_reached")


async def test_a_click_id_of_another_campaign_does_not_attribute(client, clock):
    advertiser, _, key = await account(client)
    _, _, goal, _ = await clicked(client, clock, advertiser)
    _, _, _, other = await clicked(client, clock, advertiser)
    status, body = await report(client, key, click_id_of(other), goal)
    assert (status, body["reason"], body["siteId"]) == (201, "click_invalid", None)


async def test_conversions_need_the_scope_the_goals_owner_and_an_approved_campaign(client, clock):
    advertiser, session, key = await account(client)
    _, campaign, goal, answer = await clicked(client, clock, advertiser)
    manager = (await issue(client, session, ApiKeyScope.CAMPAIGNS.value))["token"]
    status, body = await report(client, manager, click_id_of(answer), goal)
    assert (status, body["error"], body["scope"]) == (403, "scope_denied", "conversions:write")
    _, _, stranger = await account(client)
    status, body = await report(client, stranger, click_id_of(answer), goal)
    assert (status, body["error"]) == (403, "not_owner")
    status, body = await report(client, key, click_id_of(answer), goal, occurredAt="2099-01-01T00:00:00Z")
    assert (status, body["error"], body["field"]) == (400, "invalid_field", "occurredAt")
    await type(campaign).filter(id=campaign.id).update(status=CampaignStatus.DRAFT)
    status, body = await report(client, key, click_id_of(answer), goal)
    assert (status, body["error"]) == (409, "goal_not_reviewed")
    assert await Conversion.all().count() == 0


async def test_goals_are_reviewed_with_their_campaign(client):
    advertiser, session, _ = await account(client)
    campaign = await make_campaign(advertiser, status=CampaignStatus.DRAFT)
    path = f"/api/advertisers/campaigns/{campaign.id}/goals"
    response = await client.post(path, json={"name": "Sign-up", "event": "signup", "cpa": "2.5"},
                                 headers=bearer(session))
    goal = await response.get_json()
    assert response.status_code == 201, goal
    assert (goal["clickWindowDays"], goal["walletCap"], goal["cpa"], goal["public"], goal["kind"]) == (
        7, 1, "2.5", False, "offchain")
    same = await client.post(path, json={"name": "Again", "event": "signup"}, headers=bearer(session))
    assert (same.status_code, (await same.get_json())["error"]) == (409, "goal_exists")
    too_long = await client.post(path, json={"name": "Long", "event": "x", "clickWindowDays": 31},
                                 headers=bearer(session))
    assert (too_long.status_code, (await too_long.get_json())["field"]) == (400, "clickWindowDays")
    detail = await (await client.get(f"/api/advertisers/campaigns/{campaign.id}", headers=bearer(session))).get_json()
    assert [item["goalId"] for item in detail["goals"]] == [goal["goalId"]]

    await type(campaign).filter(id=campaign.id).update(status=CampaignStatus.APPROVED)
    locked = await client.post(path, json={"name": "Late", "event": "late"}, headers=bearer(session))
    assert (locked.status_code, (await locked.get_json())["error"]) == (409, "campaign_locked")
    content = await client.patch(f"/api/advertisers/goals/{goal['goalId']}", json={"public": True},
                                 headers=bearer(session))
    assert (content.status_code, (await content.get_json())["error"]) == (409, "campaign_locked")
    terms = await client.patch(f"/api/advertisers/goals/{goal['goalId']}", json={"cpa": "3", "clickWindowDays": 30},
                               headers=bearer(session))
    assert ((await terms.get_json())["cpa"], (await terms.get_json())["clickWindowDays"]) == ("3", 30)
    gone = await client.delete(f"/api/advertisers/goals/{goal['goalId']}", headers=bearer(session))
    assert gone.status_code == 409
    listed = await (await client.get(path, headers=bearer(session))).get_json()
    assert [item["goalId"] for item in listed["goals"]] == [goal["goalId"]]


async def test_reports_show_conversions_and_cost_per_conversion_and_the_sites_earnings(client, clock, settings):
    advertiser, session, key = await account(client)
    site, campaign, goal, answer = await clicked(client, clock, advertiser)
    await report(client, key, click_id_of(answer), goal, order="paid")
    await report(client, key, "not-a-click-id", goal, order="forged")
    day = clock.now().date().isoformat()
    query = {"from": day, "to": day}
    campaign_report = await (await client.get(f"/api/advertisers/campaigns/{campaign.id}/report",
                                              query_string=query, headers=bearer(session))).get_json()
    totals = campaign_report["totals"]
    spend = CPM // 1000 + CPC + CPA
    assert (totals["conversions"], totals["conversionSpend"], totals["spend"]) == (1, "5", str(Decimal(spend) / G))
    assert totals["costPerConversion"] == totals["spend"]
    assert campaign_report["conversionRefusals"] == {"click_invalid": 1}
    csv = await (await client.get(f"/api/advertisers/campaigns/{campaign.id}/report.csv", query_string=query,
                                  headers=bearer(session))).get_data(as_text=True)
    header, first = csv.splitlines()[:2]
    row = dict(zip(header.split(","), first.split(","), strict=True))
    assert (row["conversions"], row["conversion_spend"], row["unconverted:click_invalid"]) == ("1", "5", "1")

    owner = await sign_in(client, await _publisher_account(site))
    traffic = await (await client.get(f"/api/publishers/sites/{site.id}/traffic", query_string=query,
                                      headers=bearer(owner))).get_json()
    share = CPA * settings.publisher_share_bps // 10_000
    assert (traffic["totals"]["conversions"], traffic["totals"]["conversionEarned"]) == (1, str(Decimal(share) / G))


async def _publisher_account(site):
    """The account that owns ``site``: a fresh one made its publisher."""
    wallet = Account.create()
    publisher = await site.publisher
    publisher.wallet = wallet.address.lower()
    await publisher.save(update_fields=["wallet"])
    return wallet
