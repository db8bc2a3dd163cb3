"""Sessions: what a wallet holds once it signed in (``adnet.accounts.signin``), and the rule that a request's wallet
is the session's.

A session is a random token shown to the client once; the database keeps only its SHA-256. It lasts
``SESSION_LIFETIME`` (or until the signed message's expiration, when sooner) and ends early at logout. The same token
works as the portal's cookie and as ``Authorization: Bearer`` for scripts. A session opened by a rewards sign-in
(``SessionScope.REWARDS``) is found only where rewards are listed: every other signed-in route ignores it.
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass
from datetime import datetime, timedelta

from adnet.accounts.models import Session, SessionScope
from adnet.core.errors import Forbidden

log = logging.getLogger(__name__)

SESSION_LIFETIME = timedelta(hours=24)


@dataclass(frozen=True)
class ActiveSession:
    """A valid session found by its token."""

    wallet: str
    expires_at: datetime
    token_hash: str


def token_hash(token: str) -> str:
    """The stored form of a session token (SHA-256, hex)."""
    return hashlib.sha256(token.encode()).hexdigest()


async def find_session(token: str | None, now: datetime,
                       scopes: tuple[SessionScope, ...] = (SessionScope.ACCOUNT,)) -> ActiveSession | None:
    """The open, unexpired session of ``token`` whose scope is one of ``scopes`` (by default, a full account
    session: a rewards session opens nothing else), or None."""
    if not token:
        return None
    digest = token_hash(token)
    session = await Session.get_or_none(token_hash=digest, ended_at=None, expires_at__gt=now, scope__in=scopes)
    if session is None:
        return None
    return ActiveSession(wallet=session.wallet, expires_at=session.expires_at, token_hash=digest)


async def end_session(session: ActiveSession, now: datetime) -> bool:
    """End a session now (logout); returns whether it was still open."""
    ended = await Session.filter(token_hash=session.token_hash, ended_at=None).update(ended_at=now)
    if ended:
        log.info("signed out wallet=%s", session.wallet)
    return bool(ended)


def check_owner(session_wallet: str, named: str, *, field: str = "wallet") -> str:
    """The wallet a request names (in its canonical form, see ``WalletAddress``), which must be the session's:
    Forbidden ``not_owner`` when it is another wallet."""
    if named != session_wallet:
        raise Forbidden("not_owner", "The signed-in wallet is not the wallet this request names.", field=field)
    return named
