"""Crash durability: a two-worker ``adnet serve`` under tracking load is killed with SIGKILL (the whole process
group, as a power cut or the OOM killer would), deposits reach the vault while it is down, and it is started again
on the same data directory.

Proven afterwards, from the database: every event answered 201 is stored exactly once, no event is stored twice,
the campaigns paid exactly the cost of their billable events; the chain watcher resumed from its cursor, so the
deposit credited before the crash is not credited again and every deposit made while the server was down is
credited exactly once; ``adnet audit`` passes.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from decimal import Decimal
from pathlib import Path

import httpx

from adnet.campaigns.models import Campaign
from adnet.delivery.models import TrackingEvent
from adnet.money import ledger
from adnet.money.models import Deposit, DepositStatus, LedgerTransaction
from tests.reliability.conftest import (
    AdnetServer,
    books,
    browser_headers,
    deposit_to_site,
    http_client,
    impression,
    running_server,
    scaled,
    serve_ads,
    snapshot,
)
from tests.waiting import eventually

LOAD_SECONDS = scaled(ci=3, full=20)
SENDERS = 32
MIN_ACKNOWLEDGED = 50
DEPOSITS_WHILE_DOWN = scaled(ci=3, full=10)
CREDIT_TIMEOUT = 60.0


async def track_until_killed(server: AdnetServer, kill_after: float) -> dict[str, str]:
    """Impressions from ``SENDERS`` clients, each of a served ad and a fresh fingerprint, until the server is
    killed under them; returns the acknowledged (201) event ids and their fingerprints."""
    acknowledged: dict[str, str] = {}
    numbers = itertools.count()
    async with http_client(server, connections_limit=SENDERS + 8) as client:
        ads = await serve_ads(client, server.site_id, 200)
        await asyncio.sleep(1.1)  # in view for a second: billable

        async def sender(number: int) -> None:
            while True:
                n = next(numbers)
                ad = ads[n % len(ads)]
                body = impression(server.site_id, ad, f"fp-crash-{n}")
                try:
                    response = await client.post("/api/track", json=body, headers=browser_headers(ad["client"]))
                except httpx.HTTPError:
                    return  # the server is gone
                assert response.status_code == 201, response.text
                acknowledged[response.json()["eventId"]] = body["fingerprint"]

        senders = [asyncio.create_task(sender(number)) for number in range(SENDERS)]
        await asyncio.sleep(kill_after)
        # On a busy machine the first batches may take longer than that: the kill waits for some acknowledgements.
        await eventually(lambda: len(acknowledged) > MIN_ACKNOWLEDGED, "acknowledged events before the kill", 60)
        await asyncio.to_thread(server.kill)
        await asyncio.wait_for(asyncio.gather(*senders), timeout=60)
    return acknowledged


async def wait_credited(tx_hashes: list[str]) -> None:
    deadline = time.monotonic() + CREDIT_TIMEOUT
    while time.monotonic() < deadline:
        credited = await Deposit.filter(tx_hash__in=tx_hashes, status=DepositStatus.CREDITED).count()
        if credited == len(tx_hashes):
            return
        await asyncio.sleep(0.25)
    raise AssertionError(f"deposits not credited within {CREDIT_TIMEOUT:.0f} s: {tx_hashes}")


async def test_a_killed_server_loses_no_acknowledged_event_and_the_watcher_resumes(tmp_path: Path):
    with running_server(tmp_path, "crash") as server:
        site_key = ledger.site(server.site_id)
        async with books(server):
            before_crash = await deposit_to_site(server, 7 * 10**18)
            await wait_credited([before_crash])
            site_before = (await snapshot()).balances[(site_key.kind, site_key.owner, site_key.token)]

        acknowledged = await track_until_killed(server, LOAD_SECONDS)
        assert len(acknowledged) > MIN_ACKNOWLEDGED

        amounts = [(index + 1) * 10**18 for index in range(DEPOSITS_WHILE_DOWN)]
        async with books(server):
            while_down = [await deposit_to_site(server, amount) for amount in amounts]
            assert await Deposit.filter(tx_hash__in=while_down).count() == 0

        server.start()
        async with books(server):
            await wait_credited(while_down)
            stored = await TrackingEvent.filter(id__in=list(acknowledged)).values_list("id", "fingerprint")
            repeated = await TrackingEvent.filter(fingerprint__startswith="fp-crash-").count()
            distinct = len(set(await TrackingEvent.filter(fingerprint__startswith="fp-crash-")
                               .values_list("fingerprint", flat=True)))
            costs = await TrackingEvent.filter(billable=True).values_list("campaign_id", "cost", "publisher_amount")
            campaigns = await Campaign.all().values_list("id", "budget")
            state = await snapshot()
            bookings = await LedgerTransaction.filter(kind="deposit",
                                                      reference__in=[before_crash, *while_down]).count()
            deposits = await Deposit.filter(tx_hash__in=[before_crash, *while_down]).count()

        assert dict(stored) == acknowledged, "an acknowledged event is missing or changed"
        assert repeated == distinct, "an event was stored twice"
        spent: dict[str, int] = {}
        for campaign_id, cost, _ in costs:
            spent[campaign_id] = spent.get(campaign_id, 0) + int(Decimal(cost))
        for campaign_id, budget in campaigns:
            key = ledger.campaign(campaign_id)
            remaining = state.balances.get((key.kind, key.owner, key.token), 0)
            assert int(Decimal(budget)) - remaining == spent.get(campaign_id, 0)
        earned = sum(int(Decimal(publisher_amount)) for _, _, publisher_amount in costs)
        site_now = state.balances[(site_key.kind, site_key.owner, site_key.token)]
        assert site_now - site_before == sum(amounts) + earned  # all billable events are the load's
        assert bookings == deposits == 1 + DEPOSITS_WHILE_DOWN
        server.audit()
    print(f"crash: {len(acknowledged)} events acknowledged (201) under load before SIGKILL, {len(stored)} found, "
          f"{repeated} stored in all; {DEPOSITS_WHILE_DOWN} deposits made while down credited once each")

