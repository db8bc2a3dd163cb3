"""Wallet sign-in (Sign-In with Ethereum, EIP-4361), which opens a session (``adnet.accounts.sessions``).

A wallet proves it is who it says by signing a SIWE message that carries a nonce we issued. The ``siwe`` package
parses the message; ``sign_in`` checks the rest before it opens a session (not ``siwe``'s own ``verify``, which lets
ecrecover's errors escape on a malformed or unrecoverable signature and never asks a contract wallet
asynchronously):

- the message is at most ``MAX_MESSAGE_LENGTH`` characters and parses as EIP-4361;
- its scheme and domain are those of ``settings.public_origin``, and its URI lies under that origin;
- its chain id is the bound chain's;
- it was issued within ``MAX_ISSUED_AT_SKEW`` of now, carries an expiration no later than ``MAX_MESSAGE_LIFETIME``
  after issue, and that expiration has not passed (nor is a ``Not Before`` still ahead);
- the signature is the address's (EIP-191), or the address is a contract that accepts it (EIP-1271, on the chain;
  also a signature ecrecover cannot read, which a contract wallet's need not be): any other string is
  ``invalid_signature`` (``adnet.chain.signatures.check_wallet_signature``);
- the nonce is one we issued, unexpired, and not used: it is consumed by one conditional update, in the same
  database transaction that creates the session, so a message opens at most one session;
- its URI says what the session may do: a message whose URI is ``REWARDS_PATH`` (or under it) opens only a rewards
  session (``SessionScope.REWARDS``), which a publisher's page may hold to list and redeem the viewer's rewards, and
  is refused where an account session is asked for; any other URI opens an account session, and is refused where a
  rewards session is asked for. The scope is thus part of what the wallet signed.

The portal asks the server to write the message for the wallet's address (``sign_in_message``); scripts write
their own from what ``issue_nonce`` says it must carry.
"""

from __future__ import annotations

import logging
import random
import string
import warnings
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

from abnf import GrammarWarning
from eth_utils import to_checksum_address
from tortoise.transactions import in_transaction

from adnet.accounts.commands import SignIn
from adnet.accounts.models import AuthNonce, Session, SessionScope
from adnet.accounts.sessions import SESSION_LIFETIME, token_hash
from adnet.chain.client import ChainClient, ChainUnavailable
from adnet.chain.signatures import check_wallet_signature
from adnet.config import Settings
from adnet.core.errors import Invalid, Unauthorized, chain_unavailable
from adnet.core.wallets import normalize_wallet

with warnings.catch_warnings():
    # siwe's EIP-4361 grammar restates abnf's core rules (ALPHA, LF, ...), and abnf warns about each redefinition when
    # the grammar loads: four lines on the stderr of every command that loads this module, about no fault of ours.
    warnings.simplefilter("ignore", GrammarWarning)
    from siwe import siwe

log = logging.getLogger(__name__)

NONCE_LIFETIME = timedelta(minutes=10)
MAX_ISSUED_AT_SKEW = timedelta(minutes=5)
MAX_MESSAGE_LIFETIME = timedelta(hours=24)
MAX_MESSAGE_LENGTH = 2048
NONCE_LENGTH = 22  # alphanumeric: about 131 bits
TOKEN_BYTES = 32
SIGN_IN_STATEMENT = "Sign in to the adnet portal."
REWARDS_PATH = "/rewards"
REWARDS_STATEMENT = "See and redeem my adnet rewards. This signs in to nothing else."
_NONCE_ALPHABET = string.ascii_letters + string.digits


@dataclass(frozen=True)
class NonceGrant:
    """What the wallet's SIWE message must carry."""

    nonce: str
    chain_id: int
    domain: str
    uri: str
    expires_at: datetime


@dataclass(frozen=True)
class SignedIn:
    """A session just opened: ``token`` is shown once and never stored."""

    wallet: str
    token: str
    expires_at: datetime


async def issue_nonce(*, settings: Settings, chain_id: int, now: datetime, rng: random.Random) -> NonceGrant:
    """Issue a single-use nonce, valid ``NONCE_LIFETIME``, and say what the message must name."""
    nonce = "".join(rng.choice(_NONCE_ALPHABET) for _ in range(NONCE_LENGTH))
    expires_at = now + NONCE_LIFETIME
    await AuthNonce.create(nonce=nonce, created_at=now, expires_at=expires_at)
    origin = urlsplit(settings.public_origin)
    return NonceGrant(nonce=nonce, chain_id=chain_id, domain=origin.netloc, uri=settings.public_origin,
                      expires_at=expires_at)


def sign_in_message(grant: NonceGrant, wallet: str, now: datetime,
                    scope: SessionScope = SessionScope.ACCOUNT) -> str:
    """The EIP-4361 text ``wallet`` signs to open a session of ``scope`` (the portal's, or a rewards session): our
    origin, the bound chain, the nonce just issued, valid for the longest a session may last."""
    origin = urlsplit(grant.uri)
    path, statement = ((REWARDS_PATH, REWARDS_STATEMENT) if scope == SessionScope.REWARDS
                       else ("/portal", SIGN_IN_STATEMENT))
    return siwe.SiweMessage(
        scheme=origin.scheme, domain=grant.domain, address=to_checksum_address(wallet), uri=grant.uri + path,
        version="1", chain_id=grant.chain_id, issued_at=siwe.ISO8601Datetime.from_datetime(now),
        expiration_time=siwe.ISO8601Datetime.from_datetime(now + MAX_MESSAGE_LIFETIME), nonce=grant.nonce,
        statement=statement,
    ).prepare_message()


async def sign_in(request: SignIn, *, settings: Settings, chain: ChainClient, now: datetime,
                  rng: random.Random, scope: SessionScope = SessionScope.ACCOUNT) -> SignedIn:
    """Verify a signed SIWE message and open a session of ``scope`` for its address (the message's URI must be
    of that scope, see the module docstring).

    Raises Invalid ``message_too_long`` / ``invalid_message`` (not an acceptable EIP-4361 message),
    Unauthorized ``wrong_domain`` / ``wrong_uri`` / ``wrong_chain`` / ``expired`` / ``not_yet_valid`` /
    ``invalid_signature`` / ``invalid_nonce``, Unavailable ``chain_unavailable`` (a contract wallet could not be asked).
    Nothing is stored unless the session opens."""
    parsed = _parse(request.message)
    _check_binding(parsed, settings, chain.chain_id, scope)
    issued_at, expires_at = _check_times(parsed, now)
    wallet = await _check_signature(parsed, request.signature, chain)
    session_expires = min(now + SESSION_LIFETIME, expires_at)
    token = rng.randbytes(TOKEN_BYTES).hex()
    async with in_transaction():
        consumed = await AuthNonce.filter(nonce=parsed.nonce, used_at=None, expires_at__gt=now).update(used_at=now)
        if not consumed:
            raise Unauthorized("invalid_nonce", "This nonce was not issued by adnet, has expired or was used; "
                                                 "ask for a new one.", field="message")
        await Session.create(token_hash=token_hash(token), wallet=wallet, scope=scope, created_at=now,
                             expires_at=session_expires)
    log.info("signed in wallet=%s scope=%s issued_at=%s expires_at=%s", wallet, scope.value, issued_at.isoformat(),
             session_expires.isoformat())
    return SignedIn(wallet=wallet, token=token, expires_at=session_expires)


def _parse(message: Any) -> siwe.SiweMessage:
    if not isinstance(message, str):
        raise Invalid("invalid_message", "message is the signed EIP-4361 text.", field="message")
    if len(message) > MAX_MESSAGE_LENGTH:
        raise Invalid("message_too_long", f"A sign-in message is at most {MAX_MESSAGE_LENGTH} characters.",
                      field="message")
    try:
        return siwe.SiweMessage.from_message(message)
    except ValueError as exc:  # pydantic's ValidationError is a ValueError too
        log.info("unparsable sign-in message error=%s", type(exc).__name__)
        raise Invalid("invalid_message", "message is not a Sign-In with Ethereum (EIP-4361) message.",
                      field="message") from None


def _check_binding(parsed: siwe.SiweMessage, settings: Settings, chain_id: int, scope: SessionScope) -> None:
    """Scheme, domain and URI must be our public origin, the URI's path of ``scope``, the chain id the bound
    chain's."""
    origin = urlsplit(settings.public_origin)
    # EIP-4361: a message without a scheme is for https.
    if (parsed.scheme or "https").lower() != origin.scheme or parsed.domain.lower() != origin.netloc.lower():
        raise Unauthorized("wrong_domain", f"The message must be for {settings.public_origin}.", field="message")
    uri = urlsplit(str(parsed.uri))
    if (uri.scheme.lower(), uri.netloc.lower()) != (origin.scheme, origin.netloc.lower()):
        raise Unauthorized("wrong_uri", f"The message's URI must lie under {settings.public_origin}.",
                           field="message")
    for_rewards = uri.path == REWARDS_PATH or uri.path.startswith(REWARDS_PATH + "/")
    if for_rewards and scope != SessionScope.REWARDS:
        raise Unauthorized("wrong_uri", "This message signs in to rewards only (POST /api/rewards/session).",
                           field="message")
    if scope == SessionScope.REWARDS and not for_rewards:
        raise Unauthorized("wrong_uri", f"A rewards sign-in message's URI is {settings.public_origin}{REWARDS_PATH}.",
                           field="message")
    if parsed.chain_id != chain_id:
        raise Unauthorized("wrong_chain", f"The message must be for chain {chain_id}.", field="message")


def _check_times(parsed: siwe.SiweMessage, now: datetime) -> tuple[datetime, datetime]:
    """Issued within the skew of now, with an expiration at most a day after issue that has not passed, and no
    Not Before still ahead; returns the issue and expiration instants."""
    issued_at = _instant(parsed.issued_at, "Issued At")
    not_before = None if parsed.not_before is None else _instant(parsed.not_before, "Not Before")
    if abs(now - issued_at) > MAX_ISSUED_AT_SKEW:
        raise Unauthorized("expired", "The message was not issued within the last 5 minutes; sign a fresh one.",
                           field="message")
    if parsed.expiration_time is None:
        raise Invalid("invalid_message", "The message must carry an Expiration Time.", field="message")
    expires_at = _instant(parsed.expiration_time, "Expiration Time")
    if expires_at - issued_at > MAX_MESSAGE_LIFETIME:
        raise Invalid("invalid_message", "The message's Expiration Time is at most 24 hours after Issued At.",
                      field="message")
    if now >= expires_at:
        raise Unauthorized("expired", "The message has expired; sign a fresh one.", field="message")
    if not_before is not None and now < not_before:
        raise Unauthorized("not_yet_valid", "The message is not valid yet (Not Before).", field="message")
    return issued_at, expires_at


def _instant(value: siwe.ISO8601Datetime, name: str) -> datetime:
    moment = value._datetime
    if moment.tzinfo is None:
        raise Invalid("invalid_message", f"{name} must name its time zone (e.g. Z).", field="message")
    return moment


async def _check_signature(parsed: siwe.SiweMessage, signature: object, chain: ChainClient) -> str:
    """The message's address, once the signature is its own (EOA, or EIP-1271 contract): InvalidSignature for
    anything else (``adnet.chain.signatures.check_wallet_signature``)."""
    try:
        await check_wallet_signature(chain, parsed.address, parsed.prepare_message(), signature)
    except ChainUnavailable:
        raise chain_unavailable("The chain cannot be reached to check a contract wallet") from None
    return normalize_wallet(parsed.address)
