"""Signing in to the portal with a wallet (SIWE) and signing out; the rules are ``adnet.accounts.signin``'s.

The sign-in page asks the browser's EIP-1193 wallet for its address (``static/portal.js``), the server writes the
EIP-4361 message for that address with a fresh nonce (``POST /portal/signin/message``), the wallet signs it, and a
plain form POST (``/portal/signin``) opens the session: the session cookie (HttpOnly, SameSite=Lax, Secure outside
development) and a 303 to where the publisher was going. Both POSTs carry the pre-session CSRF token, so no other
site can sign a browser in to a wallet of its choosing.
"""

from __future__ import annotations

from datetime import datetime

from quart import Response, jsonify, render_template, request, url_for
from quart_rate_limiter import rate_limit
from quart_schema import hide

from adnet.accounts.commands import SignIn, SignInAddress
from adnet.accounts.sessions import end_session
from adnet.accounts.signin import SignedIn, issue_nonce, sign_in, sign_in_message
from adnet.core.errors import DomainError
from adnet.services import Services
from portal.csrf import ensure_presession, require_csrf, start_presession
from portal.forms import command_of
from portal.pages import account_form, portal_blueprint, safe_next, see_other
from portal.views import Sent, form_view
from web.context import injected
from web.errors import status_of
from web.limits import ACCOUNT_LIMIT, settings_limit
from web.sessions import SESSION_COOKIE, current_session

blueprint = portal_blueprint("auth")

AUTH_LIMIT = settings_limit("rate_limit_auth")


def _session_cookie(response: Response, signed_in: SignedIn, sent: Sent) -> None:
    # A lifetime rather than an instant: the browser's clock need not agree with ours.
    lifetime = int((signed_in.expires_at - sent.now).total_seconds())
    response.set_cookie(SESSION_COOKIE, signed_in.token, max_age=lifetime, path="/",
                        secure=sent.run.settings.secure_cookies, httponly=True, samesite="Lax")


@blueprint.get("/portal/signin")
@rate_limit(limits=ACCOUNT_LIMIT)
@hide
@injected
async def signin_page(run: Services) -> Response:
    """The sign-in page: connect a wallet, sign the message, land on the dashboard (or ``next``)."""
    return await _signin_page(run, safe_next(request.args.get("next")))


async def _signin_page(run: Services, next_path: str, error: DomainError | None = None) -> Response:
    ensure_presession()
    response = Response(await render_template("portal/signin.html", chain_id=run.chain.chain_id,
                                              next_path=next_path, error=error), status_of(error) if error else 200)
    start_presession(response)
    response.headers["Cache-Control"] = "no-store"
    return response


@blueprint.post("/portal/signin/message")
@rate_limit(limits=AUTH_LIMIT)
@hide
@require_csrf
@injected
async def signin_message(run: Services, now: datetime) -> Response:
    """The EIP-4361 message the wallet named in ``address`` signs, with a nonce issued just now."""
    grant = await issue_nonce(settings=run.settings, chain_id=run.chain.chain_id, now=now,
                                   rng=run.random)
    message = sign_in_message(grant, command_of(SignInAddress, await request.form).address, now)
    response = jsonify({"message": message})
    response.headers["Cache-Control"] = "no-store"
    return response


async def _signin_refused(error: DomainError, sent: Sent) -> Response:
    return await _signin_page(sent.run, safe_next(sent.form.get("next")), error)


@blueprint.post("/portal/signin")
@rate_limit(limits=AUTH_LIMIT)
@hide
@require_csrf
@form_view(_signin_refused)
async def signin(sent: Sent) -> Response:
    """Check the signed message (``adnet.accounts.signin.sign_in``), open the session and go to ``next``; a refusal
    shows the sign-in page again with its reason."""
    run = sent.run
    signed_in = await sign_in(sent.command(SignIn), settings=run.settings, chain=run.chain, now=sent.now,
                              rng=run.random)
    response = see_other(safe_next(sent.form.get("next")))
    _session_cookie(response, signed_in, sent)
    return response


@blueprint.post("/portal/signout")
@account_form
@form_view()
async def signout(sent: Sent) -> Response:
    """End the session on the server, clear the cookie, and go back to the sign-in page."""
    await end_session(current_session(), sent.now)
    response = see_other(url_for("portal_auth.signin_page"))
    response.delete_cookie(SESSION_COOKIE, path="/", secure=sent.run.settings.secure_cookies,
                           httponly=True, samesite="Lax")
    return response
