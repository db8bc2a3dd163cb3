"""GET /metrics: adnet's Prometheus metrics (``adnet.core.metrics``), for the operator's scraper only, and the
request count and latency of every route, observed here for the whole app.

The scraper sends ``Authorization: Bearer <ADNET_METRICS_TOKEN>``; without that token configured, production has no
/metrics at all (404) and development serves it to anyone. Requests are labelled by their route's rule
(``/api/tasks/<task_id>/complete``), never by the raw path, so identifiers cannot multiply the series.
"""

import hmac
import time

from quart import Blueprint, Response, current_app, g, request
from quart_schema import security_scheme

from adnet.config import Settings
from adnet.core import metrics
from api.errors import RequestRefused
from api.openapi import BearerScheme, other_answer
from api.schemas import refusals

blueprint = Blueprint("api_metrics", __name__)
SECURITY_SCHEMES = {"metricsToken": BearerScheme(
    scheme="bearer", description="ADNET_METRICS_TOKEN, the operator's scraper's token (without one, production has "
                                 "no /metrics and development serves it to anyone).")}


@blueprint.get("/metrics")
@security_scheme([{"metricsToken": []}])
@refusals(401, 404)
@other_answer(200, "Every worker's figures.", "text/plain")
async def scrape() -> Response:
    """Every worker's figures in Prometheus's text format; 401 without the configured bearer token."""
    settings: Settings = current_app.config["ADNET_SETTINGS"]
    token = settings.metrics_token
    if token is None and settings.production:
        raise RequestRefused(404, "not_found", "No such page.")
    scheme, _, given = request.headers.get("Authorization", "").partition(" ")
    if token is not None and not (scheme.lower() == "bearer" and hmac.compare_digest(given.encode(), token.encode())):
        raise RequestRefused(401, "auth_required", "Send the metrics token as Authorization: Bearer <token>.")
    body, media_type = metrics.exposition()
    return Response(body, content_type=media_type, headers={"Cache-Control": "no-store"})


@blueprint.before_app_request
async def start_timing() -> None:
    g.request_started = time.perf_counter()


@blueprint.after_app_request
async def observe(response: Response) -> Response:
    started = g.get("request_started")
    route = request.url_rule.rule if request.url_rule is not None else "unmatched"
    metrics.REQUESTS.labels(method=request.method, route=route, status=response.status_code).inc()
    if started is not None:
        metrics.REQUEST_SECONDS.labels(method=request.method, route=route).observe(time.perf_counter() - started)
    return response
