"""Click ids: signed, bound to one recorded click, valid for the longest window; and the landing URL they ride in."""

from datetime import UTC, datetime, timedelta
from urllib.parse import parse_qs, urlsplit

import pytest

from adnet.conversions.clicks import (
    MAX_WINDOW,
    ClickIdError,
    issue_click_id,
    landing_url,
    verify_click_id,
)
from adnet.delivery.tokens import b64url_decode, b64url_encode
from tests.auth_helpers import tampered

NOW = datetime(2026, 3, 1, 12, tzinfo=UTC)
SECRET = "click-secret-for-tests-0123456789"
CLICK = {"event_id": "ev_0196f3a2c4e1Xb3abcdefgh", "campaign_id": "cmp_abcdefghij", "ad_id": "ad_abcdefghij",
         "site_id": "site_abcdefghij"}


def test_a_click_id_carries_its_click_campaign_creative_site_and_time():
    claims = verify_click_id(issue_click_id(SECRET, **CLICK, now=NOW), secrets=[SECRET], now=NOW + timedelta(days=3))
    assert (claims.event_id, claims.campaign_id, claims.ad_id, claims.site_id, claims.issued_at) == (
        *CLICK.values(), NOW)


def test_a_click_id_verifies_with_the_previous_secret_while_it_rotates():
    click_id = issue_click_id("old-secret", **CLICK, now=NOW)
    assert verify_click_id(click_id, secrets=[SECRET, "old-secret"], now=NOW).event_id == CLICK["event_id"]


@pytest.mark.parametrize("mangle", [
    tampered,
    lambda click_id: b64url_encode(b64url_decode(click_id.split(".")[0]).replace(b"ev_", b"ev-")) + "."
    + click_id.split(".")[1],
    lambda click_id: click_id.replace(".", ""),
    lambda click_id: "x" * 600,
])
def test_a_changed_or_malformed_click_id_does_not_verify(mangle):
    with pytest.raises(ClickIdError) as refused:
        verify_click_id(mangle(issue_click_id(SECRET, **CLICK, now=NOW)), secrets=[SECRET], now=NOW)
    assert refused.value.reason == "click_invalid"


def test_a_click_id_signed_with_another_key_does_not_verify():
    with pytest.raises(ClickIdError):
        verify_click_id(issue_click_id("another", **CLICK, now=NOW), secrets=[SECRET], now=NOW)


def test_a_click_id_expires_with_the_longest_window_and_is_refused_from_the_future():
    click_id = issue_click_id(SECRET, **CLICK, now=NOW)
    assert verify_click_id(click_id, secrets=[SECRET], now=NOW + MAX_WINDOW)
    with pytest.raises(ClickIdError) as late:
        verify_click_id(click_id, secrets=[SECRET], now=NOW + MAX_WINDOW + timedelta(seconds=1))
    assert late.value.reason == "outside_window"
    with pytest.raises(ClickIdError) as early:
        verify_click_id(click_id, secrets=[SECRET], now=NOW - timedelta(minutes=1))
    assert early.value.reason == "click_invalid"


def test_two_clicks_of_the_same_ad_get_different_ids():
    assert issue_click_id(SECRET, **CLICK, now=NOW) != issue_click_id(SECRET, **{**CLICK, "event_id": "ev_other12345"},
                                                                      now=NOW)


def test_the_click_id_is_appended_under_the_parameter_before_the_fragment():
    url = landing_url("https://shop.example/land?utm=x#offer", param="ref", click_id="abc.def",
                      campaign_id="cmp_1", site_id="site_1")
    parts = urlsplit(url)
    assert (parts.netloc, parts.path, parts.fragment) == ("shop.example", "/land", "offer")
    assert parse_qs(parts.query) == {"utm": ["x"], "ref": ["abc.def"]}


def test_macros_are_replaced_and_a_placed_click_id_is_not_appended_again():
    url = landing_url("https://shop.example/{campaignId}/land?cid={clickId}&s={siteId}", param="adnet_click",
                      click_id="abc.def", campaign_id="cmp_1", site_id="site_1")
    assert url == "https://shop.example/cmp_1/land?cid=abc.def&s=site_1"
