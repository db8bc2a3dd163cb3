"""The running service as a handler of either surface reaches it, and who sent the current request: the typed
services, the settings the app was built with, and the client's address (behind trusted proxies) and headers.

A handler does not look the services up itself: it declares ``run`` (the running services) and or ``now`` (the
instant the request is handled, read once from their clock), and the route decorator that calls it (``injected``,
or one that also parses the request: ``api.http.with_body``, ``with_query``, ``idempotent``) passes them."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from functools import wraps
from typing import Any, TypeVar, cast

from quart import current_app, request

from adnet.config import Settings
from adnet.delivery.clients import Client
from adnet.delivery.commands import MAX_USER_AGENT_LENGTH
from adnet.services import Services


def services() -> Services:
    """The running app's services (inside a request or app context, once the app has started)."""
    return cast(Services, current_app.extensions["adnet"])


F = TypeVar("F", bound=Callable[..., Awaitable[Any]])
# What a route decorator adds to the keyword arguments it calls a handler with.
Provide = Callable[[dict[str, Any]], None]
RUN, NOW = "run", "now"
# Set on a decorator's wrapper that provides ``run`` and ``now``: a decorator further out leaves them to it.
_PROVIDED = "_adnet_provides_run_now"


def _run(arguments: dict[str, Any]) -> None:
    arguments[RUN] = services()


def _now(arguments: dict[str, Any]) -> None:
    arguments[NOW] = services().clock.now()


def _run_and_now(arguments: dict[str, Any]) -> None:
    arguments[RUN] = run = services()
    arguments[NOW] = run.clock.now()


_PROVIDERS: dict[tuple[bool, bool], Provide | None] = {
    (False, False): None, (True, False): _run, (False, True): _now, (True, True): _run_and_now}


def provider(handler: Callable[..., Any]) -> Provide | None:
    """What a route decorator adds to ``handler``'s arguments: ``run`` and ``now`` where its signature declares
    them, nothing (None) where it declares neither or a decorator nearer to it already provides them. Decided once,
    when the route is decorated, so that a request pays for what its handler takes and no more."""
    if getattr(handler, _PROVIDED, False):
        return None
    declared = inspect.signature(handler).parameters
    return _PROVIDERS[RUN in declared, NOW in declared]


def providing(wrapper: F) -> F:
    """Mark ``wrapper``, a route decorator's wrapper that called ``provider`` for its handler, so that decorators
    stacked above it do not provide again (``functools.wraps`` carries the mark outwards)."""
    setattr(wrapper, _PROVIDED, True)
    return wrapper


def injected(handler: F) -> F:
    """Route decorator for a handler that parses nothing from the request: it gets ``run`` and or ``now`` if it
    declares them (``provider``)."""
    provide = provider(handler)
    if provide is None:
        return handler

    @wraps(handler)
    async def given(*args: Any, **kwargs: Any) -> Any:
        provide(kwargs)
        return await handler(*args, **kwargs)

    return providing(cast(F, given))


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


_CLIENT_HEADERS = frozenset({"user-agent", "origin", "referer"})


def client() -> Client:
    """Who sent this request: its address, its own User-Agent header, the page it comes from, and the country
    header of a trusted proxy (``ADNET_COUNTRY_HEADER``, read only when ``ADNET_TRUSTED_PROXIES`` is set). The first
    of each header counts. They are read in one pass over the headers: each ``headers.get`` scans them all, and
    one that is absent (a page's Referer, a proxy's country) raises and catches an exception."""
    settings = app_settings()
    country_header = settings.country_header.lower() if settings.trusted_proxies else None
    found: dict[str, str] = {}
    for name, value in request.headers.items(lower=True):
        if name in _CLIENT_HEADERS or name == country_header:
            found.setdefault(name, value)
    return Client(ip=client_ip(), user_agent=found.get("user-agent", "")[:MAX_USER_AGENT_LENGTH],
                  origin=found.get("origin"), referer=found.get("referer"),
                  country=found.get(country_header) if country_header else None)
