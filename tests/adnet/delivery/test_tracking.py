"""Tracking rules without HTTP: bot detection and the per-minute windows."""

from datetime import UTC, datetime, timedelta

import pytest

from adnet.delivery.tracking import MinuteWindow, is_bot


@pytest.mark.parametrize(("user_agent", "bot"), [
    ("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 Chrome/131.0 Safari/537.36", False),
    ("Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) Version/17.0 Mobile/15E148 Safari/604.1", False),
    ("Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", True),
    ("Mozilla/5.0 (X11; Linux x86_64) HeadlessChrome/120.0.0.0 Safari/537.36", True),
    ("curl/8.5.0", True),
    ("python-requests/2.32.3", True),
    ("", True),
    ("   ", True),
])
def test_bot_user_agents(user_agent, bot):
    assert is_bot(user_agent) is bot


def test_minute_window_counts_per_key_and_resets():
    window = MinuteWindow(2)
    now = datetime(2026, 1, 1, 12, 0, 5, tzinfo=UTC)
    assert [window.over_limit("a", now) for _ in range(3)] == [False, False, True]
    assert window.over_limit("b", now) is False
    assert window.over_limit("a", now + timedelta(minutes=1)) is False
