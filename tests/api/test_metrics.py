"""GET /metrics through HTTP: refused without the configured bearer token (off in production without one), and
figures that move with the traffic, the tracking writer, the filtered events, the outstanding claims and the
vault's cover."""

from __future__ import annotations

import pytest
from prometheus_client.parser import text_string_to_metric_families

from adnet.app import create_app
from adnet.chain.deploy import DEV_VAULT_FUNDING
from adnet.core.amounts import UNIT
from adnet.delivery.models import TrackingEvent
from adnet.money import ledger
from tests.api.test_serve import app_context  # noqa: F401 - autouse: the app as the current app
from tests.api.test_track import event_body, post, serve_ad, setup_ad
from tests.chain.helpers import funded_claim, user
from tests.conftest import make_settings
from tests.factories import G, fund
from tests.waiting import eventually

TOKEN = "metrics-token-" + "m" * 32
SCRAPER = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture
def settings(database_url, data_dir):
    return make_settings(database_url, data_dir, ADNET_METRICS_TOKEN=TOKEN)


async def scrape(client) -> dict[tuple[str, frozenset], float]:
    """Every sample of /metrics, by name and labels."""
    response = await client.get("/metrics", headers=SCRAPER)
    assert response.status_code == 200
    assert response.headers["Content-Type"].startswith("text/plain; version=")
    text = (await response.get_data()).decode()
    return {(sample.name, frozenset(sample.labels.items())): sample.value
            for family in text_string_to_metric_families(text) for sample in family.samples}


def value(samples, name: str, **labels: str) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


async def test_refused_without_the_token(client):
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": TOKEN}):
        response = await client.get("/metrics", headers=headers)
        assert response.status_code == 401
        assert (await response.get_json())["error"] == "auth_required"


async def test_production_without_a_token_has_no_metrics(database_url, tmp_path):
    production = make_settings(database_url, tmp_path).model_copy(update={"env": "production"})

    response = await create_app(production).test_client().get("/metrics")

    assert response.status_code == 404


async def test_development_without_a_token_serves_them(database_url, tmp_path):
    response = await create_app(make_settings(database_url, tmp_path)).test_client().get("/metrics")

    assert response.status_code == 200


async def test_requests_are_counted_and_timed_by_route_rule(client):
    before = await scrape(client)
    for task_id in ("task_a", "task_b", "task_c"):
        assert (await client.get(f"/api/tasks/{task_id}/message")).status_code == 400
    after = await scrape(client)

    route = {"method": "GET", "route": "/api/tasks/<task_id>/message"}
    assert value(after, "adnet_http_requests_total", **route, status="400") - value(
        before, "adnet_http_requests_total", **route, status="400") == 3
    assert value(after, "adnet_http_request_duration_seconds_count", **route) - value(
        before, "adnet_http_request_duration_seconds_count", **route) == 3
    assert not any(name == "adnet_http_requests_total" and ("route", "/api/tasks/task_a/message") in labels
                   for name, labels in after)


async def test_tracking_batches_and_filtered_reasons_are_counted(client):
    site, _, _ = await setup_ad()
    ad = await serve_ad(client, site)
    before = await scrape(client)

    _, body = await post(client, event_body(ad, site, rendered=False))
    after = await scrape(client)

    reason = (await TrackingEvent.get(id=body["eventId"])).refusal_reason
    assert reason == "not_rendered"
    assert value(after, "adnet_tracking_filtered_events_total", reason=reason) - value(
        before, "adnet_tracking_filtered_events_total", reason=reason) == 1
    for name in ("adnet_batch_size_sum", "adnet_batch_wait_seconds_count", "adnet_batch_commit_seconds_count"):
        assert value(after, name, writer="tracking") - value(before, name, writer="tracking") == 1, name
    assert value(after, "adnet_batch_queue_depth", writer="tracking") == 0


async def test_claims_and_the_vaults_cover_follow_the_books_and_the_chain(client, services, chain, clock):
    await funded_claim(chain, clock, recipient=user(2).address, amount=3 * G)
    await fund(ledger.advertiser("adv_big"), DEV_VAULT_FUNDING, now=clock.now())
    await services.jobs.run("health")

    samples = await scrape(client)

    owed = DEV_VAULT_FUNDING + 3 * G
    assert value(samples, "adnet_claims_outstanding_tokens", token="G$") == 3
    assert value(samples, "adnet_owed_tokens", token="G$") == owed / UNIT
    assert value(samples, "adnet_vault_holdings_tokens", token="G$") == DEV_VAULT_FUNDING / UNIT
    assert value(samples, "adnet_vault_cover_tokens", token="G$") == -3
    assert value(samples, "adnet_signer_authorized", signer=chain.signer.address) == 1


async def test_each_run_of_a_periodic_job_is_timed(client, services):
    before = await scrape(client)
    services.serving.invalidate(None)  # wakes the serving-index job
    runs_before = value(before, "adnet_job_duration_seconds_count", job="serving-index")

    async def timed_run() -> bool:
        return value(await scrape(client), "adnet_job_duration_seconds_count", job="serving-index") > runs_before

    assert await eventually(timed_run, "a timed run of the serving-index job")
