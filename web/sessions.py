"""The signed-in session of a request, as both surfaces find it: the token ``adnet.accounts.signin`` issued, sent
as ``Authorization: Bearer`` by scripts or as the session cookie by the portal (Secure outside development,
HttpOnly, SameSite=Lax). The API's decorators that require one, or an API key, are ``api.sessions``'; the portal's
sign-in gate is ``portal.pages.require_portal_session``. Both leave what they found in ``g.session``."""

from __future__ import annotations

from typing import cast

from quart import g, request

from adnet.accounts.api_keys import ActiveKey
from adnet.accounts.sessions import ActiveSession, find_session
from web.context import services

SESSION_COOKIE = "adnet_session"


def session_token() -> str | None:
    """The token of the current request: ``Authorization: Bearer`` when present, else the session cookie."""
    header = request.headers.get("Authorization", "")
    if header:
        scheme, _, token = header.partition(" ")
        return token.strip() if scheme.lower() == "bearer" else None
    return request.cookies.get(SESSION_COOKIE)


async def request_session() -> ActiveSession | None:
    """The open session the current request carries, if any (never an API key)."""
    return await find_session(session_token(), services().clock.now())


def current_session() -> ActiveSession:
    """The session the route's decorator found for this request."""
    return cast(ActiveSession, g.session)


def current_wallet() -> str:
    """The signed-in wallet of this request (of its session or its API key)."""
    return cast(ActiveSession | ActiveKey, g.session).wallet
