"""The one error type of the domain and the API, with a stable snake_case code.

Handlers and domain functions raise ``ApiError``; ``adnet.app`` maps it, schema failures and HTTP errors to
``{"error": code, "message": sentence, ...extra}`` in one place. The codes are listed in docs/errors.md.
"""

from __future__ import annotations

from typing import Any


class ApiError(Exception):
    """A refusal a client can act on: HTTP status, stable code, one sentence, optional extra keys."""

    def __init__(self, status: int, code: str, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.extra = extra

    def body(self) -> dict[str, Any]:
        return {"error": self.code, "message": self.message, **self.extra}


def bad_request(code: str, message: str, field: str | None = None, **extra: Any) -> ApiError:
    """A 400 naming the offending field when there is one."""
    if field is not None:
        extra["field"] = field
    return ApiError(400, code, message, **extra)


def not_found(what: str) -> ApiError:
    return ApiError(404, "not_found", f"No such {what}.")


def conflict(code: str, message: str, **extra: Any) -> ApiError:
    return ApiError(409, code, message, **extra)
