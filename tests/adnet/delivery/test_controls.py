"""A site's controls as serving applies them: what ``narrow`` takes out of a serve query and what ``admits`` and
``accepts`` let through, compiled from what a site stores."""

from __future__ import annotations

from adnet.campaigns.eligibility import NO_CONTROLS, controls_of
from adnet.delivery.commands import ServeQuery
from adnet.delivery.controls import SiteControls, narrow


def query(**fields) -> ServeQuery:
    return ServeQuery.model_validate({"siteId": "site_abcdefghijkl", **fields})


def stored(**fields) -> dict:
    """What ``set_controls`` stores for the controls ``fields`` (as JSON names them)."""
    return SiteControls.model_validate(fields).model_dump(mode="json", by_alias=False)


def test_no_stored_controls_change_nothing():
    assert controls_of({}) is NO_CONTROLS and controls_of(None) is NO_CONTROLS
    assert controls_of(stored()) == NO_CONTROLS
    asked = query(kind="BANNER,POLL", attached="1")
    assert narrow(NO_CONTROLS, asked) is asked
    assert NO_CONTROLS.admits("cmp_abcdefghijkl", "adv_abcdefghijkl", "gambling")


def test_narrow_takes_out_refused_kinds_and_attached_tasks():
    controls = controls_of(stored(units=False, attachedTasks=False))
    narrowed = narrow(controls, query(kind="BANNER,POLL,SURVEY", attached="1"))
    assert (narrowed.kinds, narrowed.attached) == (frozenset({"BANNER"}), False)
    by_kind = controls_of(stored(refusedTaskKinds=["POLL", "QUIZ"]))
    narrowed = narrow(by_kind, query(kind="POLL,FEEDBACK", attached="1"))
    assert (narrowed.kinds, narrowed.attached) == (frozenset({"FEEDBACK"}), True)
    assert by_kind.task_kinds == frozenset({"POLL", "QUIZ"})


def test_accepts_banners_always_and_tasks_and_units_as_the_site_says():
    assert NO_CONTROLS.accepts(None) and NO_CONTROLS.accepts("POLL") and NO_CONTROLS.accepts("QUIZ", attached=True)
    no_units = controls_of(stored(units=False))
    assert no_units.accepts(None) and not no_units.accepts("POLL") and no_units.accepts("QUIZ", attached=True)
    no_attached = controls_of(stored(attachedTasks=False))
    assert no_attached.accepts("POLL") and not no_attached.accepts("QUIZ", attached=True)
    by_kind = controls_of(stored(refusedTaskKinds=["POLL", "QUIZ"]))
    assert not by_kind.accepts("POLL") and not by_kind.accepts("QUIZ", attached=True)
    assert by_kind.accepts("SURVEY") and by_kind.accepts("VISIT_URL", attached=True) and by_kind.accepts(None)


def test_admits_leaves_out_what_is_blocked_but_never_a_unit_of_no_campaign():
    controls = controls_of(stored(blockedAdvertisers=["adv_blockedblock"], blockedCampaigns=["cmp_blockedblock"],
                                  blockedCategories=["gambling"]))
    assert not controls.admits("cmp_blockedblock", "adv_abcdefghijkl", "defi")
    assert not controls.admits("cmp_abcdefghijkl", "adv_blockedblock", "defi")
    assert not controls.admits("cmp_abcdefghijkl", "adv_abcdefghijkl", "gambling")
    assert controls.admits("cmp_abcdefghijkl", "adv_abcdefghijkl", "defi")
    assert controls.admits(None, None, None)
