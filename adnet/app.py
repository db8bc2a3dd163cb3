"""The application factory: every extension, blueprint, error handler and background task is registered here,
and nothing happens at import time."""

from __future__ import annotations

import gc
import logging
import random
import re
import secrets
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from quart import Quart, Response, current_app, g, jsonify, request
from quart.sessions import SecureCookieSessionInterface
from quart_rate_limiter import RateLimitExceeded
from quart_schema import QuartSchema, RequestSchemaValidationError
from werkzeug.exceptions import HTTPException

from adnet import db
from adnet.clock import Clock
from adnet.config import Settings, load_settings
from adnet.errors import ApiError
from adnet.http import client_ip_key, skip_preflight
from adnet.ratelimit import OwnLimitsFirst, settings_limit

if TYPE_CHECKING:
    from itsdangerous import URLSafeTimedSerializer

log = logging.getLogger(__name__)

MAX_BODY_BYTES = 64 * 1024
_REQUEST_ID = re.compile(r"^[A-Za-z0-9._-]{8,64}$")
# Stable codes for errors Quart raises before a handler runs.
_HTTP_CODES = {
    400: "bad_request",
    401: "auth_required",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    413: "payload_too_large",
    415: "unsupported_media_type",
    429: "rate_limited",
}
# Pages that may load their scripts from the documentation CDN; everything else is 'self' only.
_DOCS_PATHS = frozenset({"/docs", "/redocs", "/scalar"})
_CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' https: data:; "
    "media-src 'self' https:; connect-src 'self'; frame-ancestors 'none'; base-uri 'self'; form-action 'self'; "
    "object-src 'none'"
)
_DOCS_CSP = (
    "default-src 'self'; script-src 'self' 'unsafe-inline' https://cdn.jsdelivr.net; "
    "style-src 'self' 'unsafe-inline' https://cdn.jsdelivr.net https://fonts.googleapis.com; "
    "font-src https://fonts.gstatic.com; img-src 'self' https: data:; frame-ancestors 'none'; object-src 'none'"
)


@dataclass
class Runtime:
    """What request handlers and background tasks share: settings, time, randomness and the chain."""

    settings: Settings
    clock: Clock
    random: random.Random
    extras: dict[str, Any] = field(default_factory=dict)


def runtime() -> Runtime:
    """The running app's Runtime (inside a request or app context)."""
    return current_app.extensions["adnet"]


class SessionCookies(SecureCookieSessionInterface):
    """Quart's signed session cookies, with the signing serializer built once per secret instead of on every
    request: Quart builds it before it looks for a cookie, and building one serializes an empty dict to test the
    serializer (about 4 % of the CPU of a request to /api/serve, which has no cookie at all)."""

    def __init__(self) -> None:
        self._serializers: dict[tuple[Any, ...], URLSafeTimedSerializer | None] = {}

    def get_signing_serializer(self, app: Quart) -> URLSafeTimedSerializer | None:
        secrets_in_use = (app.secret_key, *(app.config["SECRET_KEY_FALLBACKS"] or ()))
        if secrets_in_use not in self._serializers:
            self._serializers[secrets_in_use] = super().get_signing_serializer(app)
        return self._serializers[secrets_in_use]


def create_app(
    settings: Settings | None = None, *, clock: Clock | None = None, rng: random.Random | None = None
) -> Quart:
    """Build the adnet application. ``clock`` and ``rng`` are injected by tests for determinism."""
    settings = settings or load_settings()
    app = Quart(__name__, template_folder="../templates", static_folder="../static", static_url_path="/static")
    app.config.update(
        MAX_CONTENT_LENGTH=MAX_BODY_BYTES,
        SECRET_KEY=settings.secret_key,
        SESSION_COOKIE_SECURE=settings.secure_cookies,
        SESSION_COOKIE_HTTPONLY=True,
        SESSION_COOKIE_SAMESITE="Lax",
        JSON_SORT_KEYS=False,
    )
    app.session_interface = SessionCookies()
    app.extensions["adnet"] = Runtime(settings=settings, clock=clock or Clock(), random=rng or random.SystemRandom())
    QuartSchema(
        app,
        info={"title": "adnet", "version": "1", "description": "The adnet advertising network API."},
        openapi_path="/openapi.json",
        swagger_ui_path="/docs",
        redoc_ui_path=None,
        scalar_ui_path=None,
        security_schemes={"session": {"type": "http", "scheme": "bearer"}},
    )
    # Routes without a limit of their own get the public limit per client IP.
    OwnLimitsFirst(app, key_function=client_ip_key, skip_function=skip_preflight,
                   default_limits=settings_limit("rate_limit_public"))

    from adnet.chain import rpc_proxy
    from api import blueprint as api_blueprint
    from api import ops_blueprint
    from portal import blueprint as portal_blueprint

    app.register_blueprint(api_blueprint)
    app.register_blueprint(ops_blueprint)
    app.register_blueprint(portal_blueprint)
    app.register_blueprint(rpc_proxy.blueprint)
    _register_request_hooks(app)
    _register_error_handlers(app)

    @app.before_serving
    async def startup() -> None:
        from adnet import serving, tracking
        from adnet.chain import service as chain_service

        await db.open_database(settings.database_url)
        await chain_service.start(app.extensions["adnet"])
        await serving.start(app.extensions["adnet"])
        await tracking.start(app.extensions["adnet"])

    @app.after_serving
    async def shutdown() -> None:
        from adnet import serving, tracking
        from adnet.chain import service as chain_service

        # The last tracking batch and the fill counters are written before the database closes.
        await tracking.stop(app.extensions["adnet"])
        await serving.stop(app.extensions["adnet"])
        await chain_service.stop(app.extensions["adnet"])
        await db.close_database()

    return app


def create_server_app(settings: Settings | None = None) -> Quart:
    """The app as each ``adnet serve`` worker runs it: ``create_app``, and once it has started, every object loaded
    so far leaves the garbage collector's full collections (``gc.freeze``).

    A worker holds a large heap that lives as long as the process: the modules (web3, eth-account, pydantic's
    schemas, the ORM), the app and the serving index. Python's full collection walks all of it, and under load it
    runs every few seconds; on the benchmark machine each took 110-155 ms, during which no request was answered,
    enough to put a 500-requests/s phase's p99 past 100 ms on its own. Frozen, a full collection took 2-4 ms.
    Frozen objects are still freed when nothing refers to them; only a reference cycle among them would stay."""
    app = create_app(settings)
    app.before_serving(_freeze_heap)  # after create_app's start-up, which loads the serving index
    return app


async def _freeze_heap() -> None:
    gc.collect()
    gc.freeze()


def _register_request_hooks(app: Quart) -> None:
    production = app.extensions["adnet"].settings.production

    @app.before_request
    async def assign_request_id() -> None:
        incoming = request.headers.get("X-Request-ID", "")
        g.request_id = incoming if _REQUEST_ID.match(incoming) else secrets.token_hex(8)

    @app.before_request
    async def check_body() -> None:
        if (request.content_length or 0) > MAX_BODY_BYTES:
            raise ApiError(413, "payload_too_large", f"The body is over {MAX_BODY_BYTES // 1024} KiB.")
        if request.method in ("POST", "PUT", "PATCH") and request.path.startswith("/api/"):
            if request.mimetype != "application/json":
                raise ApiError(415, "unsupported_media_type", "Send the body as application/json.")
            try:
                await request.get_data(as_text=True)
            except UnicodeDecodeError:
                # Quart decodes the body outside its JSON error handling: it would be a 500.
                raise ApiError(400, "bad_request", "The body is not UTF-8 text.") from None

    @app.after_request
    async def security_headers(response: Response) -> Response:
        headers = response.headers
        headers["X-Request-ID"] = g.get("request_id", "")
        headers["X-Content-Type-Options"] = "nosniff"
        headers["Referrer-Policy"] = "strict-origin-when-cross-origin"
        headers["X-Frame-Options"] = "DENY"
        headers["Permissions-Policy"] = "camera=(), microphone=(), geolocation=()"
        headers.setdefault("Content-Security-Policy", _DOCS_CSP if request.path in _DOCS_PATHS else _CSP)
        if production:
            headers["Strict-Transport-Security"] = "max-age=63072000; includeSubDomains"
        return response


def _register_error_handlers(app: Quart) -> None:
    @app.errorhandler(ApiError)
    async def api_error(error: ApiError) -> tuple[Response, int]:
        return jsonify(error.body()), error.status

    @app.errorhandler(RequestSchemaValidationError)
    async def schema_error(error: RequestSchemaValidationError) -> tuple[Response, int]:
        return jsonify(_schema_error_body(error.validation_error)), 400

    @app.errorhandler(RateLimitExceeded)
    async def rate_limited(error: RateLimitExceeded) -> Response:
        response = jsonify({"error": "rate_limited", "message": "Too many requests; slow down.",
                            "retryAfter": error.retry_after})
        response.status_code = 429
        response.headers["Retry-After"] = str(error.retry_after)
        return response

    @app.errorhandler(HTTPException)
    async def http_error(error: HTTPException) -> Response:
        status = error.code or 500
        response = jsonify({"error": _HTTP_CODES.get(status, "http_error"),
                            "message": error.description or "The request cannot be served."})
        response.status_code = status
        for name, value in error.get_headers():
            if name.lower() not in ("content-type", "content-length"):
                response.headers[name] = value
        return response

    @app.errorhandler(Exception)
    async def internal_error(error: Exception) -> tuple[Response, int]:
        log.exception("unhandled error request_id=%s path=%s", g.get("request_id", ""), request.path)
        return jsonify({"error": "internal_error",
                        "message": "Something went wrong on our side; the request changed nothing."}), 500


def _schema_error_body(validation_error: Exception) -> dict[str, Any]:
    """Turn a pydantic validation error into the SPEC body, naming the first offending field."""
    errors = getattr(validation_error, "errors", None)
    details = errors() if callable(errors) else []
    if not details:
        return {"error": "invalid_request", "message": "The request body is not valid JSON of the expected shape."}
    first = details[0]
    location = ".".join(str(part) for part in first.get("loc", ()) if part != "body")
    missing = first.get("type") == "missing"
    message = first.get("msg", "invalid value")
    if isinstance(first.get("ctx", {}).get("error"), ValueError):
        message = str(first["ctx"]["error"])
    return {
        "error": "missing_field" if missing else "invalid_field",
        "message": f"{location or 'body'}: {'this field is required' if missing else message}",
        "field": location or None,
    }
