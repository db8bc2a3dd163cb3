"""Cross-site request forgery protection for the portal: every POST carries a token only our pages know.

The token is an HMAC (the app's secret key) of what identifies the browser to us: the session's stored hash once
signed in, or, before sign-in, a random pre-session cookie the sign-in page sets. A page from another origin can
neither read the token nor compute it, so ``require_csrf`` (on every portal POST) refuses a forged request with
403 ``csrf_failed``. htmx sends the token as the ``X-CSRF-Token`` header (``hx-headers`` on the page's root);
forms also carry it as a hidden ``csrf_token`` field, so they work without JavaScript. Signing in changes the
binding, so a token seen before sign-in is useless after it.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Awaitable, Callable
from functools import wraps
from typing import Any, TypeVar, cast

from quart import Response, g, request

from adnet.core.errors import Forbidden
from web.context import app_settings

F = TypeVar("F", bound=Callable[..., Awaitable[Any]])
HEADER = "X-CSRF-Token"
FIELD = "csrf_token"
PRESESSION_COOKIE = "adnet_presession"
PRESESSION_SECONDS = 3600


def csrf_token() -> str:
    """The token of the current browser ('' when it has neither a session nor a pre-session cookie)."""
    session = g.get("session")
    if session is not None:
        binding = "session:" + session.token_hash
    else:
        presession = g.get("presession") or request.cookies.get(PRESESSION_COOKIE)
        if not presession:
            return ""
        binding = "presession:" + presession
    key = app_settings().secret_key.encode()
    return hmac.new(key, f"adnet/csrf/v1/{binding}".encode(), hashlib.sha256).hexdigest()


def start_presession(response: Response) -> None:
    """Set the pre-session cookie ``ensure_presession`` chose for this browser, if it chose one."""
    fresh = g.get("fresh_presession")
    if fresh:
        response.set_cookie(PRESESSION_COOKIE, fresh, max_age=PRESESSION_SECONDS, path="/portal",
                            secure=app_settings().secure_cookies, httponly=True, samesite="Lax")


def ensure_presession() -> None:
    """Make sure the current browser has a pre-session value (a new one is set by ``start_presession``)."""
    if not request.cookies.get(PRESESSION_COOKIE):
        g.presession = g.fresh_presession = secrets.token_urlsafe(32)


def require_csrf(handler: F) -> F:
    """Route decorator for portal POSTs: 403 ``csrf_failed`` unless the request carries this browser's token
    (header or form field). Put it below the session decorator, which decides the binding."""

    @wraps(handler)
    async def checked(*args: Any, **kwargs: Any) -> Any:
        expected = csrf_token()
        given = request.headers.get(HEADER) or (await request.form).get(FIELD, "")
        if not expected or not hmac.compare_digest(expected.encode(), given.encode()):
            raise Forbidden("csrf_failed", "This form has expired or did not come from adnet; reload the page "
                                               "and try again.")
        return await handler(*args, **kwargs)

    return cast(F, checked)
