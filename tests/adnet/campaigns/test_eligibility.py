"""The rule of where a campaign may be shown and paid (``adnet.campaigns.eligibility.refusal``), one test per rule,
without a database: the facts are those serving holds in memory (``SiteEntry``, ``CampaignEntry``, ``TaskEntry``)
or those read from a row (``facts_of``)."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from adnet.campaigns.eligibility import (
    NO_CAMPAIGN,
    REFUSALS,
    Controls,
    StoredSite,
    Terms,
    facts_of,
    refusal,
    refuse_unless_allowed,
)
from adnet.core.errors import Conflict, NotFound
from adnet.delivery.index import CampaignEntry, TaskEntry
from adnet.delivery.sites import SiteEntry
from adnet.tasks.config import TaskView
from adnet.tasks.models import TaskKind

START = datetime(2026, 1, 1, tzinfo=UTC)
SITE = "site_rulesrulesrule"
CAMPAIGN = Terms(campaign_id="cmp_rulesrulesrul", advertiser_id="adv_rulesrulesrul", category="defi")
WHAT_IS_SHOWN = [  # (kind, attached): a banner, a task attached to it, a standalone unit
    (None, False), ("QUIZ", True), ("POLL", False)]


def site(**fields) -> SiteEntry:
    return SiteEntry(**{"id": SITE, "domain": "rules.example", "verified": True, **fields})


def campaign(**fields) -> Terms:
    return Terms(**{**CAMPAIGN.__dict__, **fields})


@pytest.mark.parametrize(("kind", "attached"), WHAT_IS_SHOWN)
def test_nothing_refused_on_an_active_verified_site_the_campaign_runs_on(kind, attached):
    for paid in (False, True):
        assert refusal(site(), CAMPAIGN, kind, attached=attached, paid=paid) is None


@pytest.mark.parametrize(("kind", "attached"), WHAT_IS_SHOWN)
def test_an_inactive_site_shows_and_pays_nothing(kind, attached):
    for paid in (False, True):
        assert refusal(None, CAMPAIGN, kind, attached=attached, paid=paid) == "site_inactive"


@pytest.mark.parametrize(("kind", "attached"), WHAT_IS_SHOWN)
def test_an_unverified_site_pays_nothing_and_offers_no_reward(kind, attached):
    unverified = site(verified=False)
    assert refusal(unverified, CAMPAIGN, kind, attached=attached, paid=True) == "site_unverified"
    assert refusal(unverified, CAMPAIGN, kind, attached=attached, paid=False) is None  # a banner shown, not billed


@pytest.mark.parametrize(("kind", "attached"), WHAT_IS_SHOWN)
def test_site_deny_excludes_the_site(kind, attached):
    denying = campaign(site_deny=frozenset({SITE}))
    for paid in (False, True):
        assert refusal(site(), denying, kind, attached=attached, paid=paid) == "site_excluded"
    assert refusal(site(id="site_elsewhereelse"), denying, kind, attached=attached, paid=True) is None


@pytest.mark.parametrize(("kind", "attached"), WHAT_IS_SHOWN)
def test_site_allow_keeps_the_campaign_to_its_sites(kind, attached):
    allowing = campaign(site_allow=frozenset({"site_elsewhereelse"}))
    for paid in (False, True):
        assert refusal(site(), allowing, kind, attached=attached, paid=paid) == "site_excluded"
    assert refusal(site(id="site_elsewhereelse"), allowing, kind, attached=attached, paid=True) is None
    both = campaign(site_allow=frozenset({SITE}), site_deny=frozenset({SITE}))
    assert refusal(site(), both, kind, attached=attached, paid=True) == "site_excluded"  # a deny always wins


@pytest.mark.parametrize(("kind", "attached"), WHAT_IS_SHOWN)
@pytest.mark.parametrize("controls", [Controls(advertisers=frozenset({CAMPAIGN.advertiser_id})),
                                      Controls(campaigns=frozenset({CAMPAIGN.campaign_id})),
                                      Controls(categories=frozenset({CAMPAIGN.category}))],
                         ids=["advertiser", "campaign", "category"])
def test_what_the_sites_owner_blocks_is_refused(kind, attached, controls):
    for paid in (False, True):
        assert refusal(site(controls=controls), CAMPAIGN, kind, attached=attached, paid=paid) == "site_blocked"
    assert refusal(site(controls=controls), campaign(campaign_id="cmp_otherotherothe", advertiser_id="adv_otherother",
                                                     category="gaming"), kind, attached=attached, paid=True) is None


def test_a_kind_the_site_does_not_take_is_refused_and_a_banner_never():
    no_units, no_attached = site(controls=Controls(units=False)), site(controls=Controls(attached_tasks=False))
    by_kind = site(controls=Controls(task_kinds=frozenset({"POLL", "QUIZ"})))
    for paid in (False, True):
        assert refusal(no_units, CAMPAIGN, "POLL", paid=paid) == "kind_refused"
        assert refusal(no_attached, CAMPAIGN, "QUIZ", attached=True, paid=paid) == "kind_refused"
        assert refusal(by_kind, CAMPAIGN, "POLL", paid=paid) == "kind_refused"
        assert refusal(by_kind, CAMPAIGN, "QUIZ", attached=True, paid=paid) == "kind_refused"
        for refusing in (no_units, no_attached, by_kind):
            assert refusal(refusing, CAMPAIGN, paid=paid) is None  # the banner itself
    assert refusal(no_units, CAMPAIGN, "QUIZ", attached=True, paid=True) is None
    assert refusal(no_attached, CAMPAIGN, "POLL", paid=True) is None
    assert refusal(by_kind, CAMPAIGN, "SURVEY", paid=True) is None


def test_a_unit_of_no_campaign_answers_to_the_site_alone():
    blocking = Controls(advertisers=frozenset({"adv_rulesrulesrul"}), categories=frozenset({"defi"}))
    assert refusal(site(controls=blocking), NO_CAMPAIGN, "POLL", paid=True) is None
    assert refusal(site(controls=Controls(units=False)), NO_CAMPAIGN, "POLL", paid=True) == "kind_refused"
    assert refusal(site(verified=False), NO_CAMPAIGN, "POLL", paid=True) == "site_unverified"


def test_the_first_rule_that_fails_names_the_refusal_in_the_documented_order():
    everything_wrong = site(verified=False, controls=Controls(campaigns=frozenset({CAMPAIGN.campaign_id}),
                                                              units=False))
    denying = campaign(site_deny=frozenset({SITE}))
    assert refusal(None, denying, "POLL", paid=True) == REFUSALS[0] == "site_inactive"
    assert refusal(everything_wrong, denying, "POLL", paid=True) == REFUSALS[1] == "site_unverified"
    assert refusal(everything_wrong, denying, "POLL", paid=False) == REFUSALS[2] == "site_excluded"
    assert refusal(everything_wrong, CAMPAIGN, "POLL", paid=False) == REFUSALS[3] == "site_blocked"
    assert refusal(site(controls=Controls(units=False)), CAMPAIGN, "POLL", paid=False) == REFUSALS[4]


def test_the_serving_index_entries_are_the_facts_it_reads():
    view = TaskView(id="task_rulesrulesrul", kind=TaskKind.POLL, title="Poll", description="", campaign_id=None,
                    reward_points=0, reward_gs=0, config=None)
    unit = TaskEntry(id="task_rulesrulesrul", campaign_id=CAMPAIGN.campaign_id, kind=TaskKind.POLL, starts_at=START,
                     ends_at=None, max_per_wallet=1, view=view, order=(START, "task_rulesrulesrul"),
                     site_deny=frozenset({SITE}), advertiser_id=CAMPAIGN.advertiser_id, category="defi")
    entry = CampaignEntry(id=CAMPAIGN.campaign_id, cpm=1, cpc=0, budget=1, remaining=1, daily_cap=None,
                          spent_today=0, starts_at=START, ends_at=None, sizes=frozenset(), placements=frozenset(),
                          site_allow=frozenset(), site_deny=frozenset(), creatives=(), tasks=(),
                          advertiser_id=CAMPAIGN.advertiser_id, category="defi")
    assert refusal(site(), unit, "POLL", paid=True) == "site_excluded"
    assert refusal(site(controls=Controls(campaigns=frozenset({CAMPAIGN.campaign_id}))), entry,
                   paid=False) == "site_blocked"
    assert refusal(site(), entry, paid=True) is None


def row(**fields) -> dict:
    """A statement's row with ``FACT_COLUMNS`` (JSON columns as text, booleans as SQLite's integers)."""
    return {"rule_site_id": SITE, "rule_site_active": 1, "rule_site_verified": 1,
            "rule_site_controls": json.dumps({"units": False}), "rule_campaign_id": CAMPAIGN.campaign_id,
            "rule_advertiser_id": CAMPAIGN.advertiser_id, "rule_category": "defi",
            "rule_site_allow": "[]", "rule_site_deny": json.dumps([SITE]), "other": "kept", **fields}


def test_facts_are_read_from_a_row_and_taken_out_of_it():
    read = row()
    found, terms = facts_of(read)
    assert read == {"other": "kept"}
    assert found == StoredSite(id=SITE, verified=True, controls=Controls(units=False))
    assert terms == campaign(site_deny=frozenset({SITE}))
    assert facts_of(row(rule_site_active=0))[0] is None  # switched off or deleted: no active site
    assert facts_of(row(rule_site_id=None, rule_site_active=None))[0] is None
    assert facts_of(row(rule_campaign_id=None))[1] == NO_CAMPAIGN  # a unit of no campaign
    decoded = row(rule_site_controls={"blocked_categories": ["defi"]}, rule_site_deny=[], rule_site_allow=[SITE])
    found, terms = facts_of(decoded)  # a driver that decodes JSON itself
    assert refusal(found, terms, "POLL", paid=True) == "site_blocked"


def test_a_paying_path_answers_not_found_for_an_inactive_site_and_a_conflict_otherwise():
    with pytest.raises(NotFound):
        refuse_unless_allowed(None, CAMPAIGN, "POLL", attached=False, subject="unit")
    for refused_site, terms in ((site(verified=False), CAMPAIGN), (site(), campaign(site_deny=frozenset({SITE}))),
                                (site(controls=Controls(units=False)), CAMPAIGN)):
        with pytest.raises(Conflict) as refused:
            refuse_unless_allowed(refused_site, terms, "POLL", attached=False, subject="unit")
        assert refused.value.code == "not_allowed_on_site" and "reason" not in refused.value.details
    refuse_unless_allowed(site(), CAMPAIGN, "POLL", attached=False, subject="unit")
