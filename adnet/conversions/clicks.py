"""Click ids: what carries a recorded click to the advertiser's landing page, so that a conversion reported later
names the click it follows.

When ``POST /api/track`` records a CLICK, its answer hands the embed ``clickUrl``: the creative's target URL with
the macros ``{clickId}``, ``{campaignId}`` and ``{siteId}`` replaced where it names them, and the click id appended
under the campaign's ``clickParam`` (``adnet_click`` by default) unless the target places it itself with
``{clickId}``. Every recorded click gets one, billed or not, so the answer still does not say whether a click was
billed; a duplicate click (the same viewer's within the hour) records nothing and gets none.

A click id is ``<payload>.<mac>``, both base64url without padding: the payload a compact JSON array (the click's
event id, campaign, creative, site, and when it was issued, ms), the mac HMAC-SHA256 over a prefix of its own and
the payload, keyed with ``ADNET_TRACKING_SECRET`` (or the previous one while it rotates, as tracking tokens are).
Nothing is stored for it: the event id names the recorded click, whose row says whether it was billed. It is
unguessable without the secret and valid for ``MAX_WINDOW``, the longest attribution window a goal may have; each
goal's own window is checked when a conversion arrives (``adnet.conversions.attribution``).

Building the URL reads only the serving index, in memory: no database round trip is added to ``/api/track``.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from urllib.parse import quote, urlencode, urlsplit, urlunsplit

from pydantic_core import to_json

from adnet.delivery.index import Index
from adnet.delivery.tokens import b64url_decode, b64url_encode

MAX_WINDOW = timedelta(days=30)
MAX_CLICK_ID_LENGTH = 512
_MAC_PREFIX = b"adnet/click-id/v1."
# Issued a little in the future is tolerated (several workers, clocks a hair apart), as for tracking tokens.
_CLOCK_SKEW = timedelta(seconds=5)


class ClickIdError(Exception):
    """A click id that cannot attribute: ``reason`` is ``click_invalid`` (malformed, not signed with adnet's key,
    issued in the future) or ``outside_window`` (issued longer ago than any goal's window)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class ClickClaims:
    """What a click id vouches for: one recorded click."""

    event_id: str
    campaign_id: str
    ad_id: str
    site_id: str
    issued_at: datetime


def issue_click_id(secret: str, *, event_id: str, campaign_id: str, ad_id: str, site_id: str, now: datetime) -> str:
    """Sign a click id for the recorded click ``event_id``."""
    payload = b64url_encode(to_json([event_id, campaign_id, ad_id, site_id, _epoch_ms(now)]))
    return f"{payload}.{b64url_encode(_mac(secret, payload))}"


def verify_click_id(click_id: str, *, secrets: Sequence[str], now: datetime) -> ClickClaims:
    """The claims of a genuine click id signed with one of ``secrets``, issued no later than ``now`` and no longer
    than ``MAX_WINDOW`` before it; ClickIdError otherwise. Only the canonical spelling of the mac is accepted, so
    one click cannot be re-spelled into several ids."""
    if not isinstance(click_id, str) or len(click_id) > MAX_CLICK_ID_LENGTH or click_id.count(".") != 1:
        raise ClickIdError("click_invalid")
    payload, mac_text = click_id.split(".")
    try:
        mac = b64url_decode(mac_text)
        fields = json.loads(b64url_decode(payload).decode())
    except ValueError:
        raise ClickIdError("click_invalid") from None
    if b64url_encode(mac) != mac_text or not any(
            hmac.compare_digest(mac, _mac(secret, payload)) for secret in secrets if secret):
        raise ClickIdError("click_invalid")
    try:
        event_id, campaign_id, ad_id, site_id, issued_ms = fields
        issued_at = datetime.fromtimestamp(int(issued_ms) / 1000, tz=UTC)
    except (TypeError, ValueError):  # signed by a version with another payload
        raise ClickIdError("click_invalid") from None
    if issued_at > now + _CLOCK_SKEW:
        raise ClickIdError("click_invalid")
    if now - issued_at > MAX_WINDOW:
        raise ClickIdError("outside_window")
    return ClickClaims(event_id=event_id, campaign_id=campaign_id, ad_id=ad_id, site_id=site_id, issued_at=issued_at)


def landing_url(target_url: str, *, param: str, click_id: str, campaign_id: str, site_id: str) -> str:
    """``target_url`` with its macros replaced and, unless it names ``{clickId}``, the click id appended to its query
    as ``param`` (before any fragment)."""
    placed = "{clickId}" in target_url
    url = (target_url.replace("{clickId}", quote(click_id, safe=""))
           .replace("{campaignId}", quote(campaign_id, safe="")).replace("{siteId}", quote(site_id, safe="")))
    if placed:
        return url
    parts = urlsplit(url)
    query = f"{parts.query}&" if parts.query else ""
    return urlunsplit(parts._replace(query=query + urlencode({param: click_id})))


def click_landing(index: Index, secret: str, *, event_id: str, campaign_id: str, ad_id: str, site_id: str,
                  now: datetime) -> str | None:
    """Where a recorded click of ``ad_id`` takes the viewer, with its click id (``landing_url``); None when the ad
    left the serving index since it was served (the embed then opens the target as served)."""
    campaign, creative = index.campaigns.get(campaign_id), index.creatives.get(ad_id)
    if campaign is None or creative is None or creative.campaign_id != campaign_id:
        return None
    click_id = issue_click_id(secret, event_id=event_id, campaign_id=campaign_id, ad_id=ad_id, site_id=site_id,
                              now=now)
    return landing_url(creative.target_url, param=campaign.click_param, click_id=click_id, campaign_id=campaign_id,
                       site_id=site_id)


def _mac(secret: str, payload: str) -> bytes:
    return hmac.new(secret.encode(), _MAC_PREFIX + payload.encode(), hashlib.sha256).digest()


def _epoch_ms(moment: datetime) -> int:
    return int(moment.astimezone(UTC).timestamp() * 1000)
