"""Errors as clients see them, decided in one place: each kind of domain refusal has its status code, and every
error, whoever raised it, answers ``{"error": code, "message": sentence, ...details}`` (docs/errors.md).

The JSON handlers are registered on the app (``register``); the portal shows the same refusals as HTML pages with
the same status codes (``status_of``).
"""

from __future__ import annotations

import logging
from typing import Any

from quart import Quart, Response, g, jsonify, request
from quart_rate_limiter import RateLimitExceeded
from werkzeug.exceptions import HTTPException

from adnet.core.errors import Conflict, DomainError, Forbidden, Invalid, NotFound, Unauthorized, Unavailable
from adnet.money.models import Claim
from api.schemas import ClaimOut

log = logging.getLogger(__name__)

STATUS_OF = {Invalid: 400, Unauthorized: 401, Forbidden: 403, NotFound: 404, Conflict: 409, Unavailable: 503}
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


def status_of(error: DomainError) -> int:
    """The HTTP status of a domain refusal."""
    return next(status for kind, status in STATUS_OF.items() if isinstance(error, kind))


def body_of(error: DomainError) -> dict[str, Any]:
    """The JSON body of a domain refusal; a claim among its details (a repeat's earlier one) is written as the
    claim object a wallet redeems."""
    details = {key: ClaimOut.of(value).model_dump() if isinstance(value, Claim) else value
               for key, value in error.details.items()}
    return {"error": error.code, "message": error.message, **details}


def register(app: Quart) -> None:
    """Answer every error of the app in the one JSON shape."""

    @app.errorhandler(DomainError)
    async def domain_error(error: DomainError) -> Response:
        response = jsonify(body_of(error))
        response.status_code = status_of(error)
        if isinstance(error, Unavailable):
            response.headers["Retry-After"] = str(error.details["retryAfter"])
        return response

    @app.errorhandler(RequestRefused)
    async def request_refused(error: RequestRefused) -> tuple[Response, int]:
        return jsonify({"error": error.code, "message": error.message}), error.status

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
        response = jsonify({"error": HTTP_CODES.get(status, "http_error"),
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
