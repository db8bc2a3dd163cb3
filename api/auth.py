"""Wallet sign-in over HTTP: /api/auth/nonce, /verify, /logout and /me (rules in adnet.accounts.signin).

A successful verify answers with the session token and also sets it as a cookie (Secure outside development,
HttpOnly, SameSite=Lax) for the portal; scripts send it back as ``Authorization: Bearer``.
"""

from __future__ import annotations

from datetime import UTC, datetime

from quart import Blueprint, Response, jsonify
from quart_rate_limiter import rate_limit
from quart_schema import validate_request

from adnet.accounts import signin
from adnet.accounts.commands import SignIn
from adnet.accounts.sessions import end_session
from api.http import services
from api.ratelimit import settings_limit
from api.sessions import SESSION_COOKIE, current_session, require_session

blueprint = Blueprint("api_auth", __name__, url_prefix="/api")


def iso(moment: datetime) -> str:
    """An instant as the API shows times: ISO 8601 in UTC with a ``Z``."""
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


@blueprint.get("/auth/nonce")
@rate_limit(limits=settings_limit("rate_limit_auth"))
async def auth_nonce() -> Response:
    """A single-use nonce (10 minutes) and the domain, URI and chain id the SIWE message must carry."""
    run = services()
    grant = await signin.issue_nonce(settings=run.settings, chain_id=run.chain.chain_id,
                                     now=run.clock.now(), rng=run.random)
    response = jsonify({"nonce": grant.nonce, "chainId": grant.chain_id, "domain": grant.domain, "uri": grant.uri,
                        "expiresAt": iso(grant.expires_at)})
    response.headers["Cache-Control"] = "no-store"
    return response


@blueprint.post("/auth/verify")
@rate_limit(limits=settings_limit("rate_limit_auth"))
@validate_request(SignIn)
async def auth_verify(data: SignIn) -> Response:
    """Check a signed SIWE message and open a session: the token in the body and in the session cookie."""
    run = services()
    signed_in = await signin.sign_in(data, settings=run.settings, chain=run.chain,
                                     now=run.clock.now(), rng=run.random)
    response = jsonify({"wallet": signed_in.wallet, "token": signed_in.token, "expiresAt": iso(signed_in.expires_at)})
    response.set_cookie(SESSION_COOKIE, signed_in.token, expires=signed_in.expires_at, path="/",
                        secure=run.settings.secure_cookies, httponly=True, samesite="Lax")
    response.headers["Cache-Control"] = "no-store"
    return response


@blueprint.post("/auth/logout")
@rate_limit(limits=settings_limit("rate_limit_account"))
@require_session
async def auth_logout() -> Response:
    """End the current session on the server and clear the cookie."""
    await end_session(current_session(), services().clock.now())
    response = jsonify({"status": "signed_out"})
    response.delete_cookie(SESSION_COOKIE, path="/", secure=services().settings.secure_cookies, httponly=True,
                           samesite="Lax")
    return response


@blueprint.get("/auth/me")
@rate_limit(limits=settings_limit("rate_limit_account"))
@require_session
async def auth_me() -> Response:
    """The signed-in wallet and when its session ends."""
    session = current_session()
    response = jsonify({"wallet": session.wallet, "expiresAt": iso(session.expires_at)})
    response.headers["Cache-Control"] = "no-store"
    return response
