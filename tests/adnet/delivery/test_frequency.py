"""The serving process's memory of frequency caps without HTTP: counted per campaign, viewer and period, forgotten
when the period ends, and bounded however many viewers come."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from adnet.delivery.frequency import FrequencyMemory, frequency_window

NOON = datetime(2026, 1, 1, 12, 30, tzinfo=UTC)
HOUR = 3600


def test_a_viewer_reaches_the_cap_per_campaign_and_period():
    memory = FrequencyMemory()
    for _ in range(2):
        memory.add(frequency_window("cmp_a", "viewer-1", NOON, HOUR), NOON)
    assert memory.reached("cmp_a", "viewer-1", 2, HOUR, NOON + timedelta(minutes=20))
    assert not memory.reached("cmp_a", "viewer-1", 3, HOUR, NOON)
    assert not memory.reached("cmp_a", "viewer-2", 2, HOUR, NOON)
    assert not memory.reached("cmp_b", "viewer-1", 2, HOUR, NOON)
    assert not memory.reached("cmp_a", "viewer-1", 2, HOUR, NOON + timedelta(minutes=30))  # the next hour


def test_the_memory_stays_bounded_and_keeps_todays_periods_first():
    memory = FrequencyMemory(max_entries=3)
    yesterday = NOON - timedelta(days=1)
    memory.add(frequency_window("cmp_a", "old", yesterday, HOUR), yesterday)
    memory.add(frequency_window("cmp_a", "kept-1", NOON, HOUR), NOON)
    memory.add(frequency_window("cmp_a", "kept-2", NOON, HOUR), NOON)
    memory.add(frequency_window("cmp_a", "new", NOON, HOUR), NOON)  # full: yesterday's period goes
    assert all(memory.reached("cmp_a", viewer, 1, HOUR, NOON) for viewer in ("kept-1", "kept-2", "new"))
    memory.add(frequency_window("cmp_a", "one-more", NOON, HOUR), NOON)  # full of today's: all go
    assert memory.reached("cmp_a", "one-more", 1, HOUR, NOON)
    assert not memory.reached("cmp_a", "kept-1", 1, HOUR, NOON)
