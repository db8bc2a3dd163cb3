"""The application factory, the one composition root of the web service: every extension, blueprint, request hook
and error handler is registered here, and the service's parts (``adnet.services``) start when the app starts
serving. Nothing happens at import time."""

from __future__ import annotations

import gc
import random
import re
import secrets
from typing import Any

from quart import Quart, Response, g, request
from quart.sessions import SecureCookieSessionInterface
from quart_schema import QuartSchema

import api
import portal
from adnet import services
from adnet.config import Settings, load_settings
from adnet.core import changes
from adnet.core.clock import Clock
from adnet.core.files import shipped
from adnet.core.redis_link import RedisLink
from api import dev_rpc, errors, metrics
from api.errors import RequestRefused
from api.http import is_public, public_routes
from api.openapi import AdnetOpenAPI
from api.sessions import SECURITY_SCHEMES
from web.limits import OwnLimitsFirst, client_ip_key, settings_limit, skip_preflight

MAX_BODY_BYTES = 64 * 1024
_REQUEST_ID = re.compile(r"^[A-Za-z0-9._-]{8,64}$")
API_DESCRIPTION = (
    "adnet's JSON API: publishers' sites and balances, advertisers' campaigns, operators' review, and what the "
    "embed script calls from publishers' pages.\n\n"
    "**Signing in.** `GET /api/auth/nonce`, sign the Sign-In with Ethereum message it describes with the wallet, "
    "`POST /api/auth/verify`; send the token it returns as `Authorization: Bearer <token>` (Authorize, here), or "
    "rely on the session cookie it sets.\n\n"
    "**Errors.** A status and `{\"error\": code, \"message\": sentence}`, with `field` naming the offending input "
    "and other details where they help; a refused request changes nothing. Every code is in adnet's "
    "docs/errors.md.\n\n"
    "**Values.** Token amounts are decimal strings (`\"12.5\"`), addresses EIP-55, times ISO 8601 in UTC."
)


def content_security_policy(public_origin: str) -> str:
    """The pages' Content-Security-Policy. Images and videos may also come from adnet's public origin: the embed
    on ``/demo`` shows the demo's banners at the addresses the serve answer names, under the public URL, which a
    browser that reached adnet by another name (``localhost`` for ``127.0.0.1``) does not count as 'self'."""
    return (
        f"default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' {public_origin} https: data:; "
        f"media-src 'self' {public_origin} https:; connect-src 'self'; frame-ancestors 'none'; base-uri 'self'; "
        "form-action 'self'; object-src 'none'"
    )


class SessionCookies(SecureCookieSessionInterface):
    """Quart's signed session cookies, with the signing serializer built once per secret instead of on every
    request: Quart builds it before it looks for a cookie, and building one serializes an empty dict to test the
    serializer (about 4 % of the CPU of a request to /api/serve, which has no cookie at all)."""

    def __init__(self) -> None:
        self._serializers: dict[tuple[Any, ...], Any] = {}

    def get_signing_serializer(self, app: Quart) -> Any:
        secrets_in_use = (app.secret_key, *(app.config["SECRET_KEY_FALLBACKS"] or ()))
        if secrets_in_use not in self._serializers:
            self._serializers[secrets_in_use] = super().get_signing_serializer(app)
        return self._serializers[secrets_in_use]


def create_app(
    settings: Settings | None = None, *, clock: Clock | None = None, rng: random.Random | None = None
) -> Quart:
    """Build the adnet application. ``clock`` and ``rng`` are injected by tests for determinism."""
    settings = settings or load_settings()
    clock = clock or Clock()
    rng = rng or random.SystemRandom()
    app = Quart(__name__, template_folder=str(shipped("templates")), static_folder=str(shipped("static")),
                static_url_path="/static")
    app.config.update(
        MAX_CONTENT_LENGTH=MAX_BODY_BYTES,
        SECRET_KEY=settings.secret_key,
        SESSION_COOKIE_SECURE=settings.secure_cookies,
        SESSION_COOKIE_HTTPONLY=True,
        SESSION_COOKIE_SAMESITE="Lax",
        JSON_SORT_KEYS=False,
        ADNET_SETTINGS=settings,
    )
    app.session_interface = SessionCookies()
    QuartSchema(
        app,
        info={"title": "adnet", "version": "1", "description": API_DESCRIPTION},
        openapi_path="/openapi.json",
        swagger_ui_path=None,  # /docs is the portal's own page (portal.home), served from static/
        redoc_ui_path=None,
        scalar_ui_path=None,
        security_schemes={**SECURITY_SCHEMES, **metrics.SECURITY_SCHEMES},
        openapi_provider_class=AdnetOpenAPI,
    )
    # One view of Redis for the process: the limiter, the frequency counts, the changes' broadcast and health.
    redis = RedisLink(settings.redis_url) if settings.redis_url else None
    # Routes without a limit of their own get the public limit per client IP.
    OwnLimitsFirst(app, settings=settings, redis=redis, key_function=client_ip_key, skip_function=skip_preflight,
                   default_limits=settings_limit("rate_limit_public"))
    for blueprint in (*api.BLUEPRINTS, public_routes(api.PUBLIC_BLUEPRINTS), *portal.BLUEPRINTS):
        app.register_blueprint(blueprint)
    if not settings.production:
        app.register_blueprint(dev_rpc.blueprint)
    _register_request_hooks(app, settings)
    errors.register(app, portal.pages.http_error_page)

    @app.before_serving
    async def startup() -> None:
        app.extensions["adnet"] = await services.start(settings, clock, rng, redis=redis)

    @app.after_serving
    async def shutdown() -> None:
        await services.stop(app.extensions.pop("adnet"))

    return app


def create_server_app(settings: Settings | None = None) -> Quart:
    """The app as each ``adnet serve`` worker runs it: ``create_app``; once it has started, every object loaded
    so far leaves the garbage collector's full collections (``gc.freeze``), and SIGTERM drains before it stops
    (``adnet.core.drain``).

    A worker holds a large heap that lives as long as the process: the modules (web3, eth-account, pydantic's
    schemas, the ORM), the app and the serving index. Python's full collection walks all of it, and under load it
    runs every few seconds, during which no request is answered: the latency tail follows it. Frozen, a full
    collection walks only what came after (docs/serving.md has the figures). Frozen objects are still freed
    when nothing refers to them; only a reference cycle among them would stay."""
    app = create_app(settings)
    app.before_serving(_freeze_heap)  # after create_app's start-up, which loads the serving index

    @app.before_serving
    async def drain_on_terminate() -> None:
        app.extensions["adnet"].drain.install()  # uvicorn's SIGTERM handler is in place while it serves

    return app


async def _freeze_heap() -> None:
    gc.collect()
    gc.freeze()


def _register_request_hooks(app: Quart, settings: Settings) -> None:
    policy = content_security_policy(settings.public_origin)

    @app.before_request
    async def assign_request_id() -> None:
        incoming = request.headers.get("X-Request-ID", "")
        g.request_id = incoming if _REQUEST_ID.match(incoming) else secrets.token_hex(8)

    @app.before_request
    async def announce_changes_to_the_index() -> None:
        running: services.Services | None = app.extensions.get("adnet")  # none before the app has started
        if running is not None:
            changes.listen(running.announce)

    @app.before_request
    async def check_body() -> None:
        # Quart routes the request before these hooks and raises what routing found (404, 405 with Allow) only
        # after them: a request to no route has no body to judge.
        if request.routing_exception is not None:
            return
        if (request.content_length or 0) > MAX_BODY_BYTES:
            raise RequestRefused(413, "payload_too_large", f"The body is over {MAX_BODY_BYTES // 1024} KiB.")
        if request.method in ("POST", "PUT", "PATCH") and request.path.startswith("/api/"):
            # A beacon (navigator.sendBeacon) sends its JSON as text/plain, which needs no preflight.
            if request.mimetype != "application/json" and not (is_public() and request.mimetype == "text/plain"):
                raise RequestRefused(415, "unsupported_media_type", "Send the body as application/json.")

    @app.after_request
    async def close_connections_while_draining(response: Response) -> Response:
        # The client opens its next connection elsewhere, through the balancer (adnet.core.drain).
        running: services.Services | None = app.extensions.get("adnet")
        if running is not None and running.drain.draining:
            response.headers["Connection"] = "close"
        return response

    @app.after_request
    async def security_headers(response: Response) -> Response:
        headers = response.headers
        headers["X-Request-ID"] = g.get("request_id", "")
        headers["X-Content-Type-Options"] = "nosniff"
        headers["Referrer-Policy"] = "strict-origin-when-cross-origin"
        headers["X-Frame-Options"] = "DENY"
        headers["Permissions-Policy"] = "camera=(), microphone=(), geolocation=()"
        headers.setdefault("Content-Security-Policy", policy)
        if g.get("session") is not None:
            # A signed-in answer shows an account (balances, sites, campaigns): never kept by a browser or proxy,
            # where the next person at the machine, or behind the proxy, could read it back.
            headers["Cache-Control"] = "no-store"
        if settings.production:
            headers["Strict-Transport-Security"] = "max-age=63072000; includeSubDomains"
        return response
