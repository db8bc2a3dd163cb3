"""A site's controls as serving applies them: what ``narrow`` takes out of a serve query and what ``admits``
lets through, compiled from what a site stores."""

from __future__ import annotations

from adnet.delivery.commands import ServeQuery
from adnet.delivery.controls import NO_CONTROLS, compile_controls


def query(**fields) -> ServeQuery:
    return ServeQuery.model_validate({"siteId": "site_abcdefghijkl", **fields})


def test_no_stored_controls_change_nothing():
    assert compile_controls({}) is NO_CONTROLS and compile_controls(None) is NO_CONTROLS
    asked = query(kind="BANNER,POLL", attached="1")
    assert NO_CONTROLS.narrow(asked) is asked
    assert NO_CONTROLS.admits("cmp_abcdefghijkl", "adv_abcdefghijkl", "gambling")


def test_narrow_takes_out_refused_kinds_and_attached_tasks():
    controls = compile_controls({"units": False, "attached_tasks": False})
    narrowed = controls.narrow(query(kind="BANNER,POLL,SURVEY", attached="1"))
    assert (narrowed.kinds, narrowed.attached) == (frozenset({"BANNER"}), False)
    by_kind = compile_controls({"refused_task_kinds": ["POLL", "QUIZ"]})
    narrowed = by_kind.narrow(query(kind="POLL,FEEDBACK", attached="1"))
    assert (narrowed.kinds, narrowed.attached) == (frozenset({"FEEDBACK"}), True)
    assert by_kind.task_kinds == frozenset({"POLL", "QUIZ"})


def test_admits_leaves_out_what_is_blocked_but_never_a_unit_of_no_campaign():
    controls = compile_controls({"blocked_advertisers": ["adv_blockedblock"], "blocked_campaigns": ["cmp_blockedblock"],
                                 "blocked_categories": ["gambling"]})
    assert not controls.admits("cmp_blockedblock", "adv_abcdefghijkl", "defi")
    assert not controls.admits("cmp_abcdefghijkl", "adv_blockedblock", "defi")
    assert not controls.admits("cmp_abcdefghijkl", "adv_abcdefghijkl", "gambling")
    assert controls.admits("cmp_abcdefghijkl", "adv_abcdefghijkl", "defi")
    assert controls.admits(None, None, None)
