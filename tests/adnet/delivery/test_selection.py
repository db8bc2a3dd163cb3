"""Selection without HTTP: weights by price and pacing (clamped), the weighted draw, and the candidates."""

import random
from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest

from adnet.campaigns.eligibility import Controls
from adnet.delivery import selection
from adnet.delivery.clients import Client
from adnet.delivery.commands import ServeQuery
from adnet.delivery.index import CampaignEntry, CreativeEntry, Index, Scope, TaskEntry
from adnet.delivery.selection import (
    MAX_PACING,
    MIN_PACING,
    MIN_PRICE_SHARE,
    Candidate,
    candidates,
    pacing,
    pick,
    price_share,
)
from adnet.delivery.sites import SiteEntry
from adnet.delivery.targeting import Locator, Viewer
from adnet.tasks.config import TaskView
from adnet.tasks.models import TaskKind
from tests.factories import G

START = datetime(2026, 1, 1, tzinfo=UTC)
VIEWER = Viewer(Client("203.0.113.7", "Mozilla/5.0"), frozenset(), Locator())


def on(query: ServeQuery, **fields) -> SiteEntry:
    """The (verified) site the query names, with ``fields`` of its entry."""
    return SiteEntry(**{"id": query.site_id, "domain": "x.example", "verified": True, **fields})


def chosen(index: Index, query: ServeQuery, **site) -> list[str]:
    """The campaigns of the banner candidates of ``query`` on its site (with ``site``'s fields)."""
    return [option.campaign.id for option in candidates(index, query, START, VIEWER, on(query, **site))
            if option.campaign]


def entry(campaign_id: str = "cmp_a", *, cpm: int = 2 * G, cpc: int = 0, budget: int = 100 * G,
          remaining: int | None = None, days: int | None = 10, **fields) -> CampaignEntry:
    creative = CreativeEntry(id=f"ad_{campaign_id}", campaign_id=campaign_id, banner_url="https://b.example",
                                     target_url="https://t.example", description="", media_type="image",
                                     size="300x250")
    targeting = {"sizes": frozenset(), "placements": frozenset(), "site_allow": frozenset(),
                 "site_deny": frozenset(), "daily_cap": None, "spent_today": 0, **fields}
    return CampaignEntry(
        id=campaign_id, cpm=cpm, cpc=cpc, budget=budget, remaining=budget if remaining is None else remaining,
        starts_at=START, ends_at=START + timedelta(days=days) if days else None, creatives=(creative,), tasks=(),
        **targeting)


def test_pacing_favours_a_campaign_behind_its_even_spend():
    halfway = START + timedelta(days=5)
    on_track = entry(remaining=50 * G)
    behind = entry(remaining=90 * G)
    ahead = entry(remaining=20 * G)
    assert pacing(on_track, halfway) == pytest.approx(1.0)
    assert pacing(behind, halfway) > 1.0 > pacing(ahead, halfway)


def test_pacing_is_clamped_and_neutral_without_an_end():
    assert pacing(entry(remaining=100 * G), START + timedelta(days=9)) == MAX_PACING
    assert pacing(entry(remaining=1), START + timedelta(hours=1)) == MIN_PACING
    assert pacing(entry(days=None, remaining=1), START + timedelta(days=1)) == 1.0


def test_price_share_is_clamped_so_none_starves():
    best = selection.ecpm(entry(cpm=1000 * G))
    assert price_share(selection.ecpm(entry(cpm=1000 * G)), best) == 1.0
    assert price_share(selection.ecpm(entry(cpm=1)), best) == MIN_PRICE_SHARE
    assert price_share(selection.ecpm(entry(cpm=500 * G)), best) == pytest.approx(0.5)


def test_cpc_counts_at_the_assumed_click_through_rate():
    assert selection.ecpm(entry(cpm=0, cpc=G)) == pytest.approx(G * 1000 * selection.ASSUMED_CTR)


def test_weighted_draw_follows_the_weights_and_is_reproducible():
    options = [Candidate(3.0, campaign=entry("cmp_a")), Candidate(1.0, campaign=entry("cmp_b"))]

    def draws(seed: int, count: int) -> list[str]:
        rng = random.Random(seed)
        return [pick(options, rng).campaign.id for _ in range(count)]

    counts = Counter(draws(42, 4000))
    assert 2800 < counts["cmp_a"] < 3200 and counts["cmp_b"] == 4000 - counts["cmp_a"]
    assert draws(7, 50) == draws(7, 50)


def test_nothing_to_draw_is_none():
    assert pick([], random.Random(1)) is None


def test_candidates_respect_budget_unless_attached():
    index = Index(campaigns={"cmp_a": entry("cmp_a", remaining=0), "cmp_b": entry("cmp_b")})
    query = ServeQuery(site_id="site_x")
    assert chosen(index, query) == ["cmp_b"]
    attached = query.model_copy(update={"attached": True})
    assert set(chosen(index, attached)) == {"cmp_a", "cmp_b"}


def test_a_campaign_at_its_daily_cap_is_not_served_until_the_next_day():
    price = 2 * G // 1000
    index = Index(campaigns={"cmp_a": entry("cmp_a", daily_cap=10 * price, spent_today=9 * price)})
    query = ServeQuery(site_id="site_x")
    assert chosen(index, query) == ["cmp_a"]
    index.campaigns["cmp_a"].spent_today += price  # what tracking reports after billing one more impression
    assert candidates(index, query, START, VIEWER, on(query)) == []
    assert not index.campaigns["cmp_a"].has_budget()


def test_a_campaigns_site_rules_apply_to_its_units():
    view = TaskView(id="task_poll", kind=TaskKind.POLL, title="Poll", description="", campaign_id="cmp_a",
                    reward_points=0, reward_gs=0, config=None)  # selection never reads the view
    units = (TaskEntry(id="task_poll", campaign_id="cmp_denies", kind=TaskKind.POLL, starts_at=START, ends_at=None,
                       max_per_wallet=1, view=view, order=(START, "task_poll"), site_deny=frozenset({"site_denied"})),
             TaskEntry(id="task_only", campaign_id="cmp_allows", kind=TaskKind.POLL, starts_at=START, ends_at=None,
                       max_per_wallet=1, view=view, order=(START, "task_only"),
                       site_allow=frozenset({"site_allowed"})))
    index = Index(units=units)

    def served_on(site_id: str, **site) -> set[str]:
        query = ServeQuery(site_id=site_id, kinds="POLL")
        return {option.unit.id for option in candidates(index, query, START, VIEWER, on(query, **site))
                if option.unit}

    assert served_on("site_denied") == set()
    assert served_on("site_allowed") == {"task_poll", "task_only"}
    assert served_on("site_other") == {"task_poll"}
    # A unit offers a reward: an unverified site, where answering it pays nothing, is not offered one.
    assert served_on("site_allowed", verified=False) == set()


def test_campaign_sizes_restrict_a_size_request():
    sized = entry(sizes=frozenset({"728x90"}))
    assert sized.creatives_for("300x250") == []
    assert sized.creatives_for(None) == list(sized.creatives)


def test_a_slots_offers_are_remembered_until_the_campaigns_change():
    index = Index(campaigns={"cmp_a": entry("cmp_a"), "cmp_b": entry("cmp_b")})
    query = ServeQuery(site_id="site_x", size="300x250")
    assert set(chosen(index, query)) == {"cmp_a", "cmp_b"}
    assert len(index.offers) == 1
    index.campaigns["cmp_b"].remaining = 0  # a budget spent is decided per request, not remembered
    assert chosen(index, query) == ["cmp_a"]

    fresh = Index(campaigns={"cmp_a": entry("cmp_a", site_deny=frozenset({"site_x"})), "cmp_b": entry("cmp_b")})
    index.replace(Scope(campaigns=frozenset({"cmp_a"})), fresh)
    assert index.offers == {}
    assert candidates(index, query, START, VIEWER, on(query)) == []
    other = query.model_copy(update={"site_id": "site_y"})
    assert chosen(index, other) == ["cmp_a"]


def test_a_sites_controls_and_floor_choose_their_own_offers():
    index = Index(campaigns={"cmp_a": entry("cmp_a"), "cmp_b": entry("cmp_b", cpm=G)})
    query = ServeQuery(site_id="site_x")
    blocking = Controls(campaigns=frozenset({"cmp_a"}))
    assert chosen(index, query, controls=blocking) == ["cmp_b"]
    assert set(chosen(index, query)) == {"cmp_a", "cmp_b"}
    assert chosen(index, query, floor=2 * G) == ["cmp_a"]


def test_the_remembered_slots_are_bounded(monkeypatch):
    monkeypatch.setattr(selection, "MAX_REMEMBERED_SLOTS", 3)
    index = Index(campaigns={"cmp_a": entry("cmp_a")})
    for number in range(7):
        query = ServeQuery(site_id="site_x", placement=f"slot-{number}")
        assert chosen(index, query) == ["cmp_a"]
        assert len(index.offers) <= 3
