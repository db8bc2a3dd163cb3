"""API keys: a wallet's long-lived credentials for scripts, in place of a sign-in session that lasts 24 hours.

A key acts as the wallet that issued it, only within its scopes (``ApiKeyScope``), until the wallet revokes it.
Its token, ``<key id>.<secret>`` with 256 random bits of secret, is shown once when it is issued; the database
keeps only the SHA-256 of the whole token. A request's key is found by its id, then its hash is compared in
constant time, so neither a lookup nor a comparison tells a guesser how close it came. Issuing and revoking need a
signed-in wallet (a key never makes or revokes keys); a revoked key is refused on its next request.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import random
from dataclasses import dataclass
from datetime import datetime, timedelta

from adnet.accounts.commands import ApiKeyScope, NewApiKey
from adnet.accounts.models import ApiKey
from adnet.core.errors import Forbidden, NotFound
from adnet.core.ids import has_prefix, new_id

log = logging.getLogger(__name__)

SECRET_BYTES = 32
# How stale ``last_used_at`` may be: it is written at most once a minute per key, not on every request.
LAST_USED_RESOLUTION = timedelta(minutes=1)


@dataclass(frozen=True)
class IssuedKey:
    """A key just issued, with the token that is never shown again."""

    key: ApiKey
    token: str


@dataclass(frozen=True)
class ActiveKey:
    """A valid, unrevoked key found by its token: the wallet it acts as and what it may do."""

    key_id: str
    wallet: str
    scopes: frozenset[ApiKeyScope]


def scopes_of(key: ApiKey) -> list[ApiKeyScope]:
    """The key's scopes, in the order ``ApiKeyScope`` lists them."""
    held = set(key.scopes.split())
    return [scope for scope in ApiKeyScope if scope.value in held]


def looks_like_key(token: str | None) -> bool:
    """Whether a bearer token is written as an API key's (``key_…``) rather than a session's (hex)."""
    return token is not None and token.startswith("key_") and "." in token


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


async def issue_key(wallet: str, command: NewApiKey, now: datetime, rng: random.Random) -> IssuedKey:
    """Issue a key for ``wallet`` (proven by its session) with the command's name and scopes."""
    key_id = new_id("key")
    token = f"{key_id}.{rng.randbytes(SECRET_BYTES).hex()}"
    key = await ApiKey.create(id=key_id, wallet=wallet, name=command.name,
                              scopes=" ".join(scope.value for scope in ApiKeyScope if scope in command.scopes),
                              secret_hash=_digest(token), created_at=now)
    log.info("api key issued key=%s wallet=%s scopes=%s", key.id, wallet, key.scopes)
    return IssuedKey(key, token)


async def wallet_keys(wallet: str) -> list[ApiKey]:
    """The wallet's keys, revoked ones included, newest first."""
    return await ApiKey.filter(wallet=wallet).order_by("-created_at", "id")


async def revoke_key(wallet: str, key_id: str, now: datetime) -> ApiKey:
    """Revoke the wallet's key ``key_id`` (NotFound for no such key, Forbidden ``not_owner`` for another wallet's).
    Revoking a revoked key changes nothing and answers it as it is."""
    key = await ApiKey.get_or_none(id=key_id) if has_prefix(key_id, "key") else None
    if key is None:
        raise NotFound.of("API key")
    if key.wallet != wallet:
        raise Forbidden("not_owner", "This API key belongs to another wallet.", field="keyId")
    if await ApiKey.filter(id=key_id, revoked_at=None).update(revoked_at=now):
        log.info("api key revoked key=%s wallet=%s", key_id, wallet)
    return await ApiKey.get(id=key_id)


async def find_key(token: str, now: datetime) -> ActiveKey | None:
    """The unrevoked key whose token is ``token``, or None; notes when it was used (to the minute)."""
    key_id, _, secret = token.partition(".")
    if not secret or not has_prefix(key_id, "key"):
        return None
    key = await ApiKey.get_or_none(id=key_id, revoked_at=None)
    if key is None or not hmac.compare_digest(key.secret_hash, _digest(token)):
        return None
    if key.last_used_at is None or key.last_used_at <= now - LAST_USED_RESOLUTION:
        await ApiKey.filter(id=key.id).update(last_used_at=now)
    return ActiveKey(key_id=key.id, wallet=key.wallet, scopes=frozenset(scopes_of(key)))
