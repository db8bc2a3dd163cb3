"""On-chain goals through HTTP: a goal of kind ``onchain`` names its contract, topic0 and where its event holds the
wallet (and the amount), validated when written and reviewed with the campaign; the advertiser's server cannot
report its conversions (they come from the chain)."""

from adnet.campaigns.models import CampaignStatus
from tests.adnet.campaigns.test_goal_events import TOKEN, TRANSFER
from tests.api.test_conversions import account
from tests.api.test_serve import app_context  # noqa: F401 - autouse: the app as the current app
from tests.auth_helpers import bearer
from tests.factories import make_campaign

ONCHAIN = {"name": "Swap", "event": "swap", "kind": "onchain", "contract": TOKEN.upper().replace("0X", "0x"),
           "topic0": TRANSFER.upper().replace("0X", "0x"), "walletField": "topic1", "amountField": "data0",
           "minAmount": "1000000000000000000000", "cpa": "4"}


async def test_an_onchain_goal_is_validated_written_and_locked_by_review(client):
    advertiser, session, key = await account(client)
    campaign = await make_campaign(advertiser, status=CampaignStatus.DRAFT)
    path = f"/api/advertisers/campaigns/{campaign.id}/goals"
    response = await client.post(path, json=ONCHAIN, headers=bearer(session))
    goal = await response.get_json()
    assert response.status_code == 201, goal
    assert (goal["kind"], goal["contract"], goal["topic0"], goal["walletField"], goal["amountField"],
            goal["minAmount"]) == ("onchain", TOKEN, TRANSFER, "topic1", "data0", "1000000000000000000000")

    for broken, field in [({"contract": None}, "contract"), ({"topic0": "0x1234"}, "topic0"),
                          ({"walletField": "topic4"}, "walletField"), ({"walletField": None}, "walletField"),
                          ({"amountField": "tx.from"}, "amountField"), ({"amountField": None}, "minAmount"),
                          ({"minAmount": "-1"}, "minAmount"), ({"minAmount": str(2**256)}, "minAmount")]:
        body = {key: value for key, value in {**ONCHAIN, "event": "other", **broken}.items() if value is not None}
        refused = await client.post(path, json=body, headers=bearer(session))
        assert (refused.status_code, (await refused.get_json())["field"]) == (400, field), broken
    offchain = await client.post(path, json={"name": "Sign-up", "event": "signup", "topic0": TRANSFER},
                                 headers=bearer(session))
    assert ((await offchain.get_json())["error"], (await offchain.get_json())["field"]) == ("invalid_goal", "topic0")

    edited = await client.patch(f"/api/advertisers/goals/{goal['goalId']}", json={"walletField": "tx.from",
                                                                                 "minAmount": None,
                                                                                 "amountField": None},
                                headers=bearer(session))
    assert ((await edited.get_json())["walletField"], (await edited.get_json())["minAmount"]) == ("tx.from", None)
    unpaired = await client.patch(f"/api/advertisers/goals/{goal['goalId']}", json={"minAmount": "5"},
                                  headers=bearer(session))
    assert (unpaired.status_code, (await unpaired.get_json())["field"]) == (400, "minAmount")

    await type(campaign).filter(id=campaign.id).update(status=CampaignStatus.APPROVED)
    locked = await client.patch(f"/api/advertisers/goals/{goal['goalId']}", json={"topic0": "0x" + "00" * 32},
                                headers=bearer(session))
    assert (locked.status_code, (await locked.get_json())["error"]) == (409, "campaign_locked")
    reported = await client.post("/api/conversions", json={"clickId": "x.y", "goalId": goal["goalId"],
                                                           "orderId": "o-1"}, headers=bearer(key))
    assert (reported.status_code, (await reported.get_json())["error"]) == (409, "goal_onchain")
