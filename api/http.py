"""What the JSON API's handlers share: parsing a request's body, query string or idempotency key into what the
handler takes (with the running services and the request's instant, ``run`` and ``now``, to a handler that declares
them: ``web.context.provider``), writing a response schema, and the one place that opens the public routes to every
origin. What the portal shares with them is in ``web``."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterable
from functools import wraps
from typing import Any, TypeVar, cast

from pydantic import BaseModel, Field
from quart import Blueprint, Response, request
from quart_schema import document_headers, document_querystring, document_request
from werkzeug.exceptions import RequestTimeout

from adnet.core.inputs import Command, parse
from api.errors import RequestRefused
from web.context import provider, providing
from web.idempotency import IDEMPOTENCY_HEADER, checked_idempotency_key

F = TypeVar("F", bound=Callable[..., Any])
PREFLIGHT_MAX_AGE = 86400


def answer(body: BaseModel, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    """The response that writes ``body``, a response schema, as JSON (what the route documents with quart-schema's
    ``document_response``)."""
    return Response(body.model_dump_json(), status, headers, mimetype="application/json")


def with_body(command: type[Command]) -> Callable[[F], F]:
    """Route decorator: the JSON body parsed into ``command``, passed to the handler as ``data`` (Invalid, naming
    the field, otherwise) with ``run`` and ``now`` where it declares them (``web.context.provider``), and
    documented in the OpenAPI document. Its media type is checked before (the app's ``check_body``): JSON, or JSON
    sent as text/plain to a public route, as ``navigator.sendBeacon`` sends it. It does what quart-schema's
    ``validate_request`` does at a fraction of its cost per request (which builds a pydantic TypeAdapter each
    time)."""
    def decorate(handler: F) -> F:
        provide = provider(handler)

        @wraps(handler)
        async def parsed(*args: Any, **kwargs: Any) -> Any:
            kwargs["data"] = parse(command, await json_body())
            if provide is not None:
                provide(kwargs)
            return await handler(*args, **kwargs)

        return cast(F, document_request(command)(providing(parsed)))

    return decorate


async def json_body() -> Any:
    """The request's body as JSON, read and decoded once; a body that is not UTF-8 or not JSON is a 400 that names
    which (Quart's own reading would answer 500 for the first). A body still arriving is awaited under
    ``asyncio.timeout`` (408 past ``BODY_TIMEOUT``), as Quart's ``get_data`` does under ``asyncio.wait_for``, which
    on Python 3.11 starts a task per request. adnet's bodies are small and have nearly always arrived whole by the
    time a handler reads them; those are read without arming a timer, which cost a tracked event about 3 % of its
    CPU. Whether the body has arrived is Quart's private ``Body._complete`` event (``tests/api/test_http.py`` fails,
    naming it, if an upgrade removes it)."""
    body = request.body
    if body._complete.is_set():
        raw = await body
    else:
        try:
            async with asyncio.timeout(request.body_timeout):
                raw = await body
        except TimeoutError:
            raise RequestTimeout() from None
    try:
        return json.loads(raw.decode())
    except UnicodeDecodeError:
        raise RequestRefused(400, "bad_request", "The body is not UTF-8 text.") from None
    except ValueError:
        raise RequestRefused(400, "bad_request", "The body is not valid JSON.") from None


class IdempotencyHeaders(BaseModel):
    """The header that makes a POST safe to retry (docs/publishers.md, "Withdrawals that cannot be lost")."""

    idempotency_key: str | None = Field(
        None, alias="Idempotency-Key", min_length=1, max_length=255,
        description="1 to 255 visible ASCII characters, new for each withdrawal (a UUID): a retry with the same key "
                    "and body answers with the first request's withdrawal and claim (200, Idempotent-Replayed: "
                    "true); with another body, 409 idempotency_key_reused")


def idempotent(handler: F) -> F:
    """Route decorator: the request's optional ``Idempotency-Key`` header, passed to the handler as
    ``idempotency_key`` (None without one; Invalid ``invalid_idempotency_key`` when it is not 1 to 255 visible
    ASCII characters), with ``run`` and ``now`` where it declares them, and documented as a header parameter."""
    provide = provider(handler)

    @wraps(handler)
    async def keyed(*args: Any, **kwargs: Any) -> Any:
        kwargs["idempotency_key"] = checked_idempotency_key(request.headers.get(IDEMPOTENCY_HEADER))
        if provide is not None:
            provide(kwargs)
        return await handler(*args, **kwargs)

    return cast(F, document_headers(IdempotencyHeaders)(providing(keyed)))


# The header of an answer given again to a retry with the same Idempotency-Key.
REPLAYED = {"Idempotent-Replayed": "true"}


def with_query(command: type[Command]) -> Callable[[F], F]:
    """Route decorator: the query string parsed into ``command``, passed to the handler as ``query_args`` (Invalid,
    naming the parameter, otherwise) with ``run`` and ``now`` where it declares them, and documented as the
    operation's parameters; a repeated parameter counts once, its first value."""
    def decorate(handler: F) -> F:
        provide = provider(handler)

        @wraps(handler)
        async def parsed(*args: Any, **kwargs: Any) -> Any:
            kwargs["query_args"] = parse(command, query_values())
            if provide is not None:
                provide(kwargs)
            return await handler(*args, **kwargs)

        return cast(F, document_querystring(command)(providing(parsed)))

    return decorate


def query_values() -> dict[str, str]:
    """The request's query parameters, the first value of each. A query string of plain ASCII with no escape (no
    ``%``, no ``+``), what a page's embed sends to ``/api/serve``, reads the same split as it stands; werkzeug's
    ``request.args`` reads any other (through urllib's ``parse_qsl`` into a MultiDict, at several times the
    cost)."""
    raw = request.query_string
    if not raw.isascii() or b"%" in raw or b"+" in raw:
        return request.args.to_dict()
    values: dict[str, str] = {}
    for pair in raw.decode("ascii").split("&"):
        if pair:
            name, _, value = pair.partition("=")
            values.setdefault(name, value)
    return values


PUBLIC = "api_public"
# What a publisher's page may read of a public answer besides its body.
EXPOSED_HEADERS = ("X-Request-ID", "Retry-After")


def public_routes(blueprints: Iterable[Blueprint]) -> Blueprint:
    """The routes publishers' pages call (serve, track, tasks, answers to units), under one parent blueprint whose
    answers, errors and preflights included, are open to any origin without credentials, let the page read
    ``X-Request-ID`` and ``Retry-After``, and stay out of every cache (``Cache-Control: no-store``, which their
    handlers leave to this). Made afresh for each app: the blueprints themselves stay as they are defined.

    The headers are fixed, so they are written here rather than by quart-cors, which works out its configuration
    again on every answer: that was 6 % of the CPU of a request to /api/track."""
    parent = Blueprint(PUBLIC, __name__)
    for blueprint in blueprints:
        parent.register_blueprint(blueprint)
    parent.after_request(_open_to_every_page)
    return parent


_OPEN = {"Access-Control-Allow-Origin": "*", "Access-Control-Expose-Headers": ", ".join(EXPOSED_HEADERS),
         "Cache-Control": "no-store"}
# A preflight (an OPTIONS request naming the method it asks for) learns what the page may send: JSON, and the
# rewards session's bearer token (never a cookie: these answers allow no credentials).
_PREFLIGHT = {"Access-Control-Allow-Methods": "GET, POST",
              "Access-Control-Allow-Headers": "Content-Type, Authorization",
              "Access-Control-Max-Age": str(PREFLIGHT_MAX_AGE)}


async def _open_to_every_page(response: Response) -> Response:
    # Added, not set: no public handler writes these headers itself, and setting one scans every header first.
    response.headers.extend(_OPEN)
    if request.method == "OPTIONS" and "Access-Control-Request-Method" in request.headers:
        response.headers.extend(_PREFLIGHT)
    return response


def is_public() -> bool:
    """Whether the current request is for one of the public routes."""
    return PUBLIC in request.blueprints
