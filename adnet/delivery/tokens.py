"""Tracking tokens: the proof that an impression or click belongs to an ad adnet actually served.

``GET /api/serve`` issues one token per banner; ``POST /api/track`` bills an event only when it carries a valid
token that names the same ad, campaign and site, from the client it was served to. A token is ``<payload>.<mac>``,
both base64url without padding: the payload is a compact JSON array (ad, campaign, site, placement, size, wallet,
issued-at ms, expiry ms, whether clicks are priced, whether the serve came from a page of another domain than the
site's (``adnet.delivery.sites``), the client's binding (``adnet.delivery.clients.binding``: its
network and browser family), a random nonce, and the viewer id the embed sent, empty without one, which frequency
caps count per (``adnet.delivery.frequency``); a payload without it, signed before it was added, reads as no viewer),
and the number of the campaign's audience rule group that admitted the viewer (``adnet.audiences.membership``: 1 for
the first group, 0 when the campaign has no groups; one digit, so tokens stay small, and a payload signed before it
was added reads as 0), the mac is HMAC-SHA256 over a versioned prefix and the payload, keyed
with ``ADNET_TRACKING_SECRET``. Tokens live 15 minutes. To rotate the secret without refusing tokens already handed out,
move the old one to ``ADNET_TRACKING_SECRET_PREVIOUS``: tokens signed with either are accepted, new ones are signed
with the current secret only.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import lru_cache

from pydantic_core import to_json

TOKEN_TTL = timedelta(minutes=15)
MAX_TOKEN_LENGTH = 1024
_MAC_PREFIX = b"adnet/tracking-token/v2."
# Issued-at a little in the future is tolerated (several workers, clocks a hair apart); more is a forgery.
_CLOCK_SKEW_MS = 5_000
# Tokens issued before the viewer id joined the payload (they live 15 minutes) have one field less.
_FIELDS_BEFORE_VIEWER = 12
# ... and those issued before the audience group joined it, one field less again.
_FIELDS_BEFORE_GROUP = 13
_TTL_MS = int(TOKEN_TTL.total_seconds() * 1000)


class TokenError(Exception):
    """A token that cannot be trusted; ``reason`` is the named refusal stored with the event."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class TokenClaims:
    """What a token vouches for: one serve decision."""

    ad_id: str
    campaign_id: str
    site_id: str
    placement: str
    size: str
    wallet: str | None
    issued_at_ms: int
    expires_at_ms: int
    click_active: bool
    off_site: bool
    client: str
    viewer: str | None = None
    audience_group: int = 0


def issue_token(secret: str, *, ad_id: str, campaign_id: str, site_id: str, placement: str, size: str,
                wallet: str | None, click_active: bool, off_site: bool, client: str, now: datetime, nonce: int,
                viewer: str | None = None, audience_group: int = 0) -> str:
    """Sign a token for an ad served now to ``client`` (its binding); it expires after ``TOKEN_TTL``. ``nonce``
    (64 random bits) makes every serve's token distinct, even two of the same ad in the same millisecond;
    ``audience_group`` is the number of the audience rule group that admitted the viewer (0: none)."""
    issued = _epoch_ms(now)
    payload = [ad_id, campaign_id, site_id, placement, size, wallet or "", issued, issued + _TTL_MS,
               1 if click_active else 0, 1 if off_site else 0, client, format(nonce, "x"), viewer or "",
               audience_group]
    # pydantic-core writes compact UTF-8 JSON in a sixth of the time of the standard library's encoder.
    encoded = b64url_encode(to_json(payload))
    return f"{encoded}.{b64url_encode(_mac(secret, encoded))}"


def verify_token(token: str, *, secrets: Sequence[str], now: datetime) -> TokenClaims:
    """The claims of a genuine, unexpired token signed with one of ``secrets`` (current first, then previous);
    raises TokenError(``token_invalid``) or TokenError(``token_expired``)."""
    if not isinstance(token, str) or len(token) > MAX_TOKEN_LENGTH or token.count(".") != 1:
        raise TokenError("token_invalid")
    encoded, mac_text = token.split(".")
    try:
        mac = b64url_decode(mac_text)
    except ValueError:
        raise TokenError("token_invalid") from None
    # Only the canonical spelling is accepted, so one token cannot be re-spelled into another token_ref.
    if b64url_encode(mac) != mac_text:
        raise TokenError("token_invalid")
    if not any(hmac.compare_digest(mac, _mac(secret, encoded)) for secret in secrets if secret):
        raise TokenError("token_invalid")
    claims = _parse_payload(encoded)
    current = _epoch_ms(now)
    if claims.issued_at_ms > current + _CLOCK_SKEW_MS:
        raise TokenError("token_invalid")
    if current >= claims.expires_at_ms:
        raise TokenError("token_expired")
    return claims


def token_ref(token: str) -> str:
    """A digest naming a token in the database (the token itself is never stored)."""
    return hashlib.sha256(token.encode()).hexdigest()


def _parse_payload(encoded: str) -> TokenClaims:
    try:
        fields = json.loads(b64url_decode(encoded).decode())
        if isinstance(fields, list) and len(fields) == _FIELDS_BEFORE_VIEWER:
            fields = [*fields, ""]
        if isinstance(fields, list) and len(fields) == _FIELDS_BEFORE_GROUP:
            fields = [*fields, 0]
        (ad_id, campaign_id, site_id, placement, size, wallet, issued, expires, click_active, off_site, client,
         _nonce, viewer, audience_group) = fields
        if not all(isinstance(value, str) for value in (ad_id, campaign_id, site_id, placement, size, wallet,
                                                         client, viewer)):
            raise TypeError("text fields")
        if not all(type(value) is int for value in (issued, expires, click_active, off_site, audience_group)):
            raise TypeError("number fields")
    except (ValueError, TypeError):
        # A correctly signed payload always parses; this is a token from an incompatible version.
        raise TokenError("token_invalid") from None
    return TokenClaims(ad_id=ad_id, campaign_id=campaign_id, site_id=site_id, placement=placement, size=size,
                       wallet=wallet or None, issued_at_ms=issued, expires_at_ms=expires,
                       click_active=click_active == 1, off_site=off_site == 1, client=client, viewer=viewer or None,
                       audience_group=audience_group)


def _mac(secret: str, encoded_payload: str) -> bytes:
    mac = _keyed(secret).copy()
    mac.update(encoded_payload.encode())
    return mac.digest()


@lru_cache(maxsize=4)
def _keyed(secret: str) -> hmac.HMAC:
    """HMAC-SHA256 keyed with ``secret`` over the prefix, copied for each token: the key is prepared (and the digest
    looked up in OpenSSL) once per secret rather than once per token, which cost several times the MAC itself."""
    return hmac.new(secret.encode(), _MAC_PREFIX, hashlib.sha256)


def _epoch_ms(moment: datetime) -> int:
    return int(moment.astimezone(UTC).timestamp() * 1000)


def b64url_encode(raw: bytes) -> str:
    """base64url without padding, as tokens (and conversions' click ids) spell their parts."""
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def b64url_decode(text: str) -> bytes:
    """The bytes of a base64url text without padding; ValueError when it is not one."""
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        raise ValueError("not base64url") from None
