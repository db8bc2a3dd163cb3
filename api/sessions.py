"""Signed-in API routes: the decorators that require a session or an API key, and their OpenAPI security schemes.

Where a request carries its session is ``web.sessions``. An API key (``adnet.accounts.api_keys``) travels as
``Authorization: Bearer`` too; routes that take one say which scope it needs (``require_account``), and every other
signed-in route refuses it (``require_session``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import wraps
from typing import Any, TypeVar, cast

from quart import current_app, g
from quart_schema import security_scheme

from adnet.accounts.api_keys import ActiveKey, find_key, looks_like_key
from adnet.accounts.commands import ApiKeyScope
from adnet.accounts.sessions import ActiveSession, check_owner
from adnet.core.errors import Forbidden, Unauthorized
from api.openapi import BearerScheme, CookieScheme
from api.schemas import refusals
from web.context import services
from web.limits import LIMITER, OwnLimitsFirst
from web.sessions import SESSION_COOKIE, current_wallet, request_session, session_token

F = TypeVar("F", bound=Callable[..., Awaitable[Any]])
# The OpenAPI security schemes of a signed-in route: either carries the session; some routes take an API key.
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
    "apiKey": BearerScheme(
        scheme="bearer", bearer_format="adnet API key (key_….…)",
        description="A long-lived API key made in the portal or with POST /api/keys, limited to its scopes "
                    "(docs/auth.md)."),
}
SESSION_SECURITY: list[dict[str, list[str]]] = [{"session": []}, {"sessionCookie": []}]
NO_SESSION = "Sign in with your wallet first (a session cookie or Authorization: Bearer token)."


def require_session(handler: F) -> F:
    """Route decorator: Unauthorized ``auth_required`` unless the request carries a valid session, which it leaves
    in ``g.session``; a valid API key is Forbidden ``session_required`` (these routes act for the wallet itself).
    Put it above request validation, so an anonymous caller learns nothing. The OpenAPI document shows the route's
    security (the bearer token or the session cookie) and its 401."""

    @wraps(handler)
    async def guarded(*args: Any, **kwargs: Any) -> Any:
        token = session_token()
        if looks_like_key(token) and await find_key(cast(str, token), services().clock.now()) is not None:
            raise Forbidden("session_required", "This route needs the wallet's own sign-in session; an API key "
                                                "cannot be used here.")
        session = await request_session()
        if session is None:
            raise Unauthorized("auth_required", NO_SESSION)
        g.session = session
        return await handler(*args, **kwargs)

    return cast(F, security_scheme(SESSION_SECURITY)(refusals(401, 403)(guarded)))


def require_account(scope: ApiKeyScope) -> Callable[[F], F]:
    """Route decorator for the publisher and advertiser API: a valid session, or an unrevoked API key that holds
    ``scope`` (Forbidden ``scope_denied`` otherwise), left in ``g.session``. A key's requests also count against its
    own limit (``ADNET_RATE_LIMIT_API_KEY``), whatever address they come from. Unauthorized ``auth_required`` without
    either. The OpenAPI document names the scope on the ``apiKey`` scheme."""

    def decorate(handler: F) -> F:
        @wraps(handler)
        async def guarded(*args: Any, **kwargs: Any) -> Any:
            token = session_token()
            caller: ActiveSession | ActiveKey | None
            if looks_like_key(token):
                caller = await find_key(cast(str, token), services().clock.now())
                if caller is not None:
                    await _admit_key(caller, scope)
            else:
                caller = await request_session()
            if caller is None:
                raise Unauthorized("auth_required", NO_SESSION + " An API key must be valid and not revoked.")
            g.session = caller
            return await handler(*args, **kwargs)

        security = [*SESSION_SECURITY, {"apiKey": [scope.value]}]
        return cast(F, security_scheme(security)(refusals(401, 403, 429)(guarded)))

    return decorate


async def _admit_key(key: ActiveKey, scope: ApiKeyScope) -> None:
    if scope not in key.scopes:
        raise Forbidden("scope_denied", f"This API key does not hold the scope {scope.value}.", scope=scope.value)
    limiter = cast(OwnLimitsFirst, current_app.extensions[LIMITER])
    await limiter.admit(key.key_id, "rate_limit_api_key")


def named_wallet(wallet: str) -> str:
    """The wallet a request names, once it is the signed-in one (Forbidden ``not_owner`` otherwise)."""
    return check_owner(current_wallet(), wallet)
