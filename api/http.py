"""What every handler of the web layer (``api/`` and ``portal/``) shares: the running service's parts, the
client's address behind trusted proxies, rate-limit keys, parsing a request into its command and writing a response
schema, and the one place that opens the public routes to every origin."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import wraps
from typing import Any, TypeVar, cast

from pydantic import BaseModel
from quart import Blueprint, Response, current_app, request
from quart_cors import cors
from quart_schema import document_querystring, document_request

from adnet.config import Settings
from adnet.core.inputs import Command, parse
from adnet.delivery.clients import Client
from adnet.delivery.commands import MAX_USER_AGENT_LENGTH
from adnet.services import Services

F = TypeVar("F", bound=Callable[..., Any])
PREFLIGHT_MAX_AGE = 86400


def services() -> Services:
    """The running app's services (inside a request or app context, once the app has started)."""
    return cast(Services, current_app.extensions["adnet"])


def app_settings() -> Settings:
    """The settings the app was built with (known before it starts, unlike ``services``)."""
    return cast(Settings, current_app.config["ADNET_SETTINGS"])


_CLIENT_IP = "_adnet_client_ip"


def client_ip() -> str:
    """The client's address. ``X-Forwarded-For`` is believed only for the number of proxies configured in
    ``ADNET_TRUSTED_PROXIES``, counted from the right (the hops our own proxies appended); never its first hop.
    Worked out once per request (the rate limiter alone asks three times), and kept on the request."""
    address = getattr(request, _CLIENT_IP, None)
    if address is None:
        address = _client_ip(app_settings().trusted_proxies)
        setattr(request, _CLIENT_IP, address)
    return cast(str, address)


def _client_ip(trusted: int) -> str:
    remote = request.remote_addr or ""
    if trusted == 0:
        return remote
    hops = [hop.strip() for hop in request.headers.get("X-Forwarded-For", "").split(",") if hop.strip()]
    if len(hops) < trusted:
        return remote
    return hops[-trusted]


def client() -> Client:
    """Who sent this request: its address, its own User-Agent header, and the page it comes from."""
    headers = request.headers
    return Client(ip=client_ip(), user_agent=headers.get("User-Agent", "")[:MAX_USER_AGENT_LENGTH],
                  origin=headers.get("Origin"), referer=headers.get("Referer"))


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
    the field, otherwise) and documented in the OpenAPI document. Its media type is checked before (the app's
    ``check_body``): JSON, or JSON sent as text/plain to a public route, as ``navigator.sendBeacon`` sends it.
    It does what quart-schema's ``validate_request`` does at a fraction of its cost per request (which builds a
    pydantic TypeAdapter each time)."""
    def decorate(handler: F) -> F:
        @wraps(handler)
        async def parsed(*args: Any, **kwargs: Any) -> Any:
            return await handler(*args, data=parse(command, await request.get_json(force=True)), **kwargs)

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


PUBLIC = "api_public"
# What a publisher's page may read of a public answer besides its body.
EXPOSED_HEADERS = ("X-Request-ID", "Retry-After")


def public_routes(blueprints: Iterable[Blueprint]) -> Blueprint:
    """The routes publishers' pages call (serve, track, tasks, answers to units), under one parent blueprint that
    opens every answer of theirs, errors and preflights included, to any origin without credentials
    (quart-cors), lets the page read ``X-Request-ID`` and ``Retry-After``, and keeps them out of every cache. Made
    afresh for each app: the blueprints themselves stay as they are defined."""
    parent = Blueprint(PUBLIC, __name__)
    for blueprint in blueprints:
        parent.register_blueprint(blueprint)
    cors(parent, allow_origin="*", allow_methods=["GET", "POST"], allow_headers=["Content-Type"],
         expose_headers=EXPOSED_HEADERS, max_age=PREFLIGHT_MAX_AGE)
    parent.after_request(_no_store)
    return parent


def is_public() -> bool:
    """Whether the current request is for one of the public routes."""
    return PUBLIC in request.blueprints


async def _no_store(response: Response) -> Response:
    response.headers["Cache-Control"] = "no-store"
    return response
