"""Wallet sign-in (Sign-In with Ethereum, EIP-4361) and the sessions it opens.

A wallet proves it is who it says by signing a SIWE message that carries a nonce we issued. The ``siwe`` package
parses the message and checks its signature, domain, scheme and time window; it leaves the rest to its caller, so
``sign_in`` checks, before it opens a session:

- the message is at most ``MAX_MESSAGE_LENGTH`` characters and parses as EIP-4361;
- its scheme and domain are those of ``settings.public_origin``, and its URI lies under that origin;
- its chain id is the bound chain's;
- it was issued within ``MAX_ISSUED_AT_SKEW`` of now, carries an expiration no later than ``MAX_MESSAGE_LIFETIME``
  after issue, and that expiration has not passed (nor is a ``Not Before`` still ahead);
- the signature is the address's (EIP-191), or the address is a contract that accepts it (EIP-1271, on the chain);
- the nonce is one we issued, unexpired, and not used: it is consumed by one conditional update, in the same
  database transaction that creates the session, so a message opens at most one session.

A session is a random token shown to the client once; the database keeps only its SHA-256. It lasts 24 hours (or
until the message's expiration, when sooner) and ends early at logout. The same token works as the portal's
cookie and as ``Authorization: Bearer`` for scripts.

Everything above is free of HTTP. The end of this module holds the two request-facing helpers handlers share:
``session_token`` (find the token in a request) and ``require_session`` (a route decorator: 401 without a valid
session), plus ``require_wallet``, the rule that the wallet a request names must be the session's (403).
"""

from __future__ import annotations

import hashlib
import logging
import random
import string
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import wraps
from typing import Any, TypeVar, cast
from urllib.parse import urlsplit

import aiohttp
from eth_account.messages import defunct_hash_message
from eth_utils import to_checksum_address
from quart import g, request
from siwe import siwe
from tortoise.transactions import in_transaction
from web3.exceptions import BadFunctionCallOutput, ContractLogicError, Web3Exception

from adnet.app import runtime
from adnet.chain.client import ChainClient, ChainUnavailable
from adnet.config import Settings
from adnet.errors import ApiError, bad_request
from adnet.models import AuthNonce, Session
from adnet.wallets import InvalidWallet, normalize_wallet

log = logging.getLogger(__name__)

NONCE_LIFETIME = timedelta(minutes=10)
SESSION_LIFETIME = timedelta(hours=24)
MAX_ISSUED_AT_SKEW = timedelta(minutes=5)
MAX_MESSAGE_LIFETIME = timedelta(hours=24)
MAX_MESSAGE_LENGTH = 2048
SESSION_COOKIE = "adnet_session"
NONCE_LENGTH = 22  # alphanumeric: about 131 bits
TOKEN_BYTES = 32
EIP1271_MAGIC_VALUE = bytes.fromhex("1626ba7e")
_NONCE_ALPHABET = string.ascii_letters + string.digits
_EIP1271_ABI = [{
    "inputs": [{"name": "hash", "type": "bytes32"}, {"name": "signature", "type": "bytes"}],
    "name": "isValidSignature",
    "outputs": [{"name": "", "type": "bytes4"}],
    "stateMutability": "view",
    "type": "function",
}]

F = TypeVar("F", bound=Callable[..., Awaitable[Any]])


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


@dataclass(frozen=True)
class ActiveSession:
    """A valid session found by its token."""

    wallet: str
    expires_at: datetime
    token_hash: str


def token_hash(token: str) -> str:
    """The stored form of a session token (SHA-256, hex)."""
    return hashlib.sha256(token.encode()).hexdigest()


async def issue_nonce(*, settings: Settings, chain_id: int, now: datetime, rng: random.Random) -> NonceGrant:
    """Issue a single-use nonce, valid ``NONCE_LIFETIME``, and say what the message must name."""
    nonce = "".join(rng.choice(_NONCE_ALPHABET) for _ in range(NONCE_LENGTH))
    expires_at = now + NONCE_LIFETIME
    await AuthNonce.create(nonce=nonce, created_at=now, expires_at=expires_at)
    origin = urlsplit(settings.public_origin)
    return NonceGrant(nonce=nonce, chain_id=chain_id, domain=origin.netloc, uri=settings.public_origin,
                      expires_at=expires_at)


async def sign_in(message: str, signature: str, *, settings: Settings, chain: ChainClient, now: datetime,
                  rng: random.Random) -> SignedIn:
    """Verify a signed SIWE message and open a session for its address.

    Raises ApiError: 400 ``message_too_long`` / ``invalid_message`` (not an acceptable EIP-4361 message),
    401 ``wrong_domain`` / ``wrong_uri`` / ``wrong_chain`` / ``expired`` / ``not_yet_valid`` /
    ``invalid_signature`` / ``invalid_nonce``, 503 ``chain_unavailable`` (a contract wallet could not be asked).
    Nothing is stored unless the session opens."""
    parsed = _parse(message)
    _check_binding(parsed, settings, chain.chain_id)
    issued_at, expires_at = _check_times(parsed, now)
    wallet = await _check_signature(parsed, signature, chain, now)
    session_expires = min(now + SESSION_LIFETIME, expires_at)
    token = rng.randbytes(TOKEN_BYTES).hex()
    async with in_transaction():
        consumed = await AuthNonce.filter(nonce=parsed.nonce, used_at=None, expires_at__gt=now).update(used_at=now)
        if not consumed:
            raise ApiError(401, "invalid_nonce", "This nonce was not issued by adnet, has expired or was used; "
                                                 "ask for a new one.", field="message")
        await Session.create(token_hash=token_hash(token), wallet=wallet, created_at=now, expires_at=session_expires)
    log.info("signed in wallet=%s issued_at=%s expires_at=%s", wallet, issued_at.isoformat(),
             session_expires.isoformat())
    return SignedIn(wallet=wallet, token=token, expires_at=session_expires)


async def find_session(token: str | None, now: datetime) -> ActiveSession | None:
    """The open, unexpired session of ``token``, or None."""
    if not token:
        return None
    digest = token_hash(token)
    session = await Session.get_or_none(token_hash=digest, ended_at=None, expires_at__gt=now)
    if session is None:
        return None
    return ActiveSession(wallet=session.wallet, expires_at=session.expires_at, token_hash=digest)


async def end_session(session: ActiveSession, now: datetime) -> bool:
    """End a session now (logout); returns whether it was still open."""
    ended = await Session.filter(token_hash=session.token_hash, ended_at=None).update(ended_at=now)
    if ended:
        log.info("signed out wallet=%s", session.wallet)
    return bool(ended)


def check_owner(session_wallet: str, wallet: Any, *, field: str = "wallet") -> str:
    """The canonical form of the ``wallet`` a request names, which must be the session's: 400 ``invalid_wallet``
    when it is no address, 403 ``not_owner`` when it is another wallet."""
    try:
        named = normalize_wallet(wallet)
    except InvalidWallet as exc:
        raise bad_request("invalid_wallet", str(exc), field=field) from None
    if named != session_wallet:
        raise ApiError(403, "not_owner", "The signed-in wallet is not the wallet this request names.", field=field)
    return named


async def wallet_signed(chain: ChainClient, wallet: str, signable_hash: bytes, signature: str) -> bool:
    """Whether the contract at ``wallet`` accepts ``signature`` over ``signable_hash`` (EIP-1271). False for an
    address without code or a contract that refuses; ChainUnavailable when the chain cannot be asked."""
    address = to_checksum_address(wallet)
    try:
        if not await chain.w3.eth.get_code(address):
            return False
        contract = chain.w3.eth.contract(address=address, abi=_EIP1271_ABI)
        answer = await contract.functions.isValidSignature(signable_hash, bytes.fromhex(signature[2:])).call()
    except (aiohttp.ClientError, OSError, TimeoutError) as exc:
        raise ChainUnavailable(f"the chain's node does not answer: {type(exc).__name__}") from exc
    except (BadFunctionCallOutput, ContractLogicError, Web3Exception, ValueError):
        return False
    return bytes(answer) == EIP1271_MAGIC_VALUE


def _parse(message: Any) -> siwe.SiweMessage:
    if not isinstance(message, str):
        raise bad_request("invalid_message", "message is the signed EIP-4361 text.", field="message")
    if len(message) > MAX_MESSAGE_LENGTH:
        raise bad_request("message_too_long", f"A sign-in message is at most {MAX_MESSAGE_LENGTH} characters.",
                          field="message")
    try:
        return siwe.SiweMessage.from_message(message)
    except ValueError as exc:  # pydantic's ValidationError is a ValueError too
        log.info("unparsable sign-in message error=%s", type(exc).__name__)
        raise bad_request("invalid_message", "message is not a Sign-In with Ethereum (EIP-4361) message.",
                          field="message") from None


def _check_binding(parsed: siwe.SiweMessage, settings: Settings, chain_id: int) -> None:
    """Scheme, domain and URI must be our public origin, the chain id the bound chain's."""
    origin = urlsplit(settings.public_origin)
    # EIP-4361: a message without a scheme is for https.
    if (parsed.scheme or "https").lower() != origin.scheme or parsed.domain.lower() != origin.netloc.lower():
        raise ApiError(401, "wrong_domain", f"The message must be for {settings.public_origin}.", field="message")
    uri = urlsplit(str(parsed.uri))
    if (uri.scheme.lower(), uri.netloc.lower()) != (origin.scheme, origin.netloc.lower()):
        raise ApiError(401, "wrong_uri", f"The message's URI must lie under {settings.public_origin}.",
                       field="message")
    if parsed.chain_id != chain_id:
        raise ApiError(401, "wrong_chain", f"The message must be for chain {chain_id}.", field="message")


def _check_times(parsed: siwe.SiweMessage, now: datetime) -> tuple[datetime, datetime]:
    """Issued within the skew of now, with an expiration at most a day after issue; returns both."""
    issued_at = _instant(parsed.issued_at, "Issued At")
    if parsed.not_before is not None:
        _instant(parsed.not_before, "Not Before")
    if abs(now - issued_at) > MAX_ISSUED_AT_SKEW:
        raise ApiError(401, "expired", "The message was not issued within the last 5 minutes; sign a fresh one.",
                       field="message")
    if parsed.expiration_time is None:
        raise bad_request("invalid_message", "The message must carry an Expiration Time.", field="message")
    expires_at = _instant(parsed.expiration_time, "Expiration Time")
    if expires_at - issued_at > MAX_MESSAGE_LIFETIME:
        raise bad_request("invalid_message", "The message's Expiration Time is at most 24 hours after Issued At.",
                          field="message")
    return issued_at, expires_at


def _instant(value: siwe.ISO8601Datetime, name: str) -> datetime:
    moment = value._datetime
    if moment.tzinfo is None:
        raise bad_request("invalid_message", f"{name} must name its time zone (e.g. Z).", field="message")
    return moment


async def _check_signature(parsed: siwe.SiweMessage, signature: Any, chain: ChainClient, now: datetime) -> str:
    """The message's address, once its signature (EOA, or EIP-1271 contract) and time window are good."""
    if not isinstance(signature, str) or not signature.startswith("0x") or len(signature) > 2 + 2 * 4096:
        raise ApiError(401, "invalid_signature", "signature is a 0x-hex signature of the message.",
                       field="signature")
    try:
        parsed.verify(signature, timestamp=now)
    except siwe.ExpiredMessage:
        raise ApiError(401, "expired", "The message has expired; sign a fresh one.", field="message") from None
    except siwe.NotYetValidMessage:
        raise ApiError(401, "not_yet_valid", "The message is not valid yet (Not Before).", field="message") from None
    except siwe.InvalidSignature:
        signable = defunct_hash_message(text=parsed.prepare_message())
        try:
            contract_signed = await wallet_signed(chain, parsed.address, signable, signature)
        except ChainUnavailable:
            raise ApiError(503, "chain_unavailable", "The chain cannot be reached to check a contract wallet; "
                                                     "nothing was changed, retry later.", retryAfter=10) from None
        except ValueError:
            contract_signed = False
        if not contract_signed:
            raise ApiError(401, "invalid_signature", "The signature is not the message's address's.",
                           field="signature") from None
    return normalize_wallet(parsed.address)


# Request-facing helpers, shared by api/ and portal/.

def session_token() -> str | None:
    """The session token of the current request: ``Authorization: Bearer`` when present, else the cookie."""
    header = request.headers.get("Authorization", "")
    if header:
        scheme, _, token = header.partition(" ")
        return token.strip() if scheme.lower() == "bearer" else None
    return request.cookies.get(SESSION_COOKIE)


def require_session(handler: F) -> F:
    """Route decorator: 401 ``auth_required`` unless the request carries a valid session, which it leaves in
    ``g.session`` (an ActiveSession). Put it above request validation, so an anonymous caller learns nothing."""

    @wraps(handler)
    async def guarded(*args: Any, **kwargs: Any) -> Any:
        session = await find_session(session_token(), runtime().clock.now())
        if session is None:
            raise ApiError(401, "auth_required", "Sign in with your wallet first (a session cookie or "
                                                 "Authorization: Bearer token).")
        g.session = session
        return await handler(*args, **kwargs)

    return cast(F, guarded)


def current_session() -> ActiveSession:
    """The session ``require_session`` found for this request."""
    return cast(ActiveSession, g.session)
