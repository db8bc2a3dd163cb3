"""Signed-in requests: where a request carries its session token, and the decorator that requires one.

The token is the one ``adnet.accounts.signin`` issued: ``Authorization: Bearer`` for scripts, the session cookie
for the portal (Secure outside development, HttpOnly, SameSite=Lax).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import wraps
from typing import Any, TypeVar, cast

from quart import g, request
from quart_schema import security_scheme

from adnet.accounts.sessions import ActiveSession, check_owner, find_session
from adnet.core.errors import Unauthorized
from api.http import services
from api.openapi import BearerScheme, CookieScheme
from api.schemas import refusals

F = TypeVar("F", bound=Callable[..., Awaitable[Any]])
SESSION_COOKIE = "adnet_session"
# The OpenAPI security schemes of a signed-in route: either carries the session.
SECURITY_SCHEMES: dict[str, Any] = {
    "session": BearerScheme(
        scheme="bearer", description="The session token POST /api/auth/verify returns after Sign-In with Ethereum "
                                     "(24 hours at most), for scripts."),
    "sessionCookie": CookieScheme(
        name=SESSION_COOKIE, in_="cookie",
        description="The same session as the portal's cookie (HttpOnly, SameSite=Lax). Other sites cannot ride on "
                    "it: every POST, PUT and PATCH under /api/ must be application/json, which a browser sends "
                    "cross-origin only after a CORS preflight these routes do not grant (portal forms carry a CSRF "
                    "token instead, docs/auth.md)."),
}
SESSION_SECURITY: list[dict[str, list[str]]] = [{"session": []}, {"sessionCookie": []}]


def session_token() -> str | None:
    """The session token of the current request: ``Authorization: Bearer`` when present, else the cookie."""
    header = request.headers.get("Authorization", "")
    if header:
        scheme, _, token = header.partition(" ")
        return token.strip() if scheme.lower() == "bearer" else None
    return request.cookies.get(SESSION_COOKIE)


async def request_session() -> ActiveSession | None:
    """The open session the current request carries, if any."""
    return await find_session(session_token(), services().clock.now())


def require_session(handler: F) -> F:
    """Route decorator: Unauthorized ``auth_required`` unless the request carries a valid session, which it leaves
    in ``g.session``. Put it above request validation, so an anonymous caller learns nothing. The OpenAPI document
    shows the route's security (the bearer token or the session cookie) and its 401."""

    @wraps(handler)
    async def guarded(*args: Any, **kwargs: Any) -> Any:
        session = await request_session()
        if session is None:
            raise Unauthorized("auth_required", "Sign in with your wallet first (a session cookie or "
                                                "Authorization: Bearer token).")
        g.session = session
        return await handler(*args, **kwargs)

    return cast(F, security_scheme(SESSION_SECURITY)(refusals(401)(guarded)))


def current_session() -> ActiveSession:
    """The session ``require_session`` found for this request."""
    return cast(ActiveSession, g.session)


def current_wallet() -> str:
    """The signed-in wallet of this request."""
    return current_session().wallet


def named_wallet(wallet: str) -> str:
    """The wallet a request names, once it is the signed-in one (Forbidden ``not_owner`` otherwise)."""
    return check_owner(current_wallet(), wallet)
