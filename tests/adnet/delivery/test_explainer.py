"""The decision explainer without HTTP: for every rule kind, the explainer names the rule that kept a campaign out,
by serving's own rules (a candidate it names is one ``candidates`` offers); who sees what; sampling bounded."""

from datetime import UTC, datetime, timedelta

import pytest

from adnet.campaigns.eligibility import Controls
from adnet.campaigns.models import CampaignStatus
from adnet.campaigns.targeting import Targeting
from adnet.delivery.clients import Client
from adnet.delivery.commands import ServeQuery
from adnet.delivery.explainer import (
    PRIVATE_REASONS,
    REASONS,
    REVIEW_REFUSALS,
    Asker,
    Sample,
    Sampler,
    Supposed,
    Verdict,
    explain,
    for_asker,
    review_reasons,
    sample_of,
)
from adnet.delivery.index import CampaignEntry, Index
from adnet.delivery.models import DecisionSample
from adnet.delivery.retention import prune
from adnet.delivery.selection import candidates
from adnet.delivery.sites import SiteEntry
from adnet.delivery.targeting import Locator, Viewer, compile_rules
from tests.adnet.delivery.test_selection import START, entry, on
from tests.factories import G, make_campaign
from web.labels import DECISION_WORDS

QUERY = ServeQuery(site_id="site_a", size="300x250", placement="top")
BERLIN_DESKTOP = Supposed(country="DE", device="desktop", os="windows")


def targeted(**written) -> CampaignEntry:
    return entry(targeting=compile_rules(Targeting(**written).stored()))


def why(campaign: CampaignEntry, *, query: ServeQuery = QUERY, viewer: Viewer = BERLIN_DESKTOP,
        now: datetime = START + timedelta(hours=1), **site) -> str | None:
    """The reason the explainer names for ``campaign`` alone in the index; checked against serving's candidates."""
    index = Index(campaigns={campaign.id: campaign})
    where: SiteEntry = on(query, **site)
    [verdict] = explain(index, query, now, viewer, where)
    offered = [option.campaign.id for option in candidates(index, query, now, viewer, where) if option.campaign]
    assert (verdict.reason is None) == (offered == [campaign.id])  # the explainer says what serving decides
    return verdict.reason


def test_a_campaign_every_rule_allows_is_a_candidate_with_its_chance():
    index = Index(campaigns={"cmp_a": entry("cmp_a"), "cmp_b": entry("cmp_b", cpm=6 * G)})
    verdicts = explain(index, QUERY, START + timedelta(hours=1), BERLIN_DESKTOP, on(QUERY))
    assert [(verdict.campaign_id, verdict.reason) for verdict in verdicts] == [("cmp_b", None), ("cmp_a", None)]
    assert sum(verdict.chance for verdict in verdicts) == pytest.approx(1.0)
    assert verdicts[0].chance > verdicts[1].chance


def test_floor():
    assert why(entry(cpm=1 * G), floor=2 * G) == "below_floor"
    assert why(entry(cpm=1 * G), placement_floors={"top": 5 * G}) == "below_floor"


def test_placement():
    assert why(entry(placements=frozenset({"sidebar"}))) == "placement_excluded"


def test_site_allow_and_deny():
    assert why(entry(site_deny=frozenset({"site_a"}))) == "site_excluded"
    assert why(entry(site_allow=frozenset({"site_b"}))) == "site_excluded"


def test_publisher_controls_block():
    assert why(entry(), controls=Controls(campaigns=frozenset({"cmp_a"}))) == "site_blocked"
    assert why(entry(advertiser_id="adv_x"), controls=Controls(advertisers=frozenset({"adv_x"}))) == "site_blocked"
    assert why(entry(category="gambling"), controls=Controls(categories=frozenset({"gambling"}))) == "site_blocked"


def test_creatives():
    assert why(entry(), query=ServeQuery(site_id="site_a", size="728x90")) == "no_creative_of_size"
    bare = entry()
    bare.creatives = ()
    assert why(bare) == "no_approved_creative"


def test_flight():
    assert why(entry(), now=START - timedelta(hours=1)) == "not_started"
    assert why(entry(days=1), now=START + timedelta(days=2)) == "ended"


def test_budget():
    assert why(entry(remaining=0)) == "budget_exhausted"


def test_daily_cap():
    assert why(entry(daily_cap=10 * G, spent_today=10 * G)) == "daily_cap_reached"


def test_targeting_country():
    assert why(targeted(geo_include=["FR"])) == "targeting_country"
    assert why(targeted(geo_exclude=["DE"])) == "targeting_country"
    assert why(targeted(geo_include=["DE"])) is None


def test_targeting_device():
    assert why(targeted(devices_include=["mobile"])) == "targeting_device"


def test_targeting_os():
    assert why(targeted(os_include=["ios"])) == "targeting_os"


def test_targeting_schedule():
    # START is a Thursday, 01:00 UTC.
    assert why(targeted(days=["mon"], time_zone="UTC")) == "targeting_schedule"
    assert why(targeted(hours=[12], time_zone="UTC")) == "targeting_schedule"


def test_targeting_keywords():
    assert why(targeted(keywords_include=["defi"])) == "targeting_keywords"
    assert why(targeted(keywords_exclude=["defi"]),
               viewer=Supposed(country="DE", device="desktop", keywords=frozenset({"defi"}))) == "targeting_keywords"


def test_targeting_audience():
    assert why(targeted(audience_groups=[[{"kind": "txCount", "min": 1}]])) == "targeting_audience"


def test_frequency_cap():
    seen = Viewer(Client("203.0.113.7", "Mozilla/5.0"), frozenset(), Locator(), seen={"cmp_a": 3})
    assert why(entry(frequency_cap=3), viewer=seen) == "frequency_capped"
    assert why(entry(frequency_cap=4), viewer=seen) is None


def test_every_reason_has_words_in_the_one_catalogue():
    assert set(DECISION_WORDS) == {*REASONS, *PRIVATE_REASONS, "candidate", "shown", "other_campaigns"}


def test_an_advertiser_sees_its_own_campaigns_and_only_a_count_of_the_others():
    verdicts = [Verdict("cmp_mine", "adv_me", "targeting_country"),
                Verdict("cmp_theirs", "adv_them", None, chance=1.0),
                Verdict("cmp_shown", "adv_them", None, shown=2, reasons={"bot_user_agent": 2}),
                Verdict("cmp_out", "adv_them", "budget_exhausted")]
    seen = for_asker(verdicts, Asker(advertisers=frozenset({"adv_me"})))
    assert seen == [Verdict("cmp_mine", "adv_me", "targeting_country"), Verdict(None, None, None, decisions=2)]
    assert for_asker(verdicts, Asker(site_owner=True)) == verdicts
    assert for_asker(verdicts, Asker(operator=True)) == verdicts


def test_sampling_takes_one_in_every_n_and_holds_a_bounded_number():
    sampler = Sampler(every=3, limit=2)
    assert [sampler.due() for _ in range(7)] == [False, False, True, False, False, True, False]
    index = Index(campaigns={"cmp_a": entry(), "cmp_b": entry("cmp_b", remaining=0)})
    bot = Client("203.0.113.7", "Googlebot/2.1 (+http://www.google.com/bot.html)")
    for _ in range(5):
        sampler.keep(sample_of(index, QUERY, START + timedelta(hours=1), BERLIN_DESKTOP, on(QUERY), "cmp_a", bot))
    assert len(sampler.pending) == 2
    sample = sampler.pending[0]
    assert sample.verdicts == {"cmp_a": "", "cmp_b": "budget_exhausted"}
    assert (sample.country, sample.device, sample.filtered) == ("DE", "desktop", "bot_user_agent")
    assert sample.decided_at == datetime(2026, 1, 1, 1, tzinfo=UTC)


async def test_a_campaign_serving_does_not_hold_is_explained_by_its_review_state(app):
    made = {status: await make_campaign(status=status) for status in (*REVIEW_REFUSALS, CampaignStatus.APPROVED)}
    verdicts = {verdict.campaign_id: verdict.reason
                for verdict in await review_reasons(campaign.id for campaign in made.values())}
    assert verdicts == {campaign.id: REVIEW_REFUSALS.get(status, "not_loaded") for status, campaign in made.items()}
    assert verdicts[made[CampaignStatus.PAUSED].id] == "campaign_paused"


async def test_samples_are_written_once_kept_when_the_database_fails_and_pruned_after_a_week(app, clock, monkeypatch):
    sampler = Sampler(every=1)
    now = clock.now()
    for age in (timedelta(days=8), timedelta(days=1)):
        sampler.keep(Sample(now - age, "site_a", "top", "300x250", "DE", "desktop", "NONE", {"cmp_a": "ended"}))

    async def refused(*_: object, **__: object) -> None:
        raise ConnectionError("database away")

    with monkeypatch.context() as patched:
        patched.setattr(DecisionSample, "bulk_create", refused)
        with pytest.raises(ConnectionError):
            await sampler.flush()
    assert len(sampler.pending) == 2
    assert await sampler.flush() == 2 and await sampler.flush() == 0
    assert await DecisionSample.all().count() == 2
    assert (await prune(now, retention_days=90)).samples == 1
    assert await DecisionSample.all().values_list("decided_at", flat=True) == [now - timedelta(days=1)]
