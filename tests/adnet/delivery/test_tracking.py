"""Tracking rules without HTTP: the per-minute windows."""

from datetime import UTC, datetime, timedelta

from adnet.delivery.tracking import MinuteWindow


def test_minute_window_counts_per_key_and_resets():
    window = MinuteWindow(2)
    now = datetime(2026, 1, 1, 12, 0, 5, tzinfo=UTC)
    assert [window.over_limit("a", now) for _ in range(3)] == [False, False, True]
    assert window.over_limit("b", now) is False
    assert window.over_limit("a", now + timedelta(minutes=1)) is False
