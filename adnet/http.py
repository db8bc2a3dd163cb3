"""Request facts shared by handlers: the client's address behind trusted proxies, and rate-limit keys."""

from __future__ import annotations

from quart import current_app, g, request


def client_ip() -> str:
    """The client's address. ``X-Forwarded-For`` is believed only for the number of proxies configured in
    ``ADNET_TRUSTED_PROXIES``, counted from the right (the hops our own proxies appended); never its first hop.
    Worked out once per request (the rate limiter alone asks three times)."""
    if "client_ip" not in g:
        g.client_ip = _client_ip(current_app.extensions["adnet"].settings.trusted_proxies)
    return g.client_ip


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
