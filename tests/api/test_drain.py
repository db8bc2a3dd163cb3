"""A draining process (SIGTERM received, ``adnet.core.drain``): ``/readyz`` and ``/healthz`` answer 503
``draining``, so a balancer takes the host out of rotation, while every other request is still served and recorded
as usual, each answer with ``Connection: close`` so that its client opens its next connection elsewhere. The signal
itself: ``tests/adnet/core/test_drain.py``; a rolling restart of real servers:
``tests/reliability/test_rolling_restart.py``."""

from __future__ import annotations

from adnet.delivery.models import TrackingEvent
from tests.api.test_serve import app_context  # noqa: F401 - autouse: the app as the current app
from tests.api.test_track import event_body, post, serve_ad, setup_ad


async def test_readiness_and_health_answer_503_draining_while_requests_are_served_closing_connections(
        client, services):
    site, _campaign, _creative = await setup_ad()
    await services.jobs.run("health")
    healthy = await client.get("/healthz")
    ready = await client.get("/readyz")
    assert healthy.status_code == 200 and "Connection" not in healthy.headers
    assert ready.status_code == 200

    services.drain.begin()
    readiness = await client.get("/readyz")
    health = await client.get("/healthz")
    served = await client.get("/api/serve", query_string={"siteId": site.id, "size": "300x250"})
    ad = await serve_ad(client, site, size="300x250")
    tracked, recorded = await post(client, event_body(ad, site, fingerprint="fp-drain"))
    refused = await client.get("/api/serve", query_string={"siteId": site.id, "kind": "nothing"})

    assert readiness.status_code == 503
    assert await readiness.get_json() == {"status": "unready", "reasons": ["draining"]}
    assert health.status_code == 503
    body = await health.get_json()
    assert body["status"] == "degraded" and body["reasons"] == ["draining"]
    assert served.status_code == 200 and tracked.status_code == 201 and refused.status_code == 400
    assert await TrackingEvent.filter(id=recorded["eventId"]).count() == 1
    assert [answer.headers.get("Connection") for answer in (health, served, tracked, refused)] == ["close"] * 4
