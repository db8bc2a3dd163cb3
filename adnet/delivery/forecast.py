"""Forecast before buying: for a campaign's settings as its form stands, how many serve requests a day match it, the
share of them it would likely win against the live campaigns, and how many days its budget would last at its price.

Load → decide → answer: ``forecast`` reads the last ``REQUEST_DAYS`` days of serve request aggregates
(``adnet.delivery.requests``) and takes the competing campaigns and the sites from the serving index this process
holds (the entries serving decides from, no database read of them); ``estimate`` decides, pure.

The model, per aggregate row (a site, UTC hour, size, country and device kind):

- the row matches the plan when the campaign may show on the site (``adnet.campaigns.eligibility.refusal``: its site
  lists, the site's controls), reaches the site's floor, has the size (any size when it names none; a request of no
  size takes any), and its targeting admits the country, the device kind and the hour (read in the campaign's time
  zone at the middle of the hour). Rules the aggregates do not hold (operating system, keywords, wallet audiences,
  placements, frequency caps) are not applied: for them the figure is an upper bound;
- the competitors on the row are the live campaigns of the index that match it by the same rules and can still pay;
- the plan's share of the row is its selection weight over the sum of the weights (``adnet.delivery.selection``:
  price share of the best eCPM x pacing, the plan at even pacing as a new campaign is), which is the probability
  that serving's weighted draw picks it when all of them are candidates.

Matching requests a day = the rows' requests / the days recorded; wins a day = sum of requests x share / days, capped by
what the daily cap buys; days = budget / the expected spend a day (an impression at the CPM plus clicks at
``ASSUMED_CTR``). Figures are told as the audience reach tells counts (``adnet.audiences.reach.rounded``): under
``THRESHOLD`` a day is "fewer than 100", others rounded down to a hundred; the share in whole percent."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from pydantic import Field

from adnet.audiences.reach import rounded
from adnet.campaigns.commands import SiteIds, Sizes
from adnet.campaigns.eligibility import refusal
from adnet.campaigns.models import Category
from adnet.campaigns.targeting import Targeting
from adnet.core.inputs import Amount, Command, Price
from adnet.delivery.index import CampaignEntry, Index
from adnet.delivery.requests import RequestRow, recorded
from adnet.delivery.selection import ASSUMED_CTR, ecpm, pacing, price_share
from adnet.delivery.sites import SiteEntry
from adnet.delivery.targeting import Location, Rules, compile_rules

HALF_HOUR = timedelta(minutes=30)


class ForecastQuery(Command):
    """A campaign's settings as its form stands: prices, budget, daily cap, sizes, site lists and targeting (every
    field optional but the prices and the budget); ``campaignId`` names the campaign being edited, so it is not
    counted as its own competitor."""

    campaign_id: str | None = Field(None, max_length=48, description="the campaign being edited, if any")
    cpm: Price = Field(description="G$ per 1000 billable impressions")
    cpc: Price = Field(description="G$ per billable click")
    budget: Amount = Field(description="what the campaign would be funded with")
    daily_cap: Amount | None = Field(None, description="the most it spends in a UTC day")
    sizes: Sizes = []
    site_allow: SiteIds = Field([], description="site ids it runs on; empty = every site")
    site_deny: SiteIds = Field([], description="site ids it never runs on")
    category: Category = Field(Category.OTHER, description="what it advertises (sites may block categories)")
    targeting: Targeting = Field(Targeting.model_validate({}), description="who, where and when it is shown")


@dataclass(frozen=True)
class Plan:
    """The planned campaign as selection sees it."""

    entry: CampaignEntry
    rules: Rules


def plan_of(query: ForecastQuery, advertiser_id: str, now: datetime) -> Plan:
    """``query`` as a campaign entry of the serving index, starting now with its whole budget left."""
    entry = CampaignEntry(
        id=query.campaign_id or "", cpm=query.cpm, cpc=query.cpc, budget=query.budget, remaining=query.budget,
        daily_cap=query.daily_cap, spent_today=0, starts_at=now, ends_at=None, sizes=frozenset(query.sizes),
        placements=frozenset(), site_allow=frozenset(query.site_allow), site_deny=frozenset(query.site_deny),
        creatives=(), tasks=(), advertiser_id=advertiser_id, category=query.category.value)
    return Plan(entry, compile_rules(query.targeting.stored()))


@dataclass(frozen=True)
class Estimate:
    """The forecast's exact figures (``told`` rounds them for advertisers)."""

    requests_per_day: float
    wins_per_day: float
    share: float
    spend_per_day: float
    budget_days: float | None
    days_recorded: float


@dataclass(frozen=True)
class Forecast:
    """What an advertiser is told: requests and wins a day rounded (None: fewer than ``THRESHOLD``), the share in
    percent, the days the budget lasts (None: it would not spend), and how many days of requests were recorded."""

    requests_per_day: int | None
    wins_per_day: int | None
    share_percent: int
    budget_days: int | None
    days_recorded: int
    estimate: Estimate = field(repr=False, compare=False)


def admits(entry: CampaignEntry, rules: Rules, site: SiteEntry, row: RequestRow) -> bool:
    """Whether a campaign may be a candidate for the requests of ``row`` on ``site``, as far as the aggregates tell:
    the site rules, the floor, the size, the country, the device kind and the schedule."""
    if refusal(site, entry, paid=False) is not None or ecpm(entry) < site.floor_for(""):
        return False
    return not (row.size and entry.sizes and row.size not in entry.sizes) and targeted(rules, row)


def targeted(rules: Rules, row: RequestRow) -> bool:
    """Whether a campaign's targeting admits the requests of ``row``: its country, device kind and hour (read in the
    campaign's time zone at the middle of the hour)."""
    if not rules.admits_device(row.device):
        return False
    if rules.zone is not None and not rules.on_schedule(row.hour + HALF_HOUR):
        return False
    return not (rules.geo_include or rules.geo_exclude) or rules.locates(
        Location(row.country) if row.country else None)


async def site_requests(site_allow: list[str], site_deny: list[str], targeting: Targeting, now: datetime) -> float:
    """How many serve requests a day of the last 30 days came to the sites a campaign runs on (``site_allow``, every
    site when empty, without ``site_deny``) that its targeting's country, device and schedule rules admit (the
    audience reach's requests a day, before its wallet share)."""
    found = await recorded(now, site_allow or None)
    rules = compile_rules(targeting.model_dump(mode="json", by_alias=False, include=set(Targeting.model_fields)))
    deny = frozenset(site_deny)
    total = sum(row.requests for row in found.rows if row.site_id not in deny and targeted(rules, row))
    return total / found.days if found.days > 0 else 0.0


def _edited(campaign: CampaignEntry, planned: CampaignEntry) -> bool:
    """Whether ``campaign`` is the one ``planned`` edits, which is not its own rival: the same id, of the same
    advertiser (another advertiser's id names a rival like any other)."""
    return campaign.id == planned.id and campaign.advertiser_id == planned.advertiser_id


def estimate(rows: Iterable[RequestRow], days: float, plan: Plan, index: Index, now: datetime) -> Estimate:
    """The forecast of ``plan`` over the recorded ``rows`` of ``days`` days, against the live campaigns of
    ``index`` (pure: no I/O)."""
    rivals = [campaign for campaign in index.campaigns.values()
              if not _edited(campaign, plan.entry) and campaign.live(now) and campaign.has_budget()]
    matched = won = 0.0
    for row in rows:
        site = index.sites.get(row.site_id)
        if site is None or not admits(plan.entry, plan.rules, site, row):
            continue
        others = [campaign for campaign in rivals if campaign.creatives_for(row.size or None)
                  and admits(campaign, campaign.targeting, site, row)]
        best = max([ecpm(plan.entry), *(ecpm(campaign) for campaign in others)])
        own = price_share(ecpm(plan.entry), best)
        total = own + sum(price_share(ecpm(campaign), best) * pacing(campaign, now) for campaign in others)
        matched += row.requests
        won += row.requests * own / total
    if days <= 0:
        return Estimate(0.0, 0.0, 0.0, 0.0, None, 0.0)
    cost = plan.entry.cpm / 1000 + plan.entry.cpc * ASSUMED_CTR
    wins = won / days
    if plan.entry.daily_cap is not None and cost > 0:
        wins = min(wins, plan.entry.daily_cap / cost)
    spend = wins * cost
    return Estimate(requests_per_day=matched / days, wins_per_day=wins, share=won / matched if matched else 0.0,
                    spend_per_day=spend, budget_days=plan.entry.budget / spend if spend > 0 else None,
                    days_recorded=days)


def told(found: Estimate) -> Forecast:
    """``found`` as an advertiser sees it: counts rounded and thresholded as the audience reach's."""
    return Forecast(requests_per_day=rounded(int(found.requests_per_day)),
                    wins_per_day=rounded(int(found.wins_per_day)),
                    share_percent=round(found.share * 100),
                    budget_days=None if found.budget_days is None else max(1, round(found.budget_days)),
                    days_recorded=int(found.days_recorded), estimate=found)


async def forecast(query: ForecastQuery, advertiser_id: str, index: Index, now: datetime) -> Forecast:
    """The forecast of ``query`` from the recorded requests of the last 30 days, against ``index``'s campaigns."""
    requests = await recorded(now)
    return told(estimate(requests.rows, requests.days, plan_of(query, advertiser_id, now), index, now))
