"""One account's webhook endpoints cannot hold up another's: deliveries run at once with one attempt in flight per
endpoint and a bound per account, a round waits on no silent endpoint longer than its budget, an endpoint that
fails again and again is paused until its owner resumes it, an account's endpoints are bounded, and bodies go out
with their length. Through the ``webhooks`` job of the running app, real sockets (a tarpit that accepts and never
answers, a real HTTP receiver) and the HTTP API."""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

from eth_account import Account

from adnet.campaigns import review
from adnet.campaigns.models import CampaignStatus
from adnet.webhooks import delivery
from adnet.webhooks.endpoints import MAX_ENDPOINTS, PAUSED_RETENTION, NewWebhookEndpoint, add_endpoint
from adnet.webhooks.models import DeliveryStatus, WebhookDelivery, WebhookEndpoint, WebhookEvent, WebhookEventType
from tests.auth_helpers import bearer, sign_in
from tests.factories import EPOCH, make_advertiser, make_campaign
from tests.site_server import Answer
from tests.waiting import eventually


@dataclass
class Tarpit:
    """A TCP server on 127.0.0.1 that accepts every connection and never answers."""

    port: int = 0
    connections: list[asyncio.StreamWriter] = field(default_factory=list)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"


@asynccontextmanager
async def tarpit() -> AsyncIterator[Tarpit]:
    """A tarpit for the duration of the block; its connections are closed at the end."""
    pit = Tarpit()

    async def hold(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        pit.connections.append(writer)
        await reader.read()  # until the client gives up or the block ends

    server = await asyncio.start_server(hold, "127.0.0.1", 0)
    pit.port = server.sockets[0].getsockname()[1]
    try:
        yield pit
    finally:
        server.close()
        for writer in pit.connections:
            writer.close()
        await server.wait_closed()


async def endpoint_of(wallet: str, url: str) -> WebhookEndpoint:
    """An endpoint of ``wallet`` for every event type, registered as the API does."""
    registered = await add_endpoint(wallet, NewWebhookEndpoint(url=url, events=list(WebhookEventType)),
                                    EPOCH, random.Random(3), production=False)
    return registered.endpoint


async def approved_event(wallet_owner, clock) -> None:
    """A ``campaign.approved`` event of the advertiser ``wallet_owner``: one delivery to each of its endpoints."""
    campaign = await make_campaign(wallet_owner, status=CampaignStatus.REVIEW)
    await review.approve_campaign("0xoperator", campaign.id, clock.now())


async def test_silent_endpoints_of_one_account_do_not_delay_another_account(services, site_server, clock):
    async with tarpit() as silent:
        slow = await make_advertiser()
        for index in range(8):
            await endpoint_of(slow.wallet, silent.url(f"/hook/{index}"))
        await approved_event(slow, clock)  # eight deliveries, due before the other account's
        clock.advance(seconds=1)
        healthy = await make_advertiser()
        site_server.pages["/hook"] = Answer(200)
        await endpoint_of(healthy.wallet, site_server.url("/hook"))
        await approved_event(healthy, clock)

        began = time.monotonic()
        assert await services.jobs.run("webhooks") >= 1
        returned = time.monotonic()
        [posted] = site_server.posted
        assert posted.at - began < 1.0  # delivered while the silent endpoints hold their connections
        assert returned - began < delivery.ROUND_SECONDS + 1.0  # the round did not wait for them
        await eventually(lambda: len(silent.connections) == delivery.MAX_PER_ACCOUNT, "every delivery slot taken")
        assert await WebhookDelivery.filter(status=DeliveryStatus.DELIVERED).count() == 1

        # While those attempts still hang, a new event of the healthy account goes out in the next round, and the
        # silent account gets no more slots: its other four endpoints wait for its four in flight.
        clock.advance(seconds=1)
        await approved_event(healthy, clock)
        began = time.monotonic()
        assert await services.jobs.run("webhooks") == 1
        assert len(site_server.posted) == 2 and site_server.posted[1].at - began < 1.0
        assert len(silent.connections) == delivery.MAX_PER_ACCOUNT


async def test_an_endpoint_has_one_attempt_in_flight_and_gets_its_deliveries_in_order(services, site_server, clock):
    owner = await make_advertiser()
    site_server.pages["/hook"] = Answer(200)
    await endpoint_of(owner.wallet, site_server.url("/hook"))
    for _ in range(5):
        await approved_event(owner, clock)
        clock.advance(seconds=1)
    assert await services.jobs.run("webhooks") == 5
    sent = [json.loads(posted.body)["id"] for posted in site_server.posted]
    assert sent == [event.id for event in await WebhookEvent.all().order_by("created_at")]  # oldest first
    assert (await WebhookEndpoint.get()).held_until is None  # released when nothing was left


async def test_the_body_goes_out_with_its_length_not_chunked(services, clock):
    received: list[bytes] = []

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        headers = dict(line.split(": ", 1) for line in head.decode().split("\r\n")[1:] if line)
        lengths = {name.lower(): value for name, value in headers.items()}
        received.append(head + await reader.readexactly(int(lengths.get("content-length", "0"))))
        writer.write(b"HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(answer, "127.0.0.1", 0)
    try:
        owner = await make_advertiser()
        await endpoint_of(owner.wallet, f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/hook")
        await approved_event(owner, clock)
        assert await services.jobs.run("webhooks") == 1
    finally:
        server.close()
        await server.wait_closed()
    [request] = received
    head, body = request.split(b"\r\n\r\n", 1)
    lines = [line.lower() for line in head.split(b"\r\n")]
    assert f"content-length: {len(body)}".encode() in lines
    assert not any(line.startswith(b"transfer-encoding") for line in lines)
    assert json.loads(body)["type"] == "campaign.approved"
    assert (await WebhookDelivery.get()).status == DeliveryStatus.DELIVERED


async def test_the_breaker_pauses_a_failing_endpoint_and_its_owner_resumes_it(client, services, site_server, clock):
    account = Account.create()
    token = await sign_in(client, account)
    owner = await make_advertiser(account.address.lower())
    site_server.pages["/hook"] = Answer(500, "down")
    endpoint = await endpoint_of(owner.wallet, site_server.url("/hook"))
    await approved_event(owner, clock)
    await approved_event(owner, clock)

    for failures in range(1, delivery.BREAKER_FAILURES + 1):
        token = await sign_in(client, account)  # the hours of backoff outlast a session
        shown = (await (await client.get("/api/webhooks", headers=bearer(token))).get_json())["endpoints"][0]
        assert (shown["state"], shown["consecutiveFailures"]) == ("active", failures - 1)
        assert await services.jobs.run("webhooks") == 1  # one attempt a round: a failure ends it
        clock.advance(seconds=delivery.backoff(failures).total_seconds())
    assert len(site_server.posted) == delivery.BREAKER_FAILURES

    token = await sign_in(client, account)
    shown = (await (await client.get("/api/webhooks", headers=bearer(token))).get_json())["endpoints"][0]
    assert shown["state"] == "paused" and shown["pausedAt"] is not None
    assert shown["consecutiveFailures"] == delivery.BREAKER_FAILURES
    await approved_event(owner, clock)  # still recorded while paused
    clock.advance(days=1)
    assert await services.jobs.run("webhooks") == 0 and len(site_server.posted) == delivery.BREAKER_FAILURES
    assert await WebhookDelivery.filter(status=DeliveryStatus.PENDING).count() == 3

    site_server.pages["/hook"] = Answer(200)
    token = await sign_in(client, account)
    resumed = await client.post(f"/api/webhooks/{endpoint.id}/resume", json={}, headers=bearer(token))
    assert resumed.status_code == 200
    body = await resumed.get_json()
    assert (body["state"], body["consecutiveFailures"], body["scheduled"], body["expired"]) == ("active", 0, 3, 0)
    assert await services.jobs.run("webhooks") == 3
    assert await WebhookDelivery.filter(status=DeliveryStatus.DELIVERED).count() == 3
    again = await client.post(f"/api/webhooks/{endpoint.id}/resume", json={}, headers=bearer(token))
    assert (await again.get_json())["scheduled"] == 0  # an active endpoint is answered as it is

    stranger = await sign_in(client, Account.create())
    refused = await client.post(f"/api/webhooks/{endpoint.id}/resume", json={}, headers=bearer(stranger))
    assert refused.status_code == 403
    assert (await client.post("/api/webhooks/wh_nosuchendpoint/resume", json={},
                              headers=bearer(token))).status_code == 404


async def test_resuming_gives_up_deliveries_older_than_the_retention(client, services, site_server, clock):
    account = Account.create()
    token = await sign_in(client, account)
    owner = await make_advertiser(account.address.lower())
    site_server.pages["/hook"] = Answer(200)
    endpoint = await endpoint_of(owner.wallet, site_server.url("/hook"))
    await WebhookEndpoint.filter(id=endpoint.id).update(paused_at=clock.now(),
                                                        consecutive_failures=delivery.BREAKER_FAILURES)
    await approved_event(owner, clock)
    clock.advance(seconds=PAUSED_RETENTION.total_seconds() + 1)
    await approved_event(owner, clock)
    token = await sign_in(client, account)

    body = await (await client.post(f"/api/webhooks/{endpoint.id}/resume", json={},
                                     headers=bearer(token))).get_json()
    assert (body["scheduled"], body["expired"]) == (1, 1)
    assert await services.jobs.run("webhooks") == 1
    [posted] = site_server.posted
    newest = await WebhookDelivery.get(status=DeliveryStatus.DELIVERED).prefetch_related("event")
    assert json.loads(posted.body)["id"] == newest.event.id
    assert await WebhookDelivery.filter(status=DeliveryStatus.FAILED).count() == 1


async def test_an_account_holds_a_bounded_number_of_endpoints(client):
    token = await sign_in(client, Account.create())

    async def register(url: str):
        return await client.post("/api/webhooks", json={"url": url, "events": ["deposit.credited"]},
                                 headers=bearer(token))

    answers = await asyncio.gather(*[register(f"https://hooks.example/{index}")
                                     for index in range(MAX_ENDPOINTS + 5)])
    assert sorted(answer.status_code for answer in answers) == [201] * MAX_ENDPOINTS + [409] * 5
    refused = await next(answer for answer in answers if answer.status_code == 409).get_json()
    assert (refused["error"], refused["limit"]) == ("too_many_webhook_endpoints", MAX_ENDPOINTS)
    listed = (await (await client.get("/api/webhooks", headers=bearer(token))).get_json())["endpoints"]
    assert len(listed) == MAX_ENDPOINTS

    removed = listed[3]["endpointId"]
    assert (await client.post(f"/api/webhooks/{removed}/delete", json={}, headers=bearer(token))).status_code == 200
    assert (await register("https://hooks.example/again")).status_code == 201
    assert (await register("https://hooks.example/more")).status_code == 409
