"""Wallet sign-in over HTTP: /api/auth/nonce, /verify, /logout and /me (rules in adnet.accounts.signin).

A successful verify answers with the session token and also sets it as a cookie (Secure outside development,
HttpOnly, SameSite=Lax) for the portal; scripts send it back as ``Authorization: Bearer``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from quart import Blueprint, Response
from quart_rate_limiter import rate_limit
from quart_schema import document_response

from adnet.accounts import signin
from adnet.accounts.commands import SignIn
from adnet.accounts.sessions import end_session
from adnet.services import Services
from api.http import answer, with_body
from api.schemas import Address, Schema, Time, refusals
from api.sessions import require_session
from web.context import injected
from web.limits import ACCOUNT_LIMIT, settings_limit
from web.sessions import SESSION_COOKIE, current_session

blueprint = Blueprint("api_auth", __name__, url_prefix="/api")

NO_STORE = {"Cache-Control": "no-store"}


class NonceOut(Schema):
    """A single-use nonce and what the EIP-4361 message must name: ``domain``, a ``uri`` under it, ``chainId``."""

    nonce: str
    chain_id: int
    domain: str
    uri: str
    expires_at: Time


class SessionOut(Schema):
    """The session: send ``token`` as ``Authorization: Bearer`` (the portal uses the cookie set with it)."""

    wallet: Address
    token: str
    expires_at: Time


class SignedOutOut(Schema):
    status: Literal["signed_out"]


class MeOut(Schema):
    wallet: Address
    expires_at: Time


@blueprint.get("/auth/nonce")
@rate_limit(limits=settings_limit("rate_limit_auth"))
@document_response(NonceOut)
@refusals(429)
@injected
async def auth_nonce(run: Services, now: datetime) -> Response:
    """A single-use nonce (10 minutes) and the domain, URI and chain id the SIWE message must carry."""
    grant = await signin.issue_nonce(settings=run.settings, chain_id=run.chain.chain_id,
                                     now=now, rng=run.random)
    return answer(NonceOut.model_validate(grant), 200, NO_STORE)


@blueprint.post("/auth/verify")
@rate_limit(limits=settings_limit("rate_limit_auth"))
@with_body(SignIn)
@document_response(SessionOut)
@refusals(400, 401, 429, 503)
async def auth_verify(data: SignIn, run: Services, now: datetime) -> Response:
    """Check a signed SIWE message and open a session: the token in the body and in the session cookie."""
    signed_in = await signin.sign_in(data, settings=run.settings, chain=run.chain,
                                     now=now, rng=run.random)
    response = answer(SessionOut.model_validate(signed_in), headers=NO_STORE)
    response.set_cookie(SESSION_COOKIE, signed_in.token, expires=signed_in.expires_at, path="/",
                        secure=run.settings.secure_cookies, httponly=True, samesite="Lax")
    return response


@blueprint.post("/auth/logout")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_session
@document_response(SignedOutOut)
@refusals(429)
@injected
async def auth_logout(run: Services, now: datetime) -> Response:
    """End the current session on the server and clear the cookie."""
    await end_session(current_session(), now)
    response = answer(SignedOutOut(status="signed_out"))
    response.delete_cookie(SESSION_COOKIE, path="/", secure=run.settings.secure_cookies, httponly=True,
                           samesite="Lax")
    return response


@blueprint.get("/auth/me")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_session
@document_response(MeOut)
async def auth_me() -> Response:
    """The signed-in wallet and when its session ends."""
    return answer(MeOut.model_validate(current_session()), 200, NO_STORE)
