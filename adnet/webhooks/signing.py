"""The signature of a webhook delivery, and its check as a receiver does it.

``Adnet-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>" under the endpoint's secret>``. Signing
the timestamp with the body lets a receiver refuse a replay: a signature older than its tolerance (five minutes
is what ``verify`` uses by default) is refused, and within it the ``Adnet-Event-Id`` header (also ``id`` in the
body) tells a repeat from a new event.
"""

from __future__ import annotations

import hashlib
import hmac

HEADER = "Adnet-Signature"
TOLERANCE_SECONDS = 300


def sign(secret: str, timestamp: int, body: bytes) -> str:
    """The ``Adnet-Signature`` value of ``body`` sent at ``timestamp`` (Unix seconds)."""
    digest = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()
    return f"t={timestamp},v1={digest}"


def verify(secret: str, header: str, body: bytes, now: int, tolerance: int = TOLERANCE_SECONDS) -> bool:
    """Whether ``header`` signs ``body`` under ``secret`` and was made within ``tolerance`` seconds of ``now``."""
    parts = dict(part.split("=", 1) for part in header.split(",") if "=" in part)
    timestamp = parts.get("t", "")
    if not timestamp.isdigit() or abs(now - int(timestamp)) > tolerance or "v1" not in parts:
        return False
    return hmac.compare_digest(sign(secret, int(timestamp), body), f"t={timestamp},v1={parts['v1']}")
