"""An ad unit's rules without HTTP: its kinds kept once in serving's order, a size and attached tasks only for
banners, the snippet written from it (attributes quoted for HTML), and the serve query its slot sends."""

from __future__ import annotations

import pytest

from adnet.core.errors import Invalid
from adnet.core.inputs import parse
from adnet.delivery.ad_units import AdUnitSettings, SlotSettings, serve_query
from adnet.delivery.sdk import unit_snippet


def test_kinds_are_kept_once_in_servings_order():
    unit = parse(AdUnitSettings, {"name": " Side ", "kinds": ["SURVEY", "BANNER", "SURVEY"]})
    assert (unit.name, unit.kinds, unit.size, unit.attached_tasks, unit.placement) == (
        "Side", ["BANNER", "SURVEY"], None, False, "")


@pytest.mark.parametrize(("settings", "field"), [
    ({"kinds": ["POLL"], "size": "300x250"}, "size"),
    ({"kinds": ["FEEDBACK"], "attachedTasks": True}, "attachedTasks"),
    ({"kinds": ["SURVEY"], "houseAds": False}, "houseAds"),
    ({"kinds": []}, "kinds"),
])
def test_banner_settings_need_banners(settings, field):
    with pytest.raises(Invalid) as refused:
        parse(SlotSettings, settings)
    assert (refused.value.code, refused.value.field) == ("invalid_field", field)


def test_the_snippet_and_the_query_of_a_slot():
    fixed = parse(SlotSettings, {"kinds": ["BANNER", "POLL"], "size": "728x90", "attachedTasks": True,
                                 "placement": 'top"><script>'})
    assert unit_snippet(fixed) == ('<div data-adnet-slot data-kind="BANNER,POLL" data-size="728x90" '
                                   'data-placement="top&quot;&gt;&lt;script&gt;" data-tasks></div>')
    query = serve_query("site_abcdefghijkl", fixed)
    assert (query.kinds, query.size, query.attached, query.placement, query.house) == (
        frozenset({"BANNER", "POLL"}), "728x90", True, 'top"><script>', True)
    without_house = parse(SlotSettings, {"kinds": ["BANNER"], "houseAds": False})
    assert unit_snippet(without_house) == '<div data-adnet-slot data-kind="BANNER" data-house="off"></div>'
    assert serve_query("site_abcdefghijkl", without_house).house is False
    responsive = parse(SlotSettings, {"kinds": ["BANNER"]})
    assert unit_snippet(responsive) == '<div data-adnet-slot data-kind="BANNER"></div>'
    assert serve_query("site_abcdefghijkl", responsive).size is None
