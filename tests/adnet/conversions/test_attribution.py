"""The rules of a conversion as a pure decision: every reason, in its order, and the split of a paid CPA."""

from datetime import UTC, datetime, timedelta

import pytest

from adnet.conversions.attribution import REASONS, Click, Facts, Outcome, decide

CLICKED = datetime(2026, 3, 1, 12, tzinfo=UTC)
WEEK = timedelta(days=7)


def facts(**overrides) -> Facts:
    return Facts(**{"occurred_at": CLICKED + timedelta(hours=1), "window": WEEK,
                    "click": Click(clicked_at=CLICKED, billable=True), "cpa": 1000, "remaining": 5000, **overrides})


def test_a_conversion_in_the_window_of_a_billed_click_pays_the_cpa_split_with_the_publisher():
    assert decide(facts(), 7000) == Outcome(attributed=True, paid=True, reason=None, cost=1000, publisher_amount=700)


def test_the_publisher_share_rounds_down_and_the_platform_keeps_the_rest():
    outcome = decide(facts(cpa=999), 7000)
    assert (outcome.cost, outcome.publisher_amount) == (999, 699)


def test_an_unpriced_goal_attributes_without_paying_or_a_reason():
    assert decide(facts(cpa=0), 7000) == Outcome(attributed=True, paid=False, reason=None)


@pytest.mark.parametrize(("overrides", "reason"), [
    ({"click": None}, "click_invalid"),
    ({"click": None, "click_reason": "outside_window"}, "outside_window"),
    ({"occurred_at": CLICKED - timedelta(seconds=1)}, "before_click"),
    ({"occurred_at": CLICKED + WEEK + timedelta(seconds=1)}, "outside_window"),
    ({"click": Click(clicked_at=CLICKED, billable=False)}, "click_filtered"),
    ({"site_refusal": "site_excluded"}, "site_excluded"),
    ({"site_refusal": "site_blocked"}, "site_blocked"),
    ({"wallet_slots_used": 1, "wallet_cap": 1}, "wallet_cap_reached"),
    ({"click": None, "click_reason": "wallet_unbound"}, "wallet_unbound"),
    ({"network_used": 3, "network_limit": 3}, "client_network_limit"),
])
def test_each_fraud_reason_keeps_the_conversion_from_its_click_and_from_pay(overrides, reason):
    outcome = decide(facts(**overrides), 7000)
    assert outcome == Outcome(attributed=False, paid=False, reason=reason)
    assert reason in REASONS


def test_the_window_is_inclusive_at_both_ends():
    assert decide(facts(occurred_at=CLICKED), 7000).paid
    assert decide(facts(occurred_at=CLICKED + WEEK), 7000).paid


def test_a_wallet_under_its_cap_attributes():
    assert decide(facts(wallet_slots_used=1, wallet_cap=2), 7000).paid


def test_the_first_reason_in_order_wins():
    outcome = decide(facts(occurred_at=CLICKED - timedelta(days=1), click=Click(CLICKED, billable=False),
                           site_refusal="site_excluded"), 7000)
    assert outcome.reason == "before_click"


def test_an_attributed_conversion_the_budget_cannot_pay_is_recorded_with_its_reason():
    assert decide(facts(remaining=999), 7000) == Outcome(attributed=True, paid=False, reason="budget_exhausted")


def test_an_attributed_conversion_past_the_daily_cap_is_not_paid():
    assert decide(facts(daily_cap=1500, spent_today=600), 7000).reason == "daily_cap_reached"
    assert decide(facts(daily_cap=1600, spent_today=600), 7000).paid


def test_a_client_network_under_its_limit_or_without_one_attributes():
    assert decide(facts(network_used=2, network_limit=3), 7000).paid
    assert decide(facts(network_used=50, network_limit=0), 7000).paid
    assert decide(facts(network_used=None, network_limit=3), 7000).paid


def test_the_wallet_cap_comes_before_the_client_network_limit():
    outcome = decide(facts(wallet_slots_used=1, wallet_cap=1, network_used=3, network_limit=3), 7000)
    assert outcome.reason == "wallet_cap_reached"


def test_a_view_through_follows_the_same_rules_with_its_window_of_hours():
    day = timedelta(hours=24)
    assert decide(facts(window=day, occurred_at=CLICKED + day), 7000).paid
    assert decide(facts(window=day, occurred_at=CLICKED + day + timedelta(seconds=1)), 7000).reason == (
        "outside_window")
