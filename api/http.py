"""What every handler of the web layer (``api/`` and ``portal/``) shares: the running service's parts, the
client's address behind trusted proxies, rate-limit keys, and the headers of public ad routes."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any, TypeVar, cast

from pydantic import BaseModel
from quart import Response, current_app, g, request
from quart_schema import document_querystring, document_request

from adnet.config import Settings
from adnet.core.inputs import Command, parse
from adnet.services import Services

F = TypeVar("F", bound=Callable[..., Any])
PREFLIGHT_MAX_AGE = 86400


def services() -> Services:
    """The running app's services (inside a request or app context, once the app has started)."""
    return cast(Services, current_app.extensions["adnet"])


def app_settings() -> Settings:
    """The settings the app was built with (known before it starts, unlike ``services``)."""
    return cast(Settings, current_app.config["ADNET_SETTINGS"])


def client_ip() -> str:
    """The client's address. ``X-Forwarded-For`` is believed only for the number of proxies configured in
    ``ADNET_TRUSTED_PROXIES``, counted from the right (the hops our own proxies appended); never its first hop.
    Worked out once per request (the rate limiter alone asks three times)."""
    if "client_ip" not in g:
        g.client_ip = _client_ip(app_settings().trusted_proxies)
    return cast(str, g.client_ip)


def _client_ip(trusted: int) -> str:
    remote = request.remote_addr or ""
    if trusted == 0:
        return remote
    hops = [hop.strip() for hop in request.headers.get("X-Forwarded-For", "").split(",") if hop.strip()]
    if len(hops) < trusted:
        return remote
    return hops[-trusted]


async def client_ip_key() -> str:
    """Rate-limit key: the client's address."""
    return client_ip()


async def skip_preflight() -> bool:
    """CORS preflights do not count against a route's rate limit."""
    return request.method == "OPTIONS"


def answer(body: BaseModel, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    """The response that writes ``body``, a response schema, as JSON (what the route documents with quart-schema's
    ``document_response``)."""
    return Response(body.model_dump_json(), status, headers, mimetype="application/json")


def with_body(command: type[Command]) -> Callable[[F], F]:
    """Route decorator: the JSON body parsed into ``command``, passed to the handler as ``data`` (Invalid, naming
    the field, otherwise) and documented in the OpenAPI document. It does what quart-schema's ``validate_request``
    does at a fraction of its cost per request (which builds a pydantic TypeAdapter each time)."""
    def decorate(handler: F) -> F:
        @wraps(handler)
        async def parsed(*args: Any, **kwargs: Any) -> Any:
            return await handler(*args, data=parse(command, await request.get_json()), **kwargs)

        return cast(F, document_request(command)(parsed))

    return decorate


def with_query(command: type[Command]) -> Callable[[F], F]:
    """Route decorator: the query string parsed into ``command``, passed to the handler as ``query_args`` (Invalid,
    naming the parameter, otherwise) and documented as the operation's parameters; a repeated parameter counts
    once, its first value."""
    def decorate(handler: F) -> F:
        @wraps(handler)
        async def parsed(*args: Any, **kwargs: Any) -> Any:
            return await handler(*args, query_args=parse(command, request.args.to_dict()), **kwargs)

        return cast(F, document_querystring(command)(parsed))

    return decorate


def public(view: F) -> F:
    """Marks a route that publishers' pages call (serve, track, answers): its every answer, errors included, is
    readable by any page and never cached (``public_headers``)."""
    setattr(view, "adnet_public", True)  # noqa: B010 - read back by public_headers
    return view


async def public_headers(response: Response) -> Response:
    """After every request: ad decisions and event receipts are never cached, and any page may read them."""
    view = current_app.view_functions.get(request.endpoint or "")
    if getattr(view, "adnet_public", False):
        response.headers["Cache-Control"] = "no-store"
        response.headers.setdefault("Access-Control-Allow-Origin", "*")
    return response
