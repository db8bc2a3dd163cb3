"""Errors as clients see them, decided in one place: every error, whoever raised it, answers ``{"error": code,
"message": sentence, ...details}`` (docs/errors.md), with the status ``web.errors`` gives each kind of domain refusal.

A request that meets a database outage (``adnet.db.outage``) is answered ``503 database_unavailable`` with
``Retry-After``, not as a fault: the outage is logged once by the process's ``DatabaseLink``, not per request.

The handlers are registered on the app (``register``). The portal shows the same refusals as HTML pages with the
same status codes: its own refusals through its blueprints, and those raised before or around its handlers (an
unknown URL, a method a page lacks, a rate limit, a fault) through the ``page`` the app passes here, which answers
for the portal's paths.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from quart import Quart, Response, current_app, g, jsonify, request
from quart_rate_limiter import RateLimitExceeded
from werkzeug.exceptions import HTTPException

from adnet.core.errors import DomainError, Unavailable
from adnet.db.outage import is_outage, unavailable
from adnet.money.models import Claim
from api.schemas import ClaimOut
from web.errors import status_of

log = logging.getLogger(__name__)

# Stable codes for errors Quart raises before a handler runs.
HTTP_CODES = {
    400: "bad_request",
    401: "auth_required",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    413: "payload_too_large",
    415: "unsupported_media_type",
    429: "rate_limited",
}


class RequestRefused(Exception):
    """A request refused by the web layer itself, before any handler (a body too large, not JSON)."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message


def body_of(error: DomainError) -> dict[str, Any]:
    """The JSON body of a domain refusal; a claim among its details (a repeat's earlier one) is written as the
    claim object a wallet redeems."""
    details = {key: ClaimOut.of(value).model_dump() if isinstance(value, Claim) else value
               for key, value in error.details.items()}
    return {"error": error.code, "message": error.message, **details}


# The HTML page of an error for the request's path, or None where the answer is JSON: (status, code, message).
ErrorPage = Callable[[int, str, str], Awaitable[Response | None]]


def register(app: Quart, page: ErrorPage) -> None:
    """Answer every error of the app in the one JSON shape, or as the ``page`` of the request's path."""

    async def refused(status: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> Response:
        response = await page(status, body["error"], body["message"]) or jsonify(body)
        response.status_code = status
        response.headers.update(headers or {})
        return response

    @app.errorhandler(DomainError)
    async def domain_error(error: DomainError) -> Response:
        response = jsonify(body_of(error))
        response.status_code = status_of(error)
        if isinstance(error, Unavailable):
            response.headers["Retry-After"] = str(error.details["retryAfter"])
        return response

    @app.errorhandler(RequestRefused)
    async def request_refused(error: RequestRefused) -> Response:
        return await refused(error.status, {"error": error.code, "message": error.message})

    @app.errorhandler(RateLimitExceeded)
    async def rate_limited(error: RateLimitExceeded) -> Response:
        return await refused(429, {"error": "rate_limited", "message": "Too many requests; slow down.",
                                   "retryAfter": error.retry_after}, {"Retry-After": str(error.retry_after)})

    @app.errorhandler(HTTPException)
    async def http_error(error: HTTPException) -> Response:
        status = error.code or 500
        return await refused(status, {"error": HTTP_CODES.get(status, "http_error"),
                                      "message": error.description or "The request cannot be served."},
                             {name: value for name, value in error.get_headers()
                              if name.lower() not in ("content-type", "content-length")})

    @app.errorhandler(Exception)
    async def internal_error(error: Exception) -> Response:
        if is_outage(error):  # not a fault of this request: said once per outage (adnet.db.outage), not per request
            running = current_app.extensions.get("adnet")
            if running is not None:
                running.database.failed(error)
            refusal = unavailable()
            return await refused(status_of(refusal), body_of(refusal),
                                 {"Retry-After": str(refusal.details["retryAfter"])})
        log.exception("unhandled error request_id=%s path=%s", g.get("request_id", ""), request.path)
        return await refused(500, {"error": "internal_error",
                                   "message": "Something went wrong on our side; the request changed nothing."})
