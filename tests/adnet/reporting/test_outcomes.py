"""The conversion figures every report shows (``adnet.reporting.outcomes``) and how a breakdown's rows add
conversions (``adnet.reporting.breakdowns.Row``): exact integer arithmetic, rounded down, and no figure over
nothing."""

from dataclasses import replace
from datetime import date

from adnet.reporting.breakdowns import Breakdown, Row, breakdown_csv
from adnet.reporting.commands import Dimension
from adnet.reporting.outcomes import conversion_rate, cost_per_conversion, ratio_text, roas

G = 10**18


def test_ratios_are_exact_and_rounded_down():
    assert ratio_text(1, 3) == "0.333333"
    assert ratio_text(2, 3) == "0.666666"
    assert ratio_text(5, 2) == "2.500000"
    assert ratio_text(0, 7) == "0.000000"
    # numbers far beyond a float's precision still divide exactly
    assert ratio_text(10**40 + 1, 10**34) == "1000000.000000"
    assert ratio_text(3 * 10**36 - 1, 10**36) == "2.999999"


def test_a_ratio_over_nothing_is_none():
    assert ratio_text(5, 0) is None
    assert conversion_rate(3, 0) is None
    assert conversion_rate(1, 40) == "0.025000"


def test_roas_is_value_per_spend_and_none_without_spend_or_a_value():
    assert roas(20 * G, 1, 8 * G) == "2.500000"
    assert roas(G, 1, 3 * G) == "0.333333"
    assert roas(20 * G, 1, 0) is None  # nothing spent (unpriced goal, no billed traffic)
    assert roas(0, 0, 8 * G) is None  # no conversion carried a value
    assert roas(0, 2, 8 * G) == "0.000000"  # they did, worth nothing


def test_cost_per_conversion_is_rounded_down_in_the_smallest_unit():
    assert cost_per_conversion(10, 3) == 3
    assert cost_per_conversion(5 * G + 1, 2) == 5 * G // 2
    assert cost_per_conversion(7 * G, 0) == 0


def test_a_row_adds_conversions_to_its_spend_and_value_and_the_csv_says_so():
    row = Row("top")
    row.add(impressions=1000, clicks=20, spend=3 * G, earned=2 * G)
    row.convert(cost=5 * G, earned=4 * G, value=16 * G)
    row.convert(cost=0, earned=0, value=None)
    assert (row.spend, row.earned, row.conversions, row.conversion_spend) == (8 * G, 6 * G, 2, 5 * G)
    assert (row.value, row.valued) == (16 * G, 1)
    assert (row.conversion_rate, row.cost_per_conversion, row.roas) == ("0.100000", 4 * G, "2.000000")
    breakdown = Breakdown(Dimension.PLACEMENT, date(2026, 3, 1), date(2026, 3, 1), [row], replace(row, key=None))
    assert breakdown_csv(breakdown, "spend").splitlines() == [
        "placement,impressions,clicks,ctr,spend,conversions,conversion_rate,cost_per_conversion,conversion_value,roas",
        "top,1000,20,0.020000,8,2,0.100000,4,16,2.000000",
        "total,1000,20,0.020000,8,2,0.100000,4,16,2.000000"]
    assert breakdown_csv(breakdown, "earned").splitlines()[1] == "top,1000,20,0.020000,6,2"
