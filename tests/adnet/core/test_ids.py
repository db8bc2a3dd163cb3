"""Identifiers: unguessable, of their type, and for rows written at a high rate ordered by the time they were made."""

from __future__ import annotations

import pytest

from adnet.core import ids
from adnet.core.ids import has_prefix, new_id, new_ordered_id


def test_an_identifier_names_its_type_and_128_random_bits():
    made = {new_id("ev") for _ in range(1000)}
    assert len(made) == 1000
    assert all(has_prefix(identifier, "ev") and len(identifier) == len("ev_") + 22 for identifier in made)
    with pytest.raises(ValueError, match="unknown identifier prefix"):
        new_id("nope")


def test_ordered_identifiers_sort_by_the_millisecond_they_were_made(monkeypatch):
    moments = iter([1_700_000_000_000_000_000, 1_700_000_000_001_000_000, 1_700_000_000_001_000_000,
                    1_800_000_000_000_000_000])
    monkeypatch.setattr(ids.time, "time_ns", lambda: next(moments))
    made = [new_ordered_id("ev") for _ in range(4)]
    assert made[0] < made[1] and made[1][:15] == made[2][:15] and max(made[1:3]) < made[3]
    assert made[1] != made[2]  # the same millisecond: the random part tells them apart
    assert all(has_prefix(identifier, "ev") and len(identifier) == len("ev_") + 12 + 16 for identifier in made)
    assert made[0].startswith("ev_018bcfe56800")
    with pytest.raises(ValueError, match="unknown identifier prefix"):
        new_ordered_id("nope")
