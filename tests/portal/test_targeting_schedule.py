"""The week grid's cells and the schedule rules they stand for (``portal.targeting``), both ways: the rules the
grid writes run the campaign in exactly the chosen cells, in the simplest rules that say so."""

from __future__ import annotations

from itertools import product

import pytest

from adnet.campaigns.targeting import WEEKDAYS, Targeting
from portal.targeting import schedule_of, slots_of, week_hours_summary

EVERY_CELL = set(product(WEEKDAYS, range(24)))


@pytest.mark.parametrize(("cells", "rules"), [
    (set(), {"days": [], "hours": [], "weekHours": {}}),
    (EVERY_CELL, {"days": [], "hours": [], "weekHours": {}}),
    ({("sat", 9), ("sun", 9), ("sat", 10), ("sun", 10)}, {"days": ["sat", "sun"], "hours": [9, 10], "weekHours": {}}),
    ({(day, 20) for day in WEEKDAYS}, {"days": [], "hours": [20], "weekHours": {}}),
    ({("mon", hour) for hour in range(24)}, {"days": ["mon"], "hours": [], "weekHours": {}}),
    ({("tue", 9), ("tue", 10), ("sat", 20)}, {"days": [], "hours": [], "weekHours": {"tue": [9, 10], "sat": [20]}}),
])
def test_the_grid_writes_the_simplest_rules_for_its_cells(cells, rules):
    assert schedule_of(cells) == rules
    assert slots_of(Targeting.model_validate(rules)) == (frozenset() if len(cells) == len(EVERY_CELL) else cells)


def test_every_schedule_rule_shows_as_the_cells_it_runs_in():
    assert slots_of(Targeting()) == frozenset()
    assert slots_of(Targeting(hours=[9])) == {(day, 9) for day in WEEKDAYS}
    narrowed = Targeting.model_validate({"days": ["mon", "tue"], "weekHours": {"mon": [9, 10], "sun": [9]},
                                         "hours": [10]})
    assert slots_of(narrowed) == {("mon", 10)}  # every rule applies


def test_hours_by_day_read_monday_first_in_any_stored_order():
    # PostgreSQL's JSONB keeps an object's keys sorted (by length, then bytes), not as they were written.
    assert week_hours_summary({"week_hours": {"sat": [20], "tue": [9, 10]}}) == "tue 9, 10 · sat 20"
    assert week_hours_summary({"week_hours": {"sun": [], "mon": [0]}}) == "mon 0"
    assert week_hours_summary({}) == week_hours_summary(None) == ""
