"""Tracking tokens: signed, compact, URL-safe, expiring after 15 minutes, accepted under one previous secret."""

import base64
import hmac
import json
import re
from datetime import UTC, datetime, timedelta

import pytest

from adnet.delivery.tokens import TOKEN_TTL, TokenError, issue_token, token_ref, verify_token
from tests.auth_helpers import tampered

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
SECRET = "current-secret-" + "a" * 32
OLD_SECRET = "previous-secret-" + "b" * 32


def make(secret: str = SECRET, now: datetime = NOW, **overrides) -> str:
    fields = {"ad_id": "ad_1", "campaign_id": "cmp_1", "site_id": "site_1", "placement": "sidebar",
              "size": "300x250", "wallet": "0x" + "ab" * 20, "click_active": True, "off_site": True,
              "client": "c0ffee" * 3,
              "nonce": 2**64 - 1, **overrides}
    return issue_token(secret, now=now, **fields)


def refusal(token: str, *, secrets=(SECRET,), now: datetime = NOW) -> str:
    with pytest.raises(TokenError) as raised:
        verify_token(token, secrets=secrets, now=now)
    return raised.value.reason


def test_round_trip_carries_every_field():
    claims = verify_token(make(), secrets=(SECRET,), now=NOW + timedelta(minutes=1))
    assert (claims.ad_id, claims.campaign_id, claims.site_id) == ("ad_1", "cmp_1", "site_1")
    assert (claims.placement, claims.size, claims.wallet) == ("sidebar", "300x250", "0x" + "ab" * 20)
    assert (claims.click_active, claims.off_site, claims.client) == (True, True, "c0ffee" * 3)
    assert claims.expires_at_ms - claims.issued_at_ms == TOKEN_TTL.total_seconds() * 1000 == 15 * 60 * 1000


def test_the_viewer_id_is_carried_and_a_token_without_one_reads_as_none():
    assert verify_token(make(viewer="fp_0123"), secrets=(SECRET,), now=NOW).viewer == "fp_0123"
    assert verify_token(make(), secrets=(SECRET,), now=NOW).viewer is None
    # A token signed before the viewer id joined the payload (one field less) is still genuine.
    payload = json.dumps(["ad_1", "cmp_1", "site_1", "", "300x250", "", int(NOW.timestamp() * 1000),
                          int((NOW + TOKEN_TTL).timestamp() * 1000), 1, 0, "c0ffee", "ff"], separators=(",", ":"))
    encoded = base64.urlsafe_b64encode(payload.encode()).rstrip(b"=").decode()
    mac = hmac.digest(SECRET.encode(), b"adnet/tracking-token/v2." + encoded.encode(), "sha256")
    older = f"{encoded}.{base64.urlsafe_b64encode(mac).rstrip(b'=').decode()}"
    claims = verify_token(older, secrets=(SECRET,), now=NOW)
    assert (claims.ad_id, claims.client, claims.viewer) == ("ad_1", "c0ffee", None)


def test_token_is_compact_and_url_safe():
    token = make()
    assert re.fullmatch(r"[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+", token)
    assert len(token) < 280


def test_without_wallet_and_with_clicks_off():
    claims = verify_token(make(wallet=None, click_active=False), secrets=(SECRET,), now=NOW)
    assert claims.wallet is None and claims.click_active is False


def test_expires_after_fifteen_minutes():
    token = make()
    assert verify_token(token, secrets=(SECRET,), now=NOW + timedelta(minutes=14, seconds=59))
    assert refusal(token, now=NOW + timedelta(minutes=15)) == "token_expired"


def test_tampering_is_refused():
    token = make()
    mac = token.split(".")[1]
    other_payload = make(ad_id="ad_2").split(".")[0]
    assert refusal(f"{other_payload}.{mac}") == "token_invalid"
    assert refusal(tampered(token)) == "token_invalid"
    for garbage in ("", "abc", "a.b.c", token + "=", token.replace(".", "")):
        assert refusal(garbage) == "token_invalid"


def test_wrong_secret_is_refused():
    assert refusal(make(secret="someone-else-" + "c" * 32)) == "token_invalid"


def test_rotation_accepts_the_previous_secret_only():
    old_token = make(secret=OLD_SECRET)
    assert verify_token(old_token, secrets=(SECRET, OLD_SECRET), now=NOW).ad_id == "ad_1"
    assert refusal(old_token, secrets=(SECRET,)) == "token_invalid"
    assert refusal(old_token, secrets=(SECRET, "")) == "token_invalid"


def test_token_from_the_future_is_refused():
    assert refusal(make(now=NOW + timedelta(minutes=2))) == "token_invalid"


def test_reference_is_a_stable_digest():
    token = make()
    assert token_ref(token) == token_ref(token)
    assert re.fullmatch(r"[0-9a-f]{64}", token_ref(token))
    assert token_ref(token) != token_ref(make(placement="footer"))
    assert token_ref(token) != token_ref(make(nonce=7))


def test_the_audience_group_is_carried_and_a_token_without_one_reads_as_none():
    assert verify_token(make(audience_group=2), secrets=(SECRET,), now=NOW).audience_group == 2
    assert verify_token(make(), secrets=(SECRET,), now=NOW).audience_group == 0
    # A token signed before the group joined the payload (one field less) is still genuine, without a group.
    payload = json.dumps(["ad_1", "cmp_1", "site_1", "", "300x250", "", int(NOW.timestamp() * 1000),
                          int((NOW + TOKEN_TTL).timestamp() * 1000), 1, 0, "c0ffee", "ff", "fp_1"],
                         separators=(",", ":"))
    encoded = base64.urlsafe_b64encode(payload.encode()).rstrip(b"=").decode()
    mac = hmac.digest(SECRET.encode(), b"adnet/tracking-token/v2." + encoded.encode(), "sha256")
    older = f"{encoded}.{base64.urlsafe_b64encode(mac).rstrip(b'=').decode()}"
    claims = verify_token(older, secrets=(SECRET,), now=NOW)
    assert (claims.viewer, claims.audience_group) == ("fp_1", 0)
    # The group costs the token two characters of JSON, no more.
    assert len(make(audience_group=9)) - len(make()) <= 4
