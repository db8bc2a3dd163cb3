"""Serve request aggregates (adnet.delivery.requests): each process's counts are added, never overwritten, so two
workers flushing the same hour sum up; a flush that fails keeps its counts for the next, which adds them once; and
serving's counter is a dict increment, flushed with the fill counts (also at shutdown)."""

from collections import Counter
from datetime import UTC, datetime

import pytest

from adnet.delivery import requests
from adnet.delivery.models import RequestHour
from adnet.delivery.requests import RequestCounts, hour_of

HOUR = datetime(2026, 1, 1, 10, tzinfo=UTC)


def test_hour_of_is_the_utc_hour():
    assert hour_of(datetime(2026, 1, 1, 11, 59, 59, tzinfo=UTC)) == datetime(2026, 1, 1, 11, tzinfo=UTC)


async def test_workers_add_their_own_counts_and_a_failed_flush_is_added_once_later(app, monkeypatch):
    first, second = RequestCounts(), RequestCounts()
    key = ("site_a", HOUR, "300x250", "DE", "desktop")
    for _ in range(3):
        first.count(key)
    second.count(key)
    second.count(("site_a", HOUR, "", "", "mobile"))
    await first.flush()
    await second.flush()
    assert await RequestHour.get(site_id="site_a", size="300x250").values_list("requests", flat=True) == 4

    failing = Counter({"calls": 0})
    run = requests.sql.run

    async def broken(program):
        failing["calls"] += 1
        program.close()
        raise ConnectionError("database away")

    first.count(key)
    monkeypatch.setattr(requests.sql, "run", broken)
    with pytest.raises(ConnectionError):
        await first.flush()
    first.count(key)  # counted while the database was away
    monkeypatch.setattr(requests.sql, "run", run)
    await first.flush()
    await first.flush()  # nothing left: adds nothing
    assert failing["calls"] == 1
    assert await RequestHour.get(site_id="site_a", size="300x250").values_list("requests", flat=True) == 6
    assert await RequestHour.get(site_id="site_a", device="mobile").values_list("requests", flat=True) == 1
