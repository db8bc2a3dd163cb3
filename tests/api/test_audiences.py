"""Wallet audiences through the HTTP API: rules written with a campaign's targeting, shown back and refused field
by field; the rewards sign-in's audience pass; a viewer's own audiences and its switch, behind the rewards
sign-in. (Serving by the rules, on both chains: tests/chain/test_audiences.py.)"""

from __future__ import annotations

import pytest

from adnet.audiences.models import AudienceWallet
from adnet.audiences.passes import wallet_of
from tests.api.test_advertisers import advertiser_api, draft
from tests.api.test_advertisers import settings as settings  # with the operator wallet that approves
from tests.auth_helpers import bearer, rewards_session
from tests.chain.helpers import user

CONTRACT = "0x" + "1" * 40
TOPIC = "0x" + "ab" * 32
AUDIENCE = {"audienceGroups": [[{"kind": "erc20", "contract": CONTRACT, "minAmount": "1000"},
                                {"kind": "injectedWallet"}],
                               [{"kind": "event", "contract": CONTRACT, "topic0": TOPIC, "days": 7}]],
            "audienceExclude": [{"kind": "erc1155", "contract": CONTRACT, "tokenId": "3"},
                                {"kind": "txCount", "min": 2}]}


async def test_audience_rules_are_stored_and_shown_as_written(client, clock):
    api = await advertiser_api(client)
    created = await draft(api, clock, targeting=AUDIENCE)
    assert created["targeting"]["audienceGroups"] == [
        [{"kind": "erc20", "contract": CONTRACT, "minAmount": "1000"}, {"kind": "injectedWallet"}],
        [{"kind": "event", "contract": CONTRACT, "topic0": TOPIC, "walletField": "topic1", "days": 7}]]
    assert created["targeting"]["audienceExclude"] == [
        {"kind": "erc1155", "contract": CONTRACT, "tokenId": "3", "minAmount": "1"}, {"kind": "txCount", "min": 2}]


@pytest.mark.parametrize(("targeting", "code", "field"), [
    ({"audienceGroups": [[{"kind": "erc20", "contract": CONTRACT, "minAmount": "0"}]]}, "invalid_amount",
     "targeting.audienceGroups.0.0.erc20.minAmount"),
    ({"audienceGroups": [[{"kind": "erc20", "contract": CONTRACT, "minAmount": 5}]]}, "invalid_amount",
     "targeting.audienceGroups.0.0.erc20.minAmount"),
    ({"audienceGroups": [[{"kind": "erc721", "contract": "0x12"}]]}, "invalid_wallet",
     "targeting.audienceGroups.0.0.erc721.contract"),
    ({"audienceGroups": [[{"kind": "balance", "contract": CONTRACT}]]}, "invalid_field",
     "targeting.audienceGroups.0.0"),
    ({"audienceGroups": [[]]}, "invalid_field", "targeting.audienceGroups.0"),
    ({"audienceExclude": [{"kind": "event", "contract": CONTRACT, "topic0": TOPIC, "days": 91}]}, "invalid_field",
     "targeting.audienceExclude.0.event.days"),
    ({"audienceExclude": [{"kind": "event", "contract": CONTRACT, "topic0": TOPIC, "walletField": "tx.from"}]},
     "invalid_field", "targeting.audienceExclude.0.event.walletField"),
    ({"audienceExclude": [{"kind": "txCount", "min": 0}]}, "invalid_field", "targeting.audienceExclude.0.txCount.min"),
    ({"audienceExclude": [{"kind": "txCount", "min": 1, "max": 3}]}, "invalid_field",
     "targeting.audienceExclude.0.txCount.max"),
])
async def test_bad_audience_rules_are_refused_by_field_and_change_nothing(client, clock, targeting, code, field):
    api = await advertiser_api(client)
    status, body = await api.call("POST", "/advertisers/campaigns", name="Bad", startsAt=clock.now().isoformat(),
                                  cpm="2", cpc="0", budget="10", targeting=targeting)
    assert (status, body["error"], body["field"]) == (400, code, field), body


async def test_the_rewards_sign_in_proves_the_wallet_for_audiences(client, services):
    session = await rewards_session(client, user(1))
    wallet = user(1).address.lower()
    assert wallet_of(session["audiencePass"], secrets=(services.settings.tracking_secret,),
                     now=services.clock.now()) == wallet
    row = await AudienceWallet.get(wallet=wallet)  # due for the audience job at once
    assert row.evaluated_at is None and not row.opted_out


async def test_a_viewers_audiences_and_switch_need_its_rewards_sign_in(client):
    assert (await client.get("/api/audiences")).status_code == 401
    assert (await client.post("/api/audiences/targeting", json={"enabled": False})).status_code == 401
    assert (await client.get("/api/audiences", headers=bearer("not-a-token"))).status_code == 401
    session = await rewards_session(client, user(2))
    shown = await client.get("/api/audiences", headers=bearer(session["token"]))
    assert (await shown.get_json()) == {"wallet": user(2).address, "targetingEnabled": True,
                                        "audiences": [], "evaluatedAt": None, "expiresAt": None}
    refused = await client.post("/api/audiences/targeting", json={"enabled": "no"}, headers=bearer(session["token"]))
    assert refused.status_code == 400
    off = await client.post("/api/audiences/targeting", json={"enabled": False}, headers=bearer(session["token"]))
    assert (await off.get_json())["targetingEnabled"] is False
    await rewards_session(client, user(2))  # signing in again does not switch it back on
    assert (await AudienceWallet.get(wallet=user(2).address.lower())).opted_out
    on = await client.post("/api/audiences/targeting", json={"enabled": True}, headers=bearer(session["token"]))
    assert (await on.get_json())["targetingEnabled"] is True
    assert (await AudienceWallet.get(wallet=user(2).address.lower())).evaluated_at is None
