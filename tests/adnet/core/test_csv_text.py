"""CSV cells that no spreadsheet runs as a formula, however it splits a line: the rule of ``adnet.core.csv_text``."""

from __future__ import annotations

import csv
import io

import pytest

from adnet.core.csv_text import FORMULA_PREFIXES, SEPARATORS, csv_text, neutralise


@pytest.mark.parametrize("prefix", FORMULA_PREFIXES)
def test_a_cell_starting_a_formula_is_text(prefix):
    assert neutralise(prefix + "SUM(A1)").startswith("'" + prefix)


@pytest.mark.parametrize("separator", SEPARATORS)
@pytest.mark.parametrize("prefix", FORMULA_PREFIXES)
def test_a_formula_after_any_separator_is_text(separator, prefix):
    for text in (f"ok{separator}{prefix}cmd|' /C calc'!A0", f"ok{separator}  {prefix}1"):
        neutralised = neutralise(text)
        for splitter in SEPARATORS:  # however a spreadsheet splits it, no piece begins a formula
            for piece in neutralised.split(splitter):
                assert not piece.lstrip(" ").startswith(FORMULA_PREFIXES), (text, splitter, piece)


@pytest.mark.parametrize(("text", "expected"), [
    ("=1+1", "'=1+1"), ("\t=1", "'\t'=1"), ("Great;=HYPERLINK(\"http://evil\")", "Great;'=HYPERLINK(\"http://evil\")"),
    ("a; @x", "a; '@x"), ("a|+1", "a|'+1"), ("1,-2", "1,'-2"), ("line\n=1", "line\n'=1"),
    ("x;z", "x;z"), ("a = b, c - d", "a = b, c - d"), ("safe", "safe"), ("", ""),
])
def test_only_what_begins_a_cell_changes(text, expected):
    assert neutralise(text) == expected


def test_numbers_and_empty_cells_pass_and_the_writer_quotes_commas():
    assert neutralise(5) == 5 and neutralise(None) is None
    text = csv_text([["a", "b"], ["x, y", "v;=1"], [3, -2]])
    assert text == "a,b\r\n\"x, y\",v;'=1\r\n3,-2\r\n"
    assert list(csv.reader(io.StringIO(text))) == [["a", "b"], ["x, y", "v;'=1"], ["3", "-2"]]
