"""The forecast (adnet.delivery.forecast) against a replay: a generated request log goes through serving, whose
counters record it; the forecast made from those aggregates is compared with what serving selects when the same log
is served again with the campaign live. Then the pure parts: which rows a campaign's rules admit, the share by
selection weights, the daily cap and the rounding."""

import random
from collections import Counter
from datetime import UTC, datetime, timedelta

from adnet.campaigns.targeting import Targeting
from adnet.core.ids import new_id
from adnet.delivery.clients import Client
from adnet.delivery.commands import ServeQuery
from adnet.delivery.forecast import ForecastQuery, estimate, forecast, plan_of, site_requests, targeted, told
from adnet.delivery.index import CampaignEntry, CreativeEntry, Index
from adnet.delivery.models import RequestHour
from adnet.delivery.requests import RequestRow
from adnet.delivery.retention import prune
from adnet.delivery.serving import serve
from adnet.delivery.sites import SiteEntry
from adnet.delivery.targeting import compile_rules, device_of
from tests.factories import G, make_campaign, make_creative, make_site

DESKTOP = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36"
MOBILE = ("Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
          "Version/17.0 Mobile/15E148 Safari/604.1")
# The forecast's wins may differ from the replay's by this share: the replay is one draw of serving's random pick.
TOLERANCE = 0.1


def request_log(site_ids: list[str], start: datetime, count: int, hours: int) -> list[tuple]:
    """``count`` serve requests spread over ``hours`` hours from ``start``, in time order: (time, site, size,
    country, User-Agent)."""
    rng = random.Random(7)
    log = [(start + timedelta(seconds=rng.uniform(0, hours * 3600)), rng.choice(site_ids),
            rng.choice(["300x250", "300x250", "728x90", None]), rng.choice(["DE", "DE", "US", "FR", None]),
            rng.choice([DESKTOP, DESKTOP, MOBILE])) for _ in range(count)]
    return sorted(log, key=lambda request: request[0])


async def replay(services, clock, log) -> Counter:
    """Serve every request of ``log`` at its time; how often each campaign was chosen."""
    chosen: Counter = Counter()
    for at, site_id, size, country, agent in log:
        clock.advance(seconds=(at - clock.now()).total_seconds())
        decision = await serve(services.serving, ServeQuery.model_validate({"siteId": site_id, "size": size}),
                               Client("203.0.113.9", agent, country=country))
        chosen[decision.banner.creative.campaign_id if decision.banner else None] += 1
    return chosen


async def test_the_forecast_matches_a_replay_of_recorded_requests(services, clock):
    news, games = await make_site(), await make_site()
    rival = await make_campaign(cpm=2 * G, cpc=0)
    await make_creative(rival)
    await make_creative(rival, width=728, height=90)
    german = await make_campaign(cpm=1 * G, cpc=0, targeting={"geo_include": ["DE"]})
    await make_creative(german)
    await services.serving.rebuild()
    start = clock.now().replace(minute=0, second=0, microsecond=0) + timedelta(hours=1)
    log = request_log([news.id, games.id], start, 3000, hours=48)

    await replay(services, clock, log)
    clock.advance(seconds=(start + timedelta(hours=48) - clock.now()).total_seconds())
    await services.serving.flush_counts()
    assert sum(await RequestHour.all().values_list("requests", flat=True)) == len(log)  # each counted once

    targeting = {"geoInclude": ["DE", "US"], "devicesInclude": ["desktop"], "hours": list(range(6, 22)),
                 "timeZone": "Europe/Berlin"}
    query = ForecastQuery.model_validate({"cpm": "3", "cpc": "0", "budget": "50", "sizes": ["300x250"],
                                          "siteAllow": [news.id], "targeting": targeting})
    found = await forecast(query, "adv_planner", services.serving.index, clock.now())
    rules = compile_rules(Targeting.model_validate(targeting).stored())
    matching = [request for request in log if request[1] == news.id and request[2] in ("300x250", None)
                and request[3] in ("DE", "US") and device_of(request[4])[0] == "desktop"
                and rules.on_schedule(request[0])]
    assert found.estimate.days_recorded == 2
    # Hours are read at their middle: a request is counted in its whole hour, so the schedule is exact here (whole
    # hours in a zone of whole-hour offset).
    assert round(found.estimate.requests_per_day * 2) == len(matching)

    planned = await make_campaign(cpm=3 * G, cpc=0, site_allow=[news.id], targeting=Targeting.model_validate(
        targeting).stored())
    await make_creative(planned)
    await services.serving.rebuild()
    chosen = await replay(services, clock, [(start + timedelta(hours=48) + (at - start), *rest)
                                            for at, *rest in log])
    expected = found.estimate.wins_per_day * 2
    assert abs(chosen[planned.id] - expected) <= TOLERANCE * expected, (chosen[planned.id], expected)
    # Not every matching request: the rivals win some of them, as serving draws.
    assert chosen[planned.id] < len(matching)


def entry(campaign_id: str, cpm: int, **fields) -> CampaignEntry:
    creative = CreativeEntry(f"ad_{campaign_id}", campaign_id, "https://cdn.example/a.png", "https://a.example", "",
                             "image", "300x250")
    defaults = {"cpc": 0, "budget": 100 * G, "remaining": 100 * G, "daily_cap": None, "spent_today": 0,
                "starts_at": datetime(2026, 1, 1, tzinfo=UTC), "ends_at": None, "sizes": frozenset(),
                "placements": frozenset(), "site_allow": frozenset(), "site_deny": frozenset(),
                "creatives": (creative,), "tasks": ()}
    return CampaignEntry(id=campaign_id, cpm=cpm, **{**defaults, **fields})


NOW = datetime(2026, 3, 2, 12, tzinfo=UTC)  # a Monday
SITE_A, SITE_B = new_id("site"), new_id("site")


def row(requests: int, *, site: str = SITE_A, hour: int = 10, size: str = "300x250", country: str = "DE",
        device: str = "desktop") -> RequestRow:
    return RequestRow(site, NOW.replace(hour=hour), size, country, device, requests)


def index_of(*campaigns: CampaignEntry, floor: int = 0) -> Index:
    sites = {site_id: SiteEntry(site_id, f"{site_id}.example", True, floor=floor) for site_id in (SITE_A, SITE_B)}
    return Index(sites=sites, campaigns={campaign.id: campaign for campaign in campaigns})


def query(**fields) -> ForecastQuery:
    return ForecastQuery.model_validate({"cpm": "2", "cpc": "0", "budget": "10", **fields})


def test_rows_are_admitted_by_country_device_and_schedule_in_the_campaign_zone():
    rules = compile_rules(Targeting.model_validate({"geoInclude": ["DE"], "devicesExclude": ["mobile"],
                                                    "days": ["mon"], "hours": [11],
                                                    "timeZone": "Europe/Berlin"}).stored())
    assert targeted(rules, row(1, hour=10))  # 10:30 UTC is 11:30 in Berlin on a Monday
    assert not targeted(rules, row(1, hour=11))
    assert not targeted(rules, row(1, hour=10, country="US"))
    assert not targeted(rules, row(1, hour=10, country=""))  # unknown: a geo rule never admits it, as serving
    assert not targeted(rules, row(1, hour=10, device="mobile"))
    assert targeted(compile_rules({}), row(1, country="", device="tablet"))


def test_alone_it_wins_every_matching_request_and_its_budget_lasts_by_its_price():
    found = estimate([row(3000), row(1000, site=SITE_B), row(500, size="728x90")], 2.0,
                     plan_of(query(sizes=["300x250"], siteDeny=[SITE_B]), "adv", NOW), index_of(), NOW)
    assert found.requests_per_day == 1500 and found.wins_per_day == 1500 and found.share == 1
    # 1500 impressions a day at 2 G$ CPM cost 3 G$ a day: 10 G$ last 3.33 days.
    assert abs(found.budget_days - 10 / 3) < 1e-9


def test_the_share_is_the_selection_weight_among_matching_rivals():
    equal = entry("cmp_equal", 2 * G)
    cheap = entry("cmp_cheap", 1 * G)
    german_only = entry("cmp_us", 2 * G, targeting=compile_rules({"geo_include": ["US"]}))
    other_size = entry("cmp_other", 2 * G, sizes=frozenset({"728x90"}))
    ended = entry("cmp_ended", 2 * G, ends_at=NOW - timedelta(days=1))
    spent = entry("cmp_spent", 2 * G, remaining=0)
    found = estimate([row(1000)], 1.0, plan_of(query(), "adv", NOW),
                     index_of(equal, cheap, german_only, other_size, ended, spent), NOW)
    assert abs(found.share - 1 / 2.5) < 1e-9  # weights 1 (itself), 1 (equal), 0.5 (half the best eCPM)
    assert abs(found.wins_per_day - 400) < 1e-6
    # Editing a campaign: it is not its own rival; another advertiser's campaign id does not take a rival away.
    own = entry("cmp_own", 2 * G, advertiser_id="adv")
    assert estimate([row(1000)], 1.0, plan_of(query(campaignId="cmp_own"), "adv", NOW), index_of(own, equal),
                    NOW).share == 1 / 2
    assert estimate([row(1000)], 1.0, plan_of(query(campaignId="cmp_equal"), "adv", NOW), index_of(own, equal),
                    NOW).share == 1 / 3


def test_a_floor_above_its_price_and_a_daily_cap_limit_it():
    assert estimate([row(1000)], 1.0, plan_of(query(), "adv", NOW), index_of(floor=3 * G), NOW).requests_per_day == 0
    capped = estimate([row(10_000)], 1.0, plan_of(query(dailyCap="4"), "adv", NOW), index_of(), NOW)
    assert abs(capped.wins_per_day - 2000) < 1e-6 and abs(capped.budget_days - 2.5) < 1e-9
    nothing = estimate([], 0.0, plan_of(query(), "adv", NOW), index_of(), NOW)
    assert nothing.budget_days is None and nothing.requests_per_day == 0


def test_figures_are_told_rounded_and_thresholded_like_the_audience_reach():
    low = told(estimate([row(99)], 1.0, plan_of(query(), "adv", NOW), index_of(), NOW))
    assert (low.requests_per_day, low.wins_per_day, low.share_percent) == (None, None, 100)
    high = told(estimate([row(1299)], 1.0, plan_of(query(), "adv", NOW), index_of(entry("cmp_r", 2 * G)), NOW))
    assert (high.requests_per_day, high.wins_per_day, high.share_percent) == (1200, 600, 50)


async def test_site_requests_count_the_campaign_sites_and_retention_keeps_thirty_days(services, clock):
    now = clock.now()
    old, recent = now - timedelta(days=31), now - timedelta(days=2, hours=1)
    await RequestHour.create(site_id=SITE_A, hour=old.replace(minute=0, second=0, microsecond=0), requests=900)
    for site_id, country, requests in ((SITE_A, "DE", 400), (SITE_A, "US", 200), (SITE_B, "DE", 1000)):
        await RequestHour.create(site_id=site_id, hour=recent.replace(minute=0, second=0, microsecond=0),
                                 country=country, device="desktop", requests=requests)
    german = Targeting.model_validate({"geoInclude": ["DE"]})
    assert abs(await site_requests([SITE_A], [], german, now) * 2 - 400) < 50  # a little over two days recorded
    assert await site_requests([], [SITE_A, SITE_B], german, now) == 0
    assert (await prune(now, retention_days=90)).request_hours == 1
    assert sum(await RequestHour.all().values_list("requests", flat=True)) == 1600
