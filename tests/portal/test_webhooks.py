"""Webhooks in the portal: an endpoint added (its secret shown once), its deliveries and every attempt listed after
the job delivered, a refused form adding nothing (also past the bound on endpoints), a paused endpoint shown and
resumed, removal."""

from __future__ import annotations

from urllib.parse import urlencode

from adnet.campaigns import review
from adnet.campaigns.models import CampaignStatus
from adnet.webhooks import delivery
from adnet.webhooks.endpoints import MAX_ENDPOINTS
from adnet.webhooks.models import WebhookEndpoint
from tests.factories import make_advertiser, make_campaign
from tests.portal.conftest import HTMX
from tests.site_server import Answer


async def add(publisher, url: str, events: list[str], *, htmx: bool = False):
    form = urlencode([("url", url), *[("events", event) for event in events], ("csrf_token", publisher.csrf)])
    headers = {"Content-Type": "application/x-www-form-urlencoded", **(HTMX if htmx else {})}
    return await publisher.client.post("/portal/webhooks", data=form, headers=headers)


async def test_an_endpoint_added_shows_its_secret_once_and_its_attempts(publisher, services, site_server, clock):
    site_server.pages["/hook"] = Answer(503)
    response = await add(publisher, site_server.url("/hook"), ["campaign.approved"])
    assert response.status_code == 201
    html = await response.get_data(as_text=True)
    endpoint = await WebhookEndpoint.get(wallet=publisher.wallet)
    assert f'<code id="webhook-secret">{endpoint.secret}</code>' in html

    campaign = await make_campaign(await make_advertiser(publisher.wallet), status=CampaignStatus.REVIEW)
    await review.approve_campaign("0xoperator", campaign.id, clock.now())
    await services.jobs.run("webhooks")
    page = await (await publisher.get("/portal/webhooks")).get_data(as_text=True)
    assert endpoint.secret not in page
    assert f'id="webhook-{endpoint.id}"' in page and "campaign.approved" in page
    assert "503 answered 503" in page and "pending, next" in page


async def test_a_refused_endpoint_is_shown_beside_the_form(publisher):
    fragment = await add(publisher, "ftp://hooks.example/x", ["deposit.credited"], htmx=True)
    assert fragment.headers["HX-Retarget"] == "#add-webhook" and 'role="alert"' in await fragment.get_data(
        as_text=True)
    page = await add(publisher, "https://hooks.example/x", [])
    assert page.status_code == 400 and "<h1>Webhooks</h1>" in await page.get_data(as_text=True)
    assert await WebhookEndpoint.all().count() == 0


async def test_removing_an_endpoint(publisher):
    await add(publisher, "https://hooks.example/x", ["deposit.credited"])
    endpoint = await WebhookEndpoint.get(wallet=publisher.wallet)
    response = await publisher.post(f"/portal/webhooks/{endpoint.id}/delete")
    assert response.status_code == 303
    page = await (await publisher.get("/portal/webhooks")).get_data(as_text=True)
    assert f'id="webhook-{endpoint.id}"' not in page and 'id="no-webhooks"' in page


async def test_a_paused_endpoint_is_shown_and_resumed(publisher, services, site_server, clock):
    site_server.pages["/hook"] = Answer(200)
    await add(publisher, site_server.url("/hook"), ["campaign.approved"])
    endpoint = await WebhookEndpoint.get(wallet=publisher.wallet)
    await WebhookEndpoint.filter(id=endpoint.id).update(paused_at=clock.now(),
                                                        consecutive_failures=delivery.BREAKER_FAILURES)
    campaign = await make_campaign(await make_advertiser(publisher.wallet), status=CampaignStatus.REVIEW)
    await review.approve_campaign("0xoperator", campaign.id, clock.now())
    assert await services.jobs.run("webhooks") == 0

    page = await (await publisher.get("/portal/webhooks")).get_data(as_text=True)
    state = page[page.index(f'id="webhook-state-{endpoint.id}"'):]
    assert state.startswith(f'id="webhook-state-{endpoint.id}" class="error" role="status">Paused since')
    assert f'action="/portal/webhooks/{endpoint.id}/resume"' in page

    fragment = await publisher.post(f"/portal/webhooks/{endpoint.id}/resume", htmx=True)
    html = await fragment.get_data(as_text=True)
    assert fragment.status_code == 200 and html.startswith('<section id="webhooks"')
    assert f'id="webhook-state-{endpoint.id}" class="muted">Active' in html and "/resume" not in html
    assert await services.jobs.run("webhooks") == 1 and len(site_server.posted) == 1

    without_js = await publisher.post(f"/portal/webhooks/{endpoint.id}/resume")
    assert without_js.status_code == 303 and without_js.headers["Location"] == "/portal/webhooks"


async def test_an_endpoint_past_the_bound_is_refused_beside_the_form(publisher):
    for index in range(MAX_ENDPOINTS):
        assert (await add(publisher, f"https://hooks.example/{index}", ["deposit.credited"])).status_code == 201
    refused = await add(publisher, "https://hooks.example/more", ["deposit.credited"], htmx=True)
    assert refused.status_code == 409 and refused.headers["HX-Retarget"] == "#add-webhook"
    assert "at most 10 webhook endpoints" in await refused.get_data(as_text=True)
    assert await WebhookEndpoint.filter(wallet=publisher.wallet).count() == MAX_ENDPOINTS
