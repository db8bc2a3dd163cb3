"""The conversion pixel through HTTP: a page of another origin reports a conversion of a goal marked ``public``
with no key, as an image (GET, a 1x1 GIF) or a beacon (POST, JSON sent as text/plain as ``navigator.sendBeacon``
sends it); the same rules, order ids and payment as the API key's route, also under 40 concurrent beacons of one
order; a goal not marked public is refused (JSON for the beacon, the code in a header for the image) and nothing
changes."""

import asyncio
import json
from urllib.parse import urlencode

from adnet.campaigns.models import ConversionGoal
from adnet.conversions.models import Conversion
from adnet.money import ledger
from adnet.money.audit import audit
from adnet.money.models import LedgerTransaction
from tests.api.test_conversions import CPA, account, click_id_of, clicked
from tests.api.test_serve import app_context  # noqa: F401 - autouse: the app as the current app
from tests.auth_helpers import tampered

LANDING = {"Origin": "https://shop.example", "User-Agent": "Mozilla/5.0 (X11; Linux x86_64) Chrome/120"}
GIF = b"GIF89a"


async def public_click(client, clock, *, public: bool = True):
    """A clicked campaign whose goal is marked public (or not): (site, campaign, goal, the click id)."""
    advertiser, _, _ = await account(client)
    site, campaign, goal, answer = await clicked(client, clock, advertiser)
    await ConversionGoal.filter(id=goal.id).update(public=public)
    clock.advance(minutes=30)
    return site, campaign, goal, click_id_of(answer)


async def image(client, **query: str):
    return await client.get(f"/api/conversions/pixel?{urlencode(query)}", headers=LANDING)


async def beacon(client, body: dict):
    """What ``navigator.sendBeacon(url, JSON.stringify(body))`` sends: JSON as text/plain, from the landing page."""
    response = await client.post("/api/conversions/pixel", data=json.dumps(body),
                                 headers={**LANDING, "Content-Type": "text/plain;charset=UTF-8"})
    return response, await response.get_json()


async def test_the_image_records_and_pays_a_public_goals_conversion_once(client, clock, settings):
    site, campaign, goal, click_id = await public_click(client, clock)
    before = await ledger.balances_of([ledger.campaign(campaign.id), ledger.site(site.id)])
    response = await image(client, clickId=click_id, goalId=goal.id, orderId="order-img", value="30")
    assert response.status_code == 200
    assert response.headers["Content-Type"] == "image/gif"
    assert (await response.get_data()).startswith(GIF)
    assert "X-Adnet-Error" not in response.headers
    assert response.headers["Access-Control-Allow-Origin"] == "*"
    assert response.headers["Cache-Control"] == "no-store"
    conversion = await Conversion.get(order_id="order-img")
    assert (conversion.attributed, conversion.paid, conversion.reason, int(conversion.cost), conversion.site_id,
            conversion.wallet, int(conversion.value)) == (True, True, None, CPA, site.id, None, 30 * 10**18)
    share = CPA * settings.publisher_share_bps // 10_000
    after = await ledger.balances_of(before)
    assert after[ledger.campaign(campaign.id)] == before[ledger.campaign(campaign.id)] - CPA
    assert after[ledger.site(site.id)] == before[ledger.site(site.id)] + share

    again = await image(client, clickId=click_id, goalId=goal.id, orderId="order-img")
    assert again.status_code == 200 and "X-Adnet-Error" not in again.headers
    assert await Conversion.all().count() == 1
    assert await LedgerTransaction.filter(kind="conversion_billing").count() == 1
    assert (await audit(None)).problems == []


async def test_forty_concurrent_beacons_of_one_order_record_and_pay_one(client, clock):
    _, campaign, goal, click_id = await public_click(client, clock)
    before = await ledger.balance(ledger.campaign(campaign.id))
    answers = await asyncio.gather(*(beacon(client, {"clickId": click_id, "goalId": goal.id, "orderId": "o-40"})
                                     for _ in range(40)))
    assert sorted((response.status_code, body["status"]) for response, body in answers) == [
        (200, "duplicate")] * 39 + [(201, "recorded")]
    assert set(answers[0][1]) == {"status"}  # the page never learns whether it was attributed or paid
    assert answers[0][0].headers["Access-Control-Allow-Origin"] == "*"
    assert await Conversion.filter(order_id="o-40").count() == 1
    assert await ledger.balance(ledger.campaign(campaign.id)) == before - CPA
    assert (await audit(None)).problems == []


async def test_the_rules_apply_as_to_the_api_keys_route(client, clock):
    _, _, goal, click_id = await public_click(client, clock)
    response, body = await beacon(client, {"clickId": tampered(click_id), "goalId": goal.id, "orderId": "o-forged"})
    assert (response.status_code, body) == (201, {"status": "recorded"})
    conversion = await Conversion.get(order_id="o-forged")
    assert (conversion.attributed, conversion.paid, conversion.reason) == (False, False, "click_invalid")


async def test_a_goal_not_marked_public_is_refused_and_nothing_changes(client, clock):
    _, campaign, goal, click_id = await public_click(client, clock, public=False)
    before = await ledger.balance(ledger.campaign(campaign.id))
    response, body = await beacon(client, {"clickId": click_id, "goalId": goal.id, "orderId": "o-1"})
    assert (response.status_code, body["error"]) == (403, "goal_not_public")
    assert body["message"]
    assert response.headers["Access-Control-Allow-Origin"] == "*"
    refused = await image(client, clickId=click_id, goalId=goal.id, orderId="o-1")
    assert (refused.status_code, refused.headers["X-Adnet-Error"], refused.headers["Content-Type"]) == (
        200, "goal_not_public", "image/gif")
    assert (await refused.get_data()).startswith(GIF)
    assert not await Conversion.exists()
    assert await ledger.balance(ledger.campaign(campaign.id)) == before


async def test_bad_input_is_refused_with_its_code_in_either_form(client, clock):
    _, _, goal, click_id = await public_click(client, clock)
    response, body = await beacon(client, {"clickId": click_id, "goalId": goal.id})
    assert (response.status_code, body["error"], body["field"]) == (400, "missing_field", "orderId")
    missing = await image(client, clickId=click_id, goalId=goal.id)
    assert missing.headers["X-Adnet-Error"] == "missing_field"
    unknown = await image(client, clickId=click_id, goalId="goal_" + "0" * 26, orderId="o-2")
    assert unknown.headers["X-Adnet-Error"] == "not_found"
    assert not await Conversion.exists()

    response, body = await beacon(client, {"clickId": click_id, "goalId": goal.id, "orderId": "o-3",
                                           "wallet": "0x" + "ab" * 20})
    assert (response.status_code, body) == (201, {"status": "recorded"})
    assert (await Conversion.get(order_id="o-3")).wallet is None  # a wallet a page names proves nothing
