"""Audience passes: what a page sends to ``GET /api/serve`` so that serving knows, from memory, which wallet its
viewer proved.

The rewards sign-in (``adnet.accounts.signin``) proves the wallet with its signature; its answer carries a pass for
that wallet. A pass is ``<wallet hex>.<expiry in Unix seconds>.<mac>``, the mac an HMAC-SHA256 (hex) over a
versioned prefix and the rest, keyed with ``ADNET_TRACKING_SECRET``: serving checks it without a database, and a
page cannot write one for a wallet it did not prove (a ``wallet`` parameter proves nothing). It lives as long as the
rewards session it came with. What a pass reveals to the page that holds it is only what the page already knows:
the wallet its viewer signed in with.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Sequence
from datetime import datetime
from functools import lru_cache

MAX_PASS_LENGTH = 128
_PREFIX = b"adnet/audience-pass/v1."


def issue_pass(secret: str, wallet: str, expires_at: datetime) -> str:
    """A pass for ``wallet`` (lower-case ``0x`` address) until ``expires_at``."""
    body = f"{wallet.removeprefix('0x')}.{int(expires_at.timestamp())}"
    return f"{body}.{_mac(secret, body)}"


def wallet_of(audience_pass: str | None, *, secrets: Sequence[str], now: datetime) -> str | None:
    """The wallet a pass was issued for, when it is one of ours (signed with one of ``secrets``) and unexpired;
    None otherwise (a page that sends a bad pass is served as one that sends none)."""
    if not audience_pass or len(audience_pass) > MAX_PASS_LENGTH:
        return None
    for secret in secrets:
        verified = _verified(audience_pass, secret) if secret else None
        if verified is not None:
            wallet, expiry = verified
            return wallet if expiry > now.timestamp() else None
    return None


@lru_cache(maxsize=8192)
def _verified(audience_pass: str, secret: str) -> tuple[str, int] | None:
    """(wallet, expiry) of a pass whose MAC ``secret`` made, else None: remembered, as a viewer sends the same pass
    with every slot of every page, so serving computes its HMAC once."""
    body, _, mac = audience_pass.rpartition(".")
    wallet, _, expiry = body.partition(".")
    if len(wallet) != 40 or not expiry.isdigit() or not hmac.compare_digest(mac, _mac(secret, body)):
        return None
    return "0x" + wallet, int(expiry)


def _mac(secret: str, body: str) -> str:
    return hmac.new(secret.encode(), _PREFIX + body.encode(), hashlib.sha256).hexdigest()
