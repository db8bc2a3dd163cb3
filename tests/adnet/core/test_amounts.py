"""Token amounts convert exactly between smallest units and decimal strings."""

import pytest

from adnet.core.amounts import UNIT, InvalidAmount, parse_amount, to_decimal_string, to_number


def test_to_decimal_string_is_exact():
    assert to_decimal_string(0) == "0"
    assert to_decimal_string(UNIT) == "1"
    assert to_decimal_string(12 * UNIT + UNIT // 2) == "12.5"
    assert to_decimal_string(1) == "0.000000000000000001"
    assert to_decimal_string(10**40 - 1) == "9999999999999999999999.999999999999999999"


@pytest.mark.parametrize("text", ["12.5", "0.000000000000000001", "1", "9999999999999999999999.999999999999999999"])
def test_parse_round_trips(text):
    assert to_decimal_string(parse_amount(text)) == text


@pytest.mark.parametrize("text", ["", "0", "0.0", "-1", "1e18", "01", "1.", ".5", "1.0000000000000000001", " 1", 5])
def test_parse_refuses(text):
    with pytest.raises(InvalidAmount):
        parse_amount(text)


def test_zero_is_an_amount_only_where_asked():
    assert parse_amount("0", zero=True) == parse_amount("0.00", zero=True) == 0
    with pytest.raises(InvalidAmount):
        parse_amount("-0", zero=True)


def test_to_number_keeps_whole_amounts_integral():
    assert to_number(3 * UNIT) == 3 and isinstance(to_number(3 * UNIT), int)
    assert to_number(UNIT // 4) == 0.25
