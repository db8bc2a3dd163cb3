"""Wallet audiences through the HTTP API: rules written with a campaign's targeting, shown back and refused field
by field; the rewards sign-in's audience pass; a viewer's own audiences and its switch, behind the rewards
sign-in. (Serving by the rules, on both chains: tests/chain/test_audiences.py.)"""

from __future__ import annotations

import random
from datetime import timedelta

import pytest

from adnet.app import create_app
from adnet.audiences.evaluation import AUDIENCE_LEASE
from adnet.audiences.models import AudienceWallet
from adnet.audiences.passes import wallet_of
from adnet.campaigns.targeting import Targeting
from tests.api.test_advertisers import advertiser_api, draft
from tests.api.test_advertisers import settings as settings  # with the operator wallet that approves
from tests.auth_helpers import bearer, rewards_session, tampered
from tests.chain.helpers import user
from tests.conftest import empty_database, make_settings, rebuild_index
from tests.factories import make_campaign, make_creative, make_site, wallet_address
from tests.sql import recorded_statements

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


async def proven_wallets(count: int, clock, *, matched: list[str], evaluated: list[str]) -> None:
    """``count`` wallets proven now, evaluated against ``evaluated`` keys and matching ``matched``."""
    now = clock.now()
    await AudienceWallet.bulk_create([
        AudienceWallet(wallet=wallet_address(), proven_at=now, evaluated_at=now, expires_at=now + timedelta(hours=1),
                       evaluated=evaluated, matched=matched, rules_digest="") for _ in range(count)])


async def test_reach_is_a_rounded_count_and_nothing_under_a_hundred(client, clock):
    api = await advertiser_api(client)
    holder = {"kind": "erc20", "contract": CONTRACT, "minAmount": "1000"}
    collector = {"kind": "erc721", "contract": CONTRACT}
    keys = [Targeting.model_validate({"audienceGroups": [[rule]]}).audience_groups[0][0].key
            for rule in (holder, collector)]
    await proven_wallets(99, clock, matched=[keys[0]], evaluated=keys)
    status, body = await api.call("POST", "/advertisers/audiences/reach", audienceGroups=[[holder]])
    assert (status, body) == (200, {"provenWallets": None, "requestsPerDay": None, "threshold": 100, "pending": False})

    await proven_wallets(50, clock, matched=keys, evaluated=keys)
    await proven_wallets(120, clock, matched=[], evaluated=keys)
    status, body = await api.call("POST", "/advertisers/audiences/reach", audienceGroups=[[holder]])
    assert body == {"provenWallets": 100, "requestsPerDay": None, "threshold": 100, "pending": False}  # 149 rounded
    status, body = await api.call("POST", "/advertisers/audiences/reach", audienceGroups=[[holder, collector]])
    assert body["provenWallets"] is None  # 50: fewer than 100, never told
    status, body = await api.call("POST", "/advertisers/audiences/reach")
    assert body["provenWallets"] == 200  # no wallet rule: all 269 proven wallets
    status, body = await api.call("POST", "/advertisers/audiences/reach", audienceExclude=[collector])
    assert body["provenWallets"] == 200  # 219
    # Rules no wallet was asked yet: the audience job evaluates drafts' rules too; until then, pending.
    status, body = await api.call("POST", "/advertisers/audiences/reach",
                                  audienceGroups=[[{"kind": "txCount", "min": 3}]])
    assert body == {"provenWallets": None, "requestsPerDay": None, "threshold": 100, "pending": True}

    assert (await client.post("/api/advertisers/audiences/reach", json={})).status_code == 401
    status, body = await api.call("POST", "/advertisers/audiences/reach", audienceGroups=[[{"kind": "nft"}]])
    assert (status, body["error"]) == (400, "invalid_field")


async def test_what_the_leader_found_is_served_by_another_process_without_a_query(database_url, tmp_path, clock,
                                                                                 redis_url):
    """Two apps on one database and one Redis, one after the other (the ORM holds one app's database per process):
    the first proves a wallet and runs the audience job; the second, whose memory starts empty, serves the wallet's
    audience from what it loaded, with no database statement per request."""
    settings = make_settings(database_url, tmp_path, ADNET_REDIS_URL=redis_url)
    leader = create_app(settings, clock=clock, rng=random.Random(1))
    async with leader.test_app() as running:
        await empty_database()
        site = await make_site()
        holders = await make_campaign(targeting=Targeting.model_validate({"audienceGroups": [[{
            "kind": "erc20", "contract": running.app.extensions["adnet"].chain.gs_address, "minAmount": "1"}]]})
            .stored())
        await make_creative(holders)
        audience_pass = (await rewards_session(running.test_client(), user(1)))["audiencePass"]
        assert (await running.app.extensions["adnet"].jobs.run(AUDIENCE_LEASE)).evaluated == 1

    other = create_app(settings, clock=clock, rng=random.Random(2))
    async with other.test_app() as running:
        client = running.test_client()
        with recorded_statements() as queries:
            answers = [await (await client.get("/api/serve", query_string={
                "siteId": site.id, "audience": audience_pass, "house": "0"})).get_json() for _ in range(5)]
            unproven = await (await client.get("/api/serve", query_string={
                "siteId": site.id, "wallet": user(1).address, "house": "0"})).get_json()
        assert queries == []
        assert {answer["ad"]["campaignId"] for answer in answers} == {holders.id} and unproven["kind"] == "NONE"


async def test_a_viewer_reads_why_an_ad_was_shown_to_its_wallet_and_nothing_of_others(client, clock, services):
    old = {"kind": "txCount", "min": 3}
    key = Targeting.model_validate({"audienceGroups": [[old]]}).audience_groups[0][0].key
    campaign = await make_campaign(targeting=Targeting.model_validate(
        {"audienceGroups": [[{"kind": "erc721", "contract": CONTRACT}], [old]]}).stored())
    await make_creative(campaign)
    site = await make_site()
    session = await rewards_session(client, user(1))
    now = clock.now()
    await AudienceWallet.filter(wallet=user(1).address.lower()).update(
        evaluated_at=now, expires_at=now + timedelta(hours=1), evaluated=[key], matched=[key])
    await rebuild_index(client.app)
    served = await (await client.get("/api/serve", query_string={
        "siteId": site.id, "audience": session["audiencePass"], "house": "0"})).get_json()
    token = served["ad"]["trackingToken"]

    why = await client.get("/api/audiences/why", query_string={"token": token}, headers=bearer(session["token"]))
    assert (why.status_code, await why.get_json()) == (200, {
        "group": 2, "rules": ["sent at least 3 transactions"], "yours": True})
    # Another viewer holding the token learns the campaign's rule, and that it is not in it: nothing of the first.
    other = await rewards_session(client, user(2))
    why = await client.get("/api/audiences/why", query_string={"token": token}, headers=bearer(other["token"]))
    assert (await why.get_json()) == {"group": 2, "rules": ["sent at least 3 transactions"], "yours": False}

    assert (await client.get("/api/audiences/why", query_string={"token": token})).status_code == 401
    forged = await client.get("/api/audiences/why", query_string={"token": tampered(token)},
                              headers=bearer(session["token"]))
    assert (forged.status_code, (await forged.get_json())["error"]) == (400, "token_invalid")
    clock.advance(minutes=16)
    expired = await client.get("/api/audiences/why", query_string={"token": token}, headers=bearer(session["token"]))
    assert (expired.status_code, (await expired.get_json())["error"]) == (400, "token_invalid")
