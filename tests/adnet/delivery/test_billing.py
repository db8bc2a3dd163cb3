"""The billing rules of a tracking batch, decided without a database (``adnet.delivery.billing``): every reason,
the order in which they apply, and batches whose events use up what the events after them find."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

from adnet.config import RateLimit
from adnet.delivery.billing import Limits, decide, tally, windows_of
from adnet.delivery.caps import Caps
from adnet.delivery.clients import Client
from adnet.delivery.commands import TrackEvent
from adnet.delivery.events import PendingEvent
from adnet.delivery.models import EventType
from adnet.delivery.tokens import TokenClaims
from adnet.money import ledger

NOW = datetime(2026, 3, 2, 12, 0, 30, tzinfo=UTC)
PRICE = 3_000_000_000_000_000  # a 3 G$ CPM's impression
CLICK_PRICE = 200_000_000_000_000_000
SHARE_BPS = 7_000
CAPS = Caps(site_impressions=RateLimit(5, 300), site_clicks=RateLimit(2, 300),
            campaign_impressions=RateLimit(3, 300), campaign_clicks=RateLimit(1, 300))
RICH = 10**24


def event(number: int = 0, *, kind: EventType = EventType.IMPRESSION, campaign: str = "cmp_a", site: str = "site_a",
          ip: str = "203.0.113.7", token: str | None = None, viewer: str | None = None, reason: str | None = None,
          price: int | None = None) -> PendingEvent:
    token_ref = token if token is not None else f"tok{number}"
    return PendingEvent(
        reported=TrackEvent(type=kind, campaign_id=campaign, ad_id="ad_1", site_id=site, fingerprint=f"fp{number}",
                            rendered=True, viewport_visible=True),
        client=Client(ip=ip, user_agent="Mozilla/5.0"), received_at=NOW, reason=reason, token_ref=token_ref,
        price=price if price is not None else (PRICE if kind == EventType.IMPRESSION else CLICK_PRICE),
        claims=TokenClaims(ad_id="ad_1", campaign_id=campaign, site_id=site, placement="top", size="300x250",
                           wallet=None, issued_at_ms=0, expires_at_ms=0, click_active=True, off_site=False,
                           client="c", viewer=viewer),
        country="DE", device="desktop")


def budget(**overrides: object) -> Limits:
    values: dict = {"remaining": {"cmp_a": RICH, "cmp_b": RICH}, "daily_caps": {"cmp_a": None, "cmp_b": None}}
    values.update(overrides)
    return Limits(**values)


def reasons(events: list[PendingEvent], limits: Limits) -> list[str | None]:
    decided = decide([(item, item.reason) for item in events], limits, CAPS, SHARE_BPS, NOW)
    return [decision.reason for decision in decided.decisions]


def test_an_event_nothing_stands_against_is_billed_at_its_price_with_the_publishers_share():
    decided = decide([(event(), None)], budget(), CAPS, SHARE_BPS, NOW)

    [decision] = decided.decisions
    assert decision.billable and decision.cost == PRICE
    assert decision.publisher_amount == PRICE * 7 // 10
    assert decided.spent == {"cmp_a": PRICE}


def test_a_reason_from_before_the_batch_stands_and_costs_nothing():
    decided = decide([(event(reason="domain_mismatch"), "domain_mismatch"), (event(1), "token_reused")], budget(),
                     CAPS, SHARE_BPS, NOW)

    assert [(d.reason, d.cost, d.publisher_amount) for d in decided.decisions] == [
        ("domain_mismatch", 0, 0), ("token_reused", 0, 0)]
    assert decided.spent == {} and decided.billed_in == {}


def test_a_click_without_a_billable_impression_of_its_token_is_not_billed():
    assert reasons([event(kind=EventType.CLICK, token="t1")], budget()) == ["click_without_impression"]
    assert reasons([event(kind=EventType.CLICK, token="t1")], budget(viewed=frozenset({"t1"}))) == [None]


def test_a_click_after_its_impression_in_the_same_batch_is_billed_and_one_after_a_refused_impression_is_not():
    assert reasons([event(0, token="t1"), event(1, kind=EventType.CLICK, token="t1")], budget()) == [None, None]
    assert reasons([event(0, token="t1", reason="not_viewable"), event(1, kind=EventType.CLICK, token="t1")],
                   budget()) == ["not_viewable", "click_without_impression"]


def test_the_client_networks_cap_per_campaign_counts_what_the_window_used_and_what_the_batch_billed():
    # 3 impressions per network and campaign per 300 s: one used before, two billed now, the fourth refused.
    window = windows_of(event(), CAPS, {}, NOW).client[1][0]
    limits = budget(used={window: 1})

    assert reasons([event(n) for n in range(3)], limits) == [None, None, "client_rate_exceeded"]


def test_the_cap_per_site_applies_across_campaigns_and_another_network_has_its_own():
    events = [event(n, campaign="cmp_a" if n % 2 else "cmp_b") for n in range(6)]
    assert reasons(events, budget()) == [None] * 5 + ["client_rate_exceeded"]
    assert reasons([*events[:5], event(5, ip="198.51.100.9")], budget()) == [None] * 6


def test_a_viewer_past_the_campaigns_frequency_cap_is_not_billed_and_a_viewer_without_a_key_is_not_counted():
    limits = budget(frequency_caps={"cmp_a": (2, 86_400)})
    viewers = [event(n, viewer="v1", ip=f"203.0.{n}.1") for n in range(3)]

    assert reasons(viewers, limits) == [None, None, "frequency_capped"]
    assert reasons([event(n, ip=f"203.0.{n}.1") for n in range(3)], limits) == [None, None, None]


def test_a_campaign_that_cannot_pay_the_price_is_not_billed_and_its_spend_lowers_what_the_next_finds():
    limits = budget(remaining={"cmp_a": 2 * PRICE})
    events = [event(n, ip=f"203.0.{n}.1") for n in range(3)]

    assert reasons(events, limits) == [None, None, "budget_exhausted"]
    assert reasons([event(price=PRICE)], budget(remaining={})) == ["budget_exhausted"]


def test_a_price_past_the_daily_cap_is_not_billed_counting_the_days_spend_before_and_in_the_batch():
    spend = windows_of(event(), CAPS, {}, NOW).spend
    limits = budget(daily_caps={"cmp_a": 3 * PRICE}, used={spend: PRICE})
    events = [event(n, ip=f"203.0.{n}.1") for n in range(3)]

    assert reasons(events, limits) == [None, None, "daily_cap_reached"]
    assert reasons([event()], budget(daily_caps={"cmp_a": PRICE})) == [None]  # a cap reached exactly is not passed


def test_where_several_rules_apply_the_first_names_the_reason():
    impression = event(viewer="v")
    windows = windows_of(impression, CAPS, {"cmp_a": (1, 3600)}, NOW)
    assert windows.frequency is not None
    everything_full = {windows.client[1][0]: 3, windows.frequency[0]: 1, windows.spend: PRICE}
    broke = {"remaining": {"cmp_a": 0}, "daily_caps": {"cmp_a": PRICE}, "frequency_caps": {"cmp_a": (1, 3600)}}

    assert reasons([event(kind=EventType.CLICK, viewer="v")], Limits(**broke, used=everything_full)) == [
        "click_without_impression"]
    assert reasons([impression], Limits(**broke, used=everything_full)) == ["client_rate_exceeded"]
    del everything_full[windows.client[1][0]]
    assert reasons([impression], Limits(**broke, used=everything_full)) == ["frequency_capped"]
    del everything_full[windows.frequency[0]]
    assert reasons([impression], Limits(**broke, used=everything_full)) == ["budget_exhausted"]
    assert reasons([impression], Limits(**{**broke, "remaining": {"cmp_a": RICH}}, used=everything_full)) == [
        "daily_cap_reached"]


def test_the_order_of_the_rules_is_the_documented_one():
    from adnet.delivery.tracking import REASONS

    rules = ["click_without_impression", "client_rate_exceeded", "frequency_capped", "budget_exhausted",
             "daily_cap_reached"]
    assert [reason for reason in REASONS if reason in rules] == rules


def test_what_the_billed_events_add_to_their_windows():
    limits = budget(frequency_caps={"cmp_a": (5, 3600)})
    decided = decide([(event(0, viewer="v"), None), (event(1, viewer="v", reason="not_viewable"), "not_viewable")],
                     limits, CAPS, SHARE_BPS, NOW)
    windows = windows_of(event(0, viewer="v"), CAPS, limits.frequency_caps, NOW)

    assert decided.billed_in == {**{window: 1 for window, _cap in windows.client}, windows.frequency[0]: 1,
                                 windows.spend: PRICE}


def test_a_clients_window_starts_on_the_epochs_grid_when_it_came_and_spend_on_the_utc_day_of_the_batch():
    late = replace(event(), received_at=NOW + timedelta(minutes=7))
    windows = windows_of(late, CAPS, {}, NOW + timedelta(hours=12))

    assert {start for _key, start in (window for window, _cap in windows.client)} == {
        datetime(2026, 3, 2, 12, 5, tzinfo=UTC)}
    assert windows.spend == ("spend:cmp_a", datetime(2026, 3, 3, tzinfo=UTC))


def test_the_tally_balances_the_ledger_and_counts_every_event_and_each_billed_one():
    events = [event(0, token="t1"), event(1, kind=EventType.CLICK, token="t1"), event(2, reason="bot_user_agent")]
    decided = decide([(item, item.reason) for item in events], budget(), CAPS, SHARE_BPS, NOW)
    tallies = tally(decided.decisions)

    cost = PRICE + CLICK_PRICE
    share = PRICE * 7 // 10 + CLICK_PRICE * 7 // 10
    assert dict(tallies.legs) == {ledger.campaign("cmp_a"): -cost, ledger.site("site_a"): share,
                                  ledger.platform(): cost - share}
    assert sum(tallies.legs.values()) == 0
    assert dict(tallies.stats[("site_a", NOW.date())]) == {
        "impressions": 2, "billable_impressions": 1, "clicks": 1, "billable_clicks": 1}
    assert tallies.traffic[(NOW.date(), "site_a", "cmp_a", EventType.IMPRESSION.value, "bot_user_agent")] == [1, 0, 0]
    assert tallies.reports[(NOW.date(), "cmp_a", "site_a", "top", "DE", "desktop")] == [1, 1, cost, share]
