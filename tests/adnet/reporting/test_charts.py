"""The dashboard's server-drawn SVG chart."""

from __future__ import annotations

import re
from datetime import date, timedelta

import pytest

from adnet.reporting.charts import DAY_BASELINE, LEFT, RIGHT, WIDTH, earnings_chart, nice_ceiling

GS = 10**18


@pytest.mark.parametrize(("value", "expected"), [(0, 1), (1, 1), (2, 2), (3, 5), (6, 10), (11, 20), (21, 50),
                                                 (51, 100), (5 * GS, 5 * GS), (5 * GS + 1, 10 * GS)])
def test_nice_ceiling_is_one_two_or_five_times_a_power_of_ten(value, expected):
    assert nice_ceiling(value) == expected


def days(amounts):
    start = date(2026, 10, 25)
    return [(start + timedelta(days=offset), amount) for offset, amount in enumerate(amounts)]


def test_bars_are_scaled_to_a_nice_axis_and_titled_exactly():
    chart = str(earnings_chart(days([2 * GS, 9 * GS, 0])))
    ticks = re.findall(r'<text class="chart-label chart-tick"[^>]*>([^<]+)</text>', chart)
    assert ticks == ["5 G$", "10 G$", "15 G$", "20 G$"]  # 9 G$ over four ticks: a step of 5, not 2.25
    assert "<title>2026-10-26: 9 G$</title>" in chart and "<title>2026-10-27: 0 G$</title>" in chart
    assert "3 days from 2026-10-25 to 2026-10-27; total 11 G$; highest day 9 G$." in chart
    assert '<figcaption class="chart-caption">Oct 25 to Oct 27, 2026 (UTC days): total 11 G$' in chart


def test_every_day_is_focusable_and_shows_its_value_on_hover_and_focus():
    chart = str(earnings_chart(days([2 * GS, 9 * GS, 0])))
    assert chart.count('<g class="chart-day" tabindex="0" role="img"') == 3
    assert 'aria-label="2026-10-26: 9 G$"' in chart
    assert re.findall(r'<text class="chart-label chart-tip"[^>]*>([^<]+)</text>', chart) == [
        "Oct 25: 2 G$", "Oct 26: 9 G$", "Oct 27: 0 G$"]


def test_the_first_and_last_day_labels_stay_inside_the_chart():
    chart = str(earnings_chart(days([GS] * 30)))
    baseline = f'y="{DAY_BASELINE}"'
    labels = re.findall(rf'<text class="chart-label" x="([\d.]+)" {baseline} text-anchor="(\w+)">([^<]+)</text>', chart)
    assert [(anchor, text) for _, anchor, text in labels] == [("start", "Oct 25"), ("middle", "Nov 09"),
                                                              ("end", "Nov 23")]
    assert float(labels[0][0]) >= LEFT and float(labels[-1][0]) <= WIDTH - RIGHT


def test_one_day_is_named_once_and_days_without_money_are_said_in_words():
    one = str(earnings_chart(days([GS])))
    assert one.count(f'y="{DAY_BASELINE}"') == 1
    empty = str(earnings_chart([]))
    assert "No days to show." in empty and "<rect" not in empty
    zeros = str(earnings_chart(days([0] * 30), empty="Nothing earned yet."))
    assert '<p class="chart-empty">Nothing earned yet.</p>' in zeros and "<svg" not in zeros
    assert "Oct 25 to Nov 23, 2026 (UTC days): total 0 G$" in zeros and "0.000000000000000001" not in zeros


def test_titles_are_escaped():
    chart = str(earnings_chart(days([GS]), symbol="<G$>", title="A & B"))
    assert "&lt;G$&gt;" in chart and "A &amp; B" in chart and "<G$>" not in chart
