"""Log lines: the time in UTC with its offset whatever the host's zone, ``key=value`` fields, and one line per
record, a traceback and a client's line breaks included (``tests/reliability/test_redis_outage.py`` reads every
line of a real ``adnet serve``)."""

from __future__ import annotations

import logging
import re
import sys
import time

import pytest

from adnet.core.logs import LineFormatter

LINE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00 level=[A-Z]+ logger=\S+ pid=\d+ \S")


@pytest.fixture
def new_york(monkeypatch: pytest.MonkeyPatch):
    """The process's local time zone is New York's (UTC-5 in winter)."""
    monkeypatch.setenv("TZ", "America/New_York")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def record(message: str, *args: object, exc_info=None) -> logging.LogRecord:
    made = logging.LogRecord("adnet.test", logging.WARNING, __file__, 1, message, args, exc_info)
    made.created = 1_795_847_568.123456  # 2026-11-28T06:32:48.123 UTC, 01:32 in New York
    return made


@pytest.mark.usefixtures("new_york")
def test_a_line_is_stamped_in_utc_with_its_offset_and_names_its_fields():
    line = LineFormatter().format(record("site verified site=%s method=%s", "site_1", "meta"))

    assert line == (f"2026-11-28T06:32:48.123+00:00 level=WARNING logger=adnet.test pid={record('').process} "
                    "site verified site=site_1 method=meta")


def test_a_traceback_is_one_quoted_field_of_the_same_line():
    try:
        raise ValueError('bad "value"\nsecond line')
    except ValueError:
        line = LineFormatter().format(record("request failed request_id=%s", "abc", exc_info=sys.exc_info()))

    assert "\n" not in line and LINE.match(line)
    message, traceback = line.split(' traceback="', 1)
    assert message.endswith("request failed request_id=abc")
    assert traceback.startswith("Traceback (most recent call last):\\n  File ")
    assert traceback.endswith('ValueError: bad \\"value\\"\\nsecond line"')


def test_what_a_client_sends_cannot_forge_a_line():
    line = LineFormatter().format(record("bot filtered user_agent=%s", "curl\n2026-01-01T00:00:00.000+00:00 fake\\"))

    assert line.endswith("user_agent=curl\\n2026-01-01T00:00:00.000+00:00 fake\\\\")
    assert len(line.splitlines()) == 1
