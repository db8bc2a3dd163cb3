"""Concurrency across processes: identical requests fired at once from this process at a real two-worker
``adnet serve`` (PostgreSQL when ``ADNET_TEST_DATABASE_URL`` is set, a SQLite file otherwise). Each test asserts
exact counts in the responses and the database, and exact money in the ledger; ``adnet audit`` closes the module.

Also the first proof that ``adnet serve`` serves and tracks at all: every request here goes through it.
"""

from __future__ import annotations

import asyncio
import os
from collections import Counter
from datetime import UTC, datetime
from decimal import Decimal

import pytest

from adnet.campaigns.models import Campaign
from adnet.delivery.caps import spent_today
from adnet.delivery.models import TrackingEvent
from adnet.money import ledger
from adnet.money.models import Claim, Withdrawal
from adnet.tasks.models import Completion, Task, TaskKind
from tests.auth_helpers import sign
from tests.reliability.conftest import (
    AdnetServer,
    account,
    books,
    browser_headers,
    deposit_to_site,
    http_client,
    impression,
    scaled,
    serve_ads,
    sign_in,
    snapshot,
)

N = scaled(ci=40, full=200)
G = 10**18


async def price_of(campaign_id: str) -> int:
    campaign = await Campaign.get(id=campaign_id)
    return int(campaign.cpm) // 1000


def share(cost: int) -> int:
    return cost * 7000 // 10_000


async def billed_of(responses) -> set[str]:
    """The ids of the recorded events among ``responses`` that were billed (the response never says)."""
    ids = [response.json()["eventId"] for response in responses if response.status_code == 201]
    return set(await TrackingEvent.filter(id__in=ids, billable=True).values_list("id", flat=True))


async def fire(requests) -> list:
    """Start every request before any is answered."""
    return list(await asyncio.gather(*requests))


def test_the_server_runs_two_workers_on_the_suites_database(adnet_server: AdnetServer):
    assert len(adnet_server.worker_pids()) == 2
    on_postgres = bool(os.environ.get("ADNET_TEST_DATABASE_URL"))
    assert adnet_server.database_url.startswith("postgres://" if on_postgres else "sqlite://")


async def test_identical_impressions_are_recorded_and_billed_once(adnet_server: AdnetServer):
    site = adnet_server.site_id
    async with http_client(adnet_server) as client, books(adnet_server):
        [ad] = await serve_ads(client, site, 1)
        await asyncio.sleep(1.1)  # an impression is billable once the ad was in view for a second
        before = await snapshot()
        body = impression(site, ad, "fp-identical")
        responses = await fire(client.post("/api/track", json=body, headers=browser_headers(ad["client"]))
                               for n in range(N))
        after = await snapshot()
        price = await price_of(ad["campaignId"])
        billed = await billed_of(responses)

    statuses = sorted(response.status_code for response in responses)
    assert statuses == [200] * (N - 1) + [201]
    [recorded] = [response.json() for response in responses if response.status_code == 201]
    assert billed == {recorded["eventId"]}
    assert all(response.json() == {"status": "duplicate"} for response in responses if response.status_code == 200)
    assert after.rows["tracking_event"] - before.rows["tracking_event"] == 1
    assert after.rows["dedup_key"] - before.rows["dedup_key"] == 2  # the fingerprint's key and the token's
    assert_moved(before.balances, after.balances, {
        ledger.campaign(ad["campaignId"]): -price, ledger.site(site): share(price),
        ledger.platform("G$"): price - share(price)})


async def test_one_served_ad_is_billed_once_whatever_the_fingerprints(adnet_server: AdnetServer):
    site = adnet_server.site_id
    async with http_client(adnet_server) as client, books(adnet_server):
        [ad] = await serve_ads(client, site, 1)
        await asyncio.sleep(1.1)
        before = await snapshot()
        responses = await fire(
            client.post("/api/track", json=impression(site, ad, f"fp-rotated-{n}"),
                        headers=browser_headers(ad["client"])) for n in range(N))
        after = await snapshot()
        price = await price_of(ad["campaignId"])
        refused = await TrackingEvent.filter(token_ref__not_isnull=True, billable=False,
                                             refusal_reason="token_reused",
                                             id__in=[r.json()["eventId"] for r in responses]).count()
        billed = await billed_of(responses)

    assert [response.status_code for response in responses] == [201] * N
    assert len(billed) == 1
    assert refused == N - 1
    assert after.rows["tracking_event"] - before.rows["tracking_event"] == N
    assert_moved(before.balances, after.balances, {
        ledger.campaign(ad["campaignId"]): -price, ledger.site(site): share(price),
        ledger.platform("G$"): price - share(price)})


async def test_distinct_impressions_at_once_are_each_billed_exactly(adnet_server: AdnetServer):
    site = adnet_server.site_id
    async with http_client(adnet_server) as client, books(adnet_server):
        ads = await serve_ads(client, site, N)
        await asyncio.sleep(1.1)
        before = await snapshot()
        responses = await fire(
            client.post("/api/track", json=impression(site, ad, f"fp-distinct-{n}"),
                        headers=browser_headers(ad["client"])) for n, ad in enumerate(ads))
        after = await snapshot()
        billed = await billed_of(responses)
        prices = {campaign_id: await price_of(campaign_id) for campaign_id in {ad["campaignId"] for ad in ads}}

    assert [response.status_code for response in responses] == [201] * N
    assert billed == {response.json()["eventId"] for response in responses}
    assert len(billed) == N
    assert after.rows["tracking_event"] - before.rows["tracking_event"] == N
    expected: dict[ledger.AccountKey, int] = {}
    for ad in ads:
        cost = prices[ad["campaignId"]]
        for key, amount in ((ledger.campaign(ad["campaignId"]), -cost), (ledger.site(site), share(cost)),
                            (ledger.platform("G$"), cost - share(cost))):
            expected[key] = expected.get(key, 0) + amount
    assert_moved(before.balances, after.balances, expected)


async def test_a_daily_cap_holds_across_workers(adnet_server: AdnetServer):
    """Impressions of one campaign at once, across both workers: exactly what its daily cap leaves is billed."""
    site = adnet_server.site_id
    async with http_client(adnet_server) as client, books(adnet_server):
        ads = await serve_ads(client, site, N)
        campaign_id, _ = Counter(ad["campaignId"] for ad in ads).most_common(1)[0]
        mine = [ad for ad in ads if ad["campaignId"] == campaign_id]
        price, allowed = await price_of(campaign_id), len(mine) // 2
        spent = (await spent_today(datetime.now(UTC))).get(campaign_id, 0)
        await Campaign.filter(id=campaign_id).update(daily_cap=Decimal(spent + allowed * price))
        await asyncio.sleep(1.1)
        try:
            responses = await fire(client.post("/api/track", json=impression(site, ad, f"fp-capped-{n}"),
                                               headers=browser_headers(ad["client"])) for n, ad in enumerate(mine))
            billed = await billed_of(responses)
            capped = await TrackingEvent.filter(refusal_reason="daily_cap_reached",
                                                id__in=[r.json()["eventId"] for r in responses]).count()
            spent_after = (await spent_today(datetime.now(UTC))).get(campaign_id, 0)
        finally:
            await Campaign.filter(id=campaign_id).update(daily_cap=None)

    assert [response.status_code for response in responses] == [201] * len(mine)
    assert len(billed) == allowed and capped == len(mine) - allowed
    assert spent_after - spent == allowed * price


async def test_a_frequency_cap_holds_across_workers(adnet_server: AdnetServer):
    """Impressions of one campaign served to one viewer id (each from its own network, so no client cap binds),
    reported at once across both workers: exactly the campaign's frequency cap is billed, the rest refused as
    ``frequency_capped``."""
    site = adnet_server.site_id
    viewer = "fp_concurrent_viewer"
    async with http_client(adnet_server) as client, books(adnet_server):
        async def served(number: int) -> dict:
            address = f"127.{100 + number // 250}.{number % 250}.1"
            response = await client.get("/api/serve", params={"siteId": site, "size": "300x250", "viewer": viewer},
                                        headers=browser_headers(address))
            assert response.status_code == 200, response.text
            return {**response.json()["ad"], "client": address}

        ads = await fire(served(number) for number in range(N))
        campaign_id, _ = Counter(ad["campaignId"] for ad in ads).most_common(1)[0]
        mine = [ad for ad in ads if ad["campaignId"] == campaign_id]
        allowed = len(mine) // 2
        await Campaign.filter(id=campaign_id).update(frequency_cap=allowed, frequency_hours=24)
        await asyncio.sleep(1.1)
        try:
            responses = await fire(client.post("/api/track", json=impression(site, ad, f"fp-frequency-{n}"),
                                               headers=browser_headers(ad["client"])) for n, ad in enumerate(mine))
            billed = await billed_of(responses)
            capped = await TrackingEvent.filter(refusal_reason="frequency_capped",
                                                id__in=[r.json()["eventId"] for r in responses]).count()
        finally:
            await Campaign.filter(id=campaign_id).update(frequency_cap=None)

    assert [response.status_code for response in responses] == [201] * len(mine)
    assert allowed >= 1 and len(billed) == allowed and capped == len(mine) - allowed


@pytest.mark.parametrize(("kind", "wallet_index"), [(TaskKind.SIGN_MESSAGE, 5), (TaskKind.QUIZ, 6)])
async def test_identical_completions_complete_once_and_reserve_the_reward_once(adnet_server: AdnetServer,
                                                                             kind: TaskKind, wallet_index: int):
    wallet = account(wallet_index)
    async with http_client(adnet_server) as client, books(adnet_server):
        task = await Task.get(kind=kind, id__in=adnet_server.demo["taskIds"][kind.value])
        before = await snapshot()
        body = {"taskId": task.id, "wallet": wallet.address, "fingerprint": f"fp-completion-{kind.value}",
                "proof": await proof_of(client, task, wallet)}
        responses = await fire(client.post("/api/tasks/complete", json=body,
                                           headers=browser_headers(f"127.5.0.{n % 250 + 1}")) for n in range(N))
        after = await snapshot()
        completions = await Completion.filter(task_id=task.id, wallet=wallet.address.lower()).count()
        claims = await Claim.filter(recipient=wallet.address.lower()).count()

    statuses = sorted(response.status_code for response in responses)
    assert statuses == [201] + [409] * (N - 1), [r.json() for r in responses if r.status_code != 201][:3]
    [created] = [response.json() for response in responses if response.status_code == 201]
    repeats = [response.json() for response in responses if response.status_code == 409]
    assert {repeat["error"] for repeat in repeats} == {"already_completed"}
    assert {repeat["completionId"] for repeat in repeats} == {created["completionId"]}
    assert completions == 1 and claims == 1
    reward = int(task.reward_gs)
    assert created["awarded"]["gs"] == float(Decimal(reward) / G)
    assert created["transaction"]["amount"] == str(reward)
    assert after.rows["completion"] - before.rows["completion"] == 1
    assert after.rows["claim"] - before.rows["claim"] == 1
    assert_moved(before.balances, after.balances, {ledger.task_pool(task.id): -reward,
                                                   ledger.outstanding_claims("G$"): reward})


async def test_concurrent_withdrawals_never_overdraw(adnet_server: AdnetServer):
    site = adnet_server.site_id
    publisher = account(2)
    amount = 10**15
    possible = N // 2
    balance = possible * amount + amount // 3  # room for exactly half of the withdrawals, and a remainder
    async with http_client(adnet_server) as client, books(adnet_server):
        token = await sign_in(client, publisher)
        headers = {"Authorization": f"Bearer {token}"}
        tx_hash = await deposit_to_site(adnet_server, balance)
        topped = await client.post("/api/publishers/topup", headers=headers,
                                   json={"wallet": publisher.address, "siteId": site, "txHash": tx_hash})
        assert topped.status_code in (201, 409), topped.text  # 409: the watcher credited it first
        claimable = await claimable_of(client, headers, publisher.address, site)
        before = await snapshot()
        responses = await fire(client.post("/api/publishers/withdraw", headers=headers, json={
            "wallet": publisher.address, "siteId": site, "amount": str(Decimal(amount) / G)}) for _ in range(N))
        after = await snapshot()
        remaining = await claimable_of(client, headers, publisher.address, site)
        withdrawals = await Withdrawal.filter(site_id=site).count()

    assert claimable >= balance
    succeeded = claimable // amount if claimable // amount < N else N
    statuses = sorted(response.status_code for response in responses)
    assert statuses == [201] * succeeded + [400] * (N - succeeded)
    assert {r.json()["error"] for r in responses if r.status_code == 400} <= {"insufficient_balance"}
    assert len({r.json()["transaction"]["claimRef"] for r in responses if r.status_code == 201}) == succeeded
    assert remaining == claimable - succeeded * amount
    assert withdrawals == after.rows["withdrawal"] and after.rows["withdrawal"] - before.rows["withdrawal"] == succeeded
    assert_moved(before.balances, after.balances, {ledger.site(site): -succeeded * amount,
                                                   ledger.outstanding_claims("G$"): succeeded * amount})


async def proof_of(client, task: Task, wallet) -> dict:
    """A right proof of the demo's task: the quiz's answer, or the issued message signed by the wallet."""
    if task.kind == TaskKind.QUIZ:
        return {"answer": "G$"}
    issued = await client.get(f"/api/tasks/{task.id}/message", params={"wallet": wallet.address})
    assert issued.status_code == 200, issued.text
    message = issued.json()["message"]
    return {"message": message, "signature": sign(wallet, message)}


def test_the_books_pass_the_audit(adnet_server: AdnetServer):
    adnet_server.audit()


async def claimable_of(client, headers: dict, wallet: str, site_id: str) -> int:
    response = await client.get("/api/publishers/balance", headers=headers,
                                params={"wallet": wallet, "siteId": site_id})
    assert response.status_code == 200, response.text
    return int(Decimal(response.json()["claimable"]) * G)


def assert_moved(before: dict, after: dict, expected: dict[ledger.AccountKey, int]) -> None:
    """Exactly the ``expected`` balance changes happened, and nothing else moved."""
    moved = {key: after.get(key, 0) - before.get(key, 0) for key in set(before) | set(after)
             if after.get(key, 0) != before.get(key, 0)}
    wanted: dict[tuple[str, str, str], int] = {}
    for key, amount in expected.items():
        wanted[(key.kind, key.owner, key.token)] = wanted.get((key.kind, key.owner, key.token), 0) + amount
    assert moved == {key: amount for key, amount in wanted.items() if amount}
