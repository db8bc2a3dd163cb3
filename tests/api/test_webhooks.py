"""Webhooks through HTTP and the jobs scheduler: endpoints registered with a session (secret shown once), events
written to the outbox in the transaction of what they report, delivered signed by the ``webhooks`` job through the
guarded fetcher, retried with backoff, every attempt logged once, and the outbox surviving a process that dies
before delivering."""

from __future__ import annotations

import asyncio
import json
import random
from datetime import timedelta

import pytest
from eth_account import Account
from tortoise.transactions import in_transaction

from adnet.accounts.fetching import Fetcher, FetchFailed, FetchPolicy
from adnet.app import create_app
from adnet.campaigns import review
from adnet.campaigns.commands import Rejection
from adnet.campaigns.models import CampaignStatus, CreativeStatus
from adnet.core.errors import Conflict
from adnet.tasks import review as task_review
from adnet.tasks.models import TaskKind
from adnet.webhooks import delivery, outbox, signing
from adnet.webhooks.endpoints import NewWebhookEndpoint, add_endpoint
from adnet.webhooks.models import (
    DeliveryStatus,
    WebhookAttempt,
    WebhookDelivery,
    WebhookEvent,
    WebhookEventType,
)
from tests.auth_helpers import bearer, sign_in
from tests.conftest import empty_database, make_settings
from tests.factories import EPOCH, G, make_advertiser, make_campaign, make_creative, make_task
from tests.site_server import Answer, serve_site


async def register(client, token: str, url: str, *events: str) -> dict:
    response = await client.post("/api/webhooks", json={"url": url, "events": list(events)}, headers=bearer(token))
    assert response.status_code == 201, await response.get_json()
    return await response.get_json()


@pytest.fixture
async def advertiser(client):
    """A signed-in wallet with an advertiser account and a campaign in review: (account, token, campaign)."""
    account = Account.create()
    token = await sign_in(client, account)
    campaign = await make_campaign(await make_advertiser(account.address.lower()), status=CampaignStatus.REVIEW)
    return account, token, campaign


async def test_an_event_is_delivered_signed_and_logged_once(client, services, advertiser, site_server, clock):
    _, token, campaign = advertiser
    site_server.pages["/hook"] = Answer(200, "ok")
    endpoint = await register(client, token, site_server.url("/hook"), "campaign.approved", "campaign.rejected")
    assert len(endpoint["secret"]) == 64

    await review.approve_campaign("0xoperator", campaign.id, clock.now())
    assert await services.jobs.run("webhooks") == 1

    [received] = site_server.posted
    body = json.loads(received.body)
    assert body["type"] == "campaign.approved" and body["data"]["campaignId"] == campaign.id
    assert body["data"]["status"] == "approved"
    assert received.headers["Adnet-Event-Id"] == body["id"] == (await WebhookEvent.get()).id
    assert received.headers["Adnet-Event-Type"] == "campaign.approved"
    now = int(clock.now().timestamp())
    assert signing.verify(endpoint["secret"], received.headers[signing.HEADER], received.body, now)
    assert not signing.verify("another secret" * 4, received.headers[signing.HEADER], received.body, now)

    assert await services.jobs.run("webhooks") == 0  # delivered: never sent again
    listed = await (await client.get(f"/api/webhooks/{endpoint['endpointId']}/deliveries",
                                     headers=bearer(token))).get_json()
    [shown] = listed["deliveries"]
    assert shown["status"] == "delivered" and shown["type"] == "campaign.approved"
    assert [(attempt["number"], attempt["statusCode"], attempt["error"]) for attempt in shown["attempts"]] == [
        (1, 200, "")]
    endpoints = await (await client.get("/api/webhooks", headers=bearer(token))).get_json()
    assert [item["endpointId"] for item in endpoints["endpoints"]] == [endpoint["endpointId"]]
    assert "secret" not in endpoints["endpoints"][0]


async def test_a_rejected_creative_and_task_reach_the_advertiser_with_their_reasons(client, services, advertiser,
                                                                                   site_server, clock):
    _, token, campaign = advertiser
    site_server.pages["/hook"] = Answer(200, "ok")
    endpoint = await register(client, token, site_server.url("/hook"), "creative.rejected", "task.rejected")
    kept = await make_creative(campaign, status=CreativeStatus.REVIEW, now=clock.now())
    dropped = await make_creative(campaign, status=CreativeStatus.REVIEW, width=728, height=90, now=clock.now())
    task = await make_task(kind=TaskKind.QUIZ, campaign=campaign, title="Token quiz", pool=2 * G, now=clock.now(),
                           config={"question": "Which token?", "answers": ["G$"], "choices": ["G$", "SOV"]})

    await review.approve_creative("0xoperator", kept.id, clock.now())  # an approval is not told
    await review.reject_creative("0xoperator", dropped.id, Rejection(reason="The banner is blurry."), clock.now())
    await task_review.reject_task("0xoperator", task.id, Rejection(reason="The answer is wrong."), clock.now())
    with pytest.raises(Conflict):  # a second decision changes nothing, and tells nothing
        await review.reject_creative("0xoperator", dropped.id, Rejection(reason="Twice"), clock.now())
    assert await services.jobs.run("webhooks") == 2

    # Both fell due at once: the endpoint may receive them in either order (receivers order by createdAt).
    bodies = sorted((json.loads(received.body) for received in site_server.posted), key=lambda body: body["type"])
    assert [(body["type"], body["data"]) for body in bodies] == [
        ("creative.rejected", {"campaignId": campaign.id, "name": campaign.name, "status": "review",
                               "creativeId": dropped.id, "size": "728x90", "reason": "The banner is blurry."}),
        ("task.rejected", {"campaignId": campaign.id, "name": campaign.name, "status": "review", "taskId": task.id,
                           "kind": "QUIZ", "title": "Token quiz", "reason": "The answer is wrong.",
                           "returned": "2"})]
    now = int(clock.now().timestamp())
    for received in site_server.posted:
        assert signing.verify(endpoint["secret"], received.headers[signing.HEADER], received.body, now)
    assert await services.jobs.run("webhooks") == 0


async def test_only_subscribed_types_and_only_the_accounts_own_events(client, services, advertiser, site_server,
                                                                       clock):
    _, token, campaign = advertiser
    site_server.pages["/hook"] = Answer(200)
    await register(client, token, site_server.url("/hook"), "campaign.rejected")
    other = await make_campaign(status=CampaignStatus.REVIEW)  # another advertiser's

    await review.approve_campaign("0xoperator", campaign.id, clock.now())
    await review.reject_campaign("0xoperator", other.id, Rejection(reason="no"), clock.now())
    assert await WebhookEvent.all().count() == 0
    assert await services.jobs.run("webhooks") == 0 and site_server.posted == []


async def test_a_refused_change_writes_no_event(client, advertiser, site_server, clock):
    _, token, campaign = advertiser
    await register(client, token, site_server.url("/hook"), "campaign.approved", "campaign.rejected")
    await review.approve_campaign("0xoperator", campaign.id, clock.now())
    with pytest.raises(Conflict):
        await review.reject_campaign("0xoperator", campaign.id, Rejection(reason="late"), clock.now())
    assert [event.type for event in await WebhookEvent.all()] == [WebhookEventType.CAMPAIGN_APPROVED]

    with pytest.raises(RuntimeError):
        async with in_transaction():
            await outbox.record(campaign.advertiser.wallet, WebhookEventType.CAMPAIGN_REJECTED, {}, clock.now())
            raise RuntimeError("the change fails after the event was written")
    assert await WebhookEvent.all().count() == 1 and await WebhookDelivery.all().count() == 1


async def test_failures_are_retried_with_backoff_until_delivered(client, services, advertiser, site_server, clock):
    _, token, campaign = advertiser
    site_server.pages["/hook"] = Answer(500, "down")
    endpoint = await register(client, token, site_server.url("/hook"), "campaign.approved")
    await review.approve_campaign("0xoperator", campaign.id, clock.now())

    assert await services.jobs.run("webhooks") == 1
    clock.advance(seconds=29)
    assert await services.jobs.run("webhooks") == 0  # not due before its backoff
    clock.advance(seconds=1)
    assert await services.jobs.run("webhooks") == 1
    site_server.pages["/hook"] = Answer(204)
    clock.advance(seconds=59)
    assert await services.jobs.run("webhooks") == 0
    clock.advance(seconds=1)
    assert await services.jobs.run("webhooks") == 1

    assert [json.loads(posted.body)["id"] for posted in site_server.posted] == [(await WebhookEvent.get()).id] * 3
    assert [posted.headers["Adnet-Delivery-Attempt"] for posted in site_server.posted] == ["1", "2", "3"]
    listed = await (await client.get(f"/api/webhooks/{endpoint['endpointId']}/deliveries",
                                     headers=bearer(token))).get_json()
    attempts = listed["deliveries"][0]["attempts"]
    assert [(attempt["statusCode"], attempt["error"]) for attempt in attempts] == [
        (500, "answered 500"), (500, "answered 500"), (204, "")]
    assert listed["deliveries"][0]["status"] == "delivered"


async def test_a_delivery_is_given_up_after_its_last_attempt(services, site_server, clock):
    advertiser = await make_advertiser()
    await _endpoint(advertiser.wallet, "http://127.0.0.1:9/hook")  # nothing listens there
    campaign = await make_campaign(advertiser, status=CampaignStatus.REVIEW)
    await review.approve_campaign("0xoperator", campaign.id, clock.now())
    for attempt in range(1, delivery.MAX_ATTEMPTS + 1):
        assert await services.jobs.run("webhooks") == 1
        clock.advance(seconds=delivery.backoff(attempt).total_seconds())
    assert await services.jobs.run("webhooks") == 0
    found = await WebhookDelivery.get()
    assert found.status == DeliveryStatus.FAILED and found.attempts == delivery.MAX_ATTEMPTS
    assert [attempt.status_code for attempt in await WebhookAttempt.all()] == [None] * delivery.MAX_ATTEMPTS
    assert (await WebhookAttempt.first()).error


def test_backoff_doubles_up_to_its_ceiling():
    assert [delivery.backoff(n) for n in (1, 2, 3)] == [timedelta(seconds=30), timedelta(seconds=60),
                                                        timedelta(seconds=120)]
    assert delivery.backoff(20) == delivery.MAX_DELAY


async def test_concurrent_workers_send_each_attempt_once(services, advertiser, client, site_server, clock):
    _, token, campaign = advertiser
    site_server.pages["/hook"] = Answer(200)
    await register(client, token, site_server.url("/hook"), "campaign.approved")
    await review.approve_campaign("0xoperator", campaign.id, clock.now())
    workers = [services.webhooks, delivery.Deliverer(post=services.webhooks.post, failure=FetchFailed)]
    attempted = await asyncio.gather(*[worker.deliver_due(clock.now()) for worker in workers * 3])
    assert sum(attempted) == 1 and len(site_server.posted) == 1
    assert await WebhookAttempt.all().count() == 1


async def test_in_production_no_delivery_reaches_a_private_address(services, site_server, clock):
    advertiser = await make_advertiser()
    await _endpoint(advertiser.wallet, "https://localhost/hook")
    campaign = await make_campaign(advertiser, status=CampaignStatus.REVIEW)
    await review.approve_campaign("0xoperator", campaign.id, clock.now())
    production = Fetcher(FetchPolicy.for_environment(production=True))
    assert await delivery.Deliverer(post=production.post, failure=FetchFailed).deliver_due(clock.now()) == 1
    attempt = await WebhookAttempt.get()
    assert attempt.status_code is None and "address" in attempt.error
    assert site_server.posted == []


async def test_the_outbox_survives_a_process_that_dies_before_delivering(database_url, tmp_path, clock):
    settings = make_settings(database_url, tmp_path)
    with serve_site() as receiver:
        receiver.pages["/hook"] = Answer(200)
        first = create_app(settings, clock=clock, rng=random.Random(1))
        async with first.test_app():
            await empty_database()
            advertiser = await make_advertiser()
            await _endpoint(advertiser.wallet, receiver.url("/hook"))
            campaign = await make_campaign(advertiser, status=CampaignStatus.REVIEW)
            await review.approve_campaign("0xoperator", campaign.id, clock.now())
            # A second event whose delivery a worker took, then died before it could log the attempt.
            other = await make_campaign(advertiser, status=CampaignStatus.REVIEW)
            await review.reject_campaign("0xoperator", other.id, Rejection(reason="no"), clock.now())
            taken = await WebhookDelivery.get(event__type=WebhookEventType.CAMPAIGN_REJECTED)
            await WebhookDelivery.filter(id=taken.id).update(attempts=1, next_attempt_at=clock.now() + delivery.LEASE)
        assert receiver.posted == []  # the process ended without delivering

        second = create_app(settings, clock=clock, rng=random.Random(2))
        async with second.test_app() as running:
            jobs = running.app.extensions["adnet"].jobs
            assert await jobs.run("webhooks") == 1
            clock.advance(seconds=delivery.LEASE.total_seconds())
            assert await jobs.run("webhooks") == 1
            assert await jobs.run("webhooks") == 0
            assert [json.loads(posted.body)["type"] for posted in receiver.posted] == [
                "campaign.approved", "campaign.rejected"]
            approved = await WebhookDelivery.get(event__type=WebhookEventType.CAMPAIGN_APPROVED)
            attempts = await WebhookAttempt.all().order_by("attempted_at").values_list("delivery_id", "number")
            assert attempts == [(approved.id, 1), (taken.id, 2)]
            assert set(await WebhookDelivery.all().values_list("status", flat=True)) == {DeliveryStatus.DELIVERED}


@pytest.mark.parametrize("body, field", [
    ({"url": "https://hooks.example/x", "events": []}, "events"),
    ({"url": "https://hooks.example/x", "events": ["campaign.paid"]}, "events.0"),
    ({"url": "ftp://hooks.example/x", "events": ["campaign.approved"]}, "url"),
    ({"events": ["campaign.approved"]}, "url"),
])
async def test_a_bad_endpoint_is_refused(client, advertiser, body, field):
    _, token, _ = advertiser
    response = await client.post("/api/webhooks", json=body, headers=bearer(token))
    assert response.status_code == 400 and (await response.get_json())["field"] == field


async def test_endpoints_need_the_wallets_session_and_are_its_own(client, advertiser, app):
    _, token, _ = advertiser
    endpoint = await register(client, token, "https://hooks.example/x", "deposit.credited")
    issued = await client.post("/api/keys", json={"name": "k", "scopes": ["reports:read"]}, headers=bearer(token))
    key = (await issued.get_json())["token"]
    refused = await client.post("/api/webhooks", json={"url": "https://hooks.example/y", "events": [
        "deposit.credited"]}, headers=bearer(key))
    assert refused.status_code == 403 and (await refused.get_json())["error"] == "session_required"
    assert (await client.get("/api/webhooks")).status_code == 401

    stranger = await sign_in(app.test_client(), Account.create())
    for path in (f"/api/webhooks/{endpoint['endpointId']}/deliveries",):
        assert (await client.get(path, headers=bearer(stranger))).status_code == 403
    assert (await client.post(f"/api/webhooks/{endpoint['endpointId']}/delete", json={},
                              headers=bearer(stranger))).status_code == 403
    removed = await client.post(f"/api/webhooks/{endpoint['endpointId']}/delete", json={}, headers=bearer(token))
    assert removed.status_code == 200
    assert (await (await client.get("/api/webhooks", headers=bearer(token))).get_json())["endpoints"] == []


async def _endpoint(wallet: str, url: str) -> None:
    """An endpoint of ``wallet`` for every event type, registered as the API does."""
    await add_endpoint(wallet, NewWebhookEndpoint(url=url, events=list(WebhookEventType)), EPOCH,
                       random.Random(3), production=False)
