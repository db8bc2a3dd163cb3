"""Selection: which of the candidates a request may be shown wins, by a weighted draw.

A campaign is a candidate when it may show on the site (``adnet.campaigns.eligibility.refusal``, the rule every path
that pays applies too: the campaign's site rules, the site's blocks and the kinds it takes; for a unit, which
offers a reward, also the site's verification), runs in the placement, is live, can pay (or the slot takes attached
tasks), has a creative of the size asked for, its targeting rules allow the viewer now
(``adnet.delivery.targeting``), the viewer has not reached its frequency cap (``adnet.delivery.frequency``), and its
eCPM reaches the floor its publisher set for the site or placement (``adnet.delivery.house_ads``). A banner slot no
candidate fills shows one of the site's house ads, if it has one that fits (``house_ad_for``).

Weight = price x pacing, each clamped (price to [``MIN_PRICE_SHARE``, 1] of the best eCPM on offer, pacing to
[``MIN_PACING``, ``MAX_PACING``]), so the best offer wins most often, a campaign behind its even spend catches up,
and no candidate starves. The random source is the service's, injectable for tests.

Each rule says which it is when it keeps a campaign out (``slot_refusal``, ``request_refusal``), so the decision
explainer (``adnet.delivery.explainer``) asks the very functions serving asks.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import datetime

from adnet.campaigns.eligibility import refusal
from adnet.delivery.commands import BANNER, ServeQuery
from adnet.delivery.controls import UNIT_KINDS
from adnet.delivery.index import CampaignEntry, CreativeEntry, Index, TaskEntry
from adnet.delivery.rotation import creative_shares
from adnet.delivery.sites import HouseAdEntry, SiteEntry
from adnet.delivery.targeting import Viewer

# Click-through rate assumed when turning a CPC into an eCPM (0.2 %, a typical display banner).
ASSUMED_CTR = 0.002
MIN_PRICE_SHARE = 0.05
MIN_PACING = 0.25
MAX_PACING = 4.0


@dataclass(frozen=True, slots=True)
class Candidate:
    """A possible answer: a campaign's creative, or a standalone unit."""

    weight: float
    campaign: CampaignEntry | None = None
    creative: CreativeEntry | None = None
    unit: TaskEntry | None = None


@dataclass(frozen=True, slots=True)
class Offer:
    """A campaign that may fill a banner slot as far as the rules that change only with the index go (the site
    and placement it runs on, the site's floor and controls, the size): its creatives of that size and its eCPM."""

    campaign: CampaignEntry
    creatives: list[CreativeEntry]
    ecpm: float


# Slots whose offers an index remembers at most (placement labels are the page's own text).
MAX_REMEMBERED_SLOTS = 10_000


def candidates(index: Index, query: ServeQuery, now: datetime, viewer: Viewer, site: SiteEntry) -> list[Candidate]:
    """Everything ``query`` may show ``viewer`` now on ``site``, each with its selection weight."""
    found: list[Candidate] = []
    kinds = query.kinds
    if BANNER in kinds:
        admitted = [offer for offer in offers(index, query, site)
                    if request_refusal(offer.campaign, query, viewer, now) is None]
        best = max((offer.ecpm for offer in admitted), default=0.0)
        for offer in admitted:
            campaign, creatives = offer.campaign, offer.creatives
            weight = price_share(offer.ecpm, best) * pacing(campaign, now)
            if len(creatives) == 1:
                found.append(Candidate(weight, campaign, creatives[0]))
                continue
            shares = creative_shares(campaign, creatives, index.creative_stats)
            for creative, share in zip(creatives, shares, strict=True):
                found.append(Candidate(weight * share, campaign, creative))
    if kinds & UNIT_KINDS:
        for unit in index.units:
            if unit.kind.value in kinds and unit.live(now) and refusal(site, unit, unit.kind.value, paid=True) is None:
                found.append(Candidate(1.0, unit=unit))
    return found


def offers(index: Index, query: ServeQuery, site: SiteEntry) -> list[Offer]:
    """The campaigns that may show their banners on ``site`` (``refusal``), run in the slot's placement, reach its
    floor and have creatives of its size: remembered by the index per slot, floor and site controls until its
    campaigns change (what is left to decide per request: the flight, the budget, the targeting and the viewer's
    frequency cap)."""
    floor = site.floor_for(query.placement)
    slot = (site.id, query.placement, query.size, floor, site.controls)
    found = index.offers.get(slot)
    if found is None:
        found = []
        for campaign in index.campaigns.values():
            if slot_refusal(campaign, query, site, floor) is None:
                found.append(Offer(campaign, campaign.creatives_for(query.size), ecpm(campaign)))
        if len(index.offers) >= MAX_REMEMBERED_SLOTS:
            index.offers.clear()
        index.offers[slot] = found
    return found


def slot_refusal(campaign: CampaignEntry, query: ServeQuery, site: SiteEntry, floor: int) -> str | None:
    """The first rule that keeps ``campaign``'s banner from the slot ``query`` asks on ``site`` whatever the viewer
    and the moment (``floor``: the site's or placement's), named as the decision explainer names it
    (``adnet.delivery.explainer.REASONS``); None when none does."""
    if ecpm(campaign) < floor:
        return "below_floor"
    if not campaign.fits(query.placement):
        return "placement_excluded"
    refused = refusal(site, campaign, paid=False)
    if refused is not None:
        return refused
    if not campaign.creatives:
        return "no_approved_creative"
    return None if campaign.creatives_for(query.size) else "no_creative_of_size"


def request_refusal(campaign: CampaignEntry, query: ServeQuery, viewer: Viewer, now: datetime) -> str | None:
    """The first rule that keeps ``campaign`` from this request, once the slot admits it: its flight
    (``CampaignEntry.flight_refusal``), its money (``CampaignEntry.budget_refusal``; a slot that takes attached tasks
    shows a campaign whatever its budget), its targeting (``Rules.refusal``) and the viewer's frequency cap
    (``frequency_capped``); None when none does."""
    flight = campaign.flight_refusal(now)
    if flight is not None:
        return flight
    if not query.attached:
        money = campaign.budget_refusal()
        if money is not None:
            return money
    targeted = campaign.targeting.refusal(viewer, now)
    if targeted is not None:
        return targeted
    return "frequency_capped" if viewer.capped(campaign.id, campaign.frequency_cap) else None


def house_ad_for(site: SiteEntry, query: ServeQuery, rng: random.Random) -> HouseAdEntry | None:
    """One of the site's house ads that fits a banner slot no paid campaign fills (of the size asked for), drawn
    evenly; None when the slot takes no banner, turns house ads off (``house=0``) or none fits."""
    if BANNER not in query.kinds or not query.house:
        return None
    fitting = [ad for ad in site.house_ads if query.size is None or ad.size == query.size]
    return rng.choice(fitting) if fitting else None


def ecpm(campaign: CampaignEntry) -> float:
    """Expected revenue per 1000 impressions: the CPM plus clicks at the assumed click-through rate."""
    return float(campaign.cpm) + float(campaign.cpc) * 1000 * ASSUMED_CTR


def pacing(campaign: CampaignEntry, now: datetime) -> float:
    """How far the campaign is behind (> 1) or ahead (< 1) of spending its budget evenly over its flight."""
    flight = campaign.flight_seconds
    if flight is None or campaign.budget <= 0:
        return 1.0
    elapsed = _clamp((now - campaign.starts_at).total_seconds() / flight, 0.0, 1.0) if flight > 0 else 1.0
    spent = _clamp(1 - campaign.remaining / campaign.budget, 0.0, 1.0)
    return _clamp((elapsed + 0.01) / (spent + 0.01), MIN_PACING, MAX_PACING)


def price_share(price: float, best_ecpm: float) -> float:
    """An offer's eCPM as a share of the best one on offer, clamped so none starves."""
    return _clamp(price / best_ecpm, MIN_PRICE_SHARE, 1.0) if best_ecpm > 0 else 1.0


def _clamp(value: float, low: float, high: float) -> float:
    return low if value < low else high if value > high else value


def pick(options: list[Candidate], rng: random.Random) -> Candidate | None:
    """A weighted random draw; None when there is nothing to serve."""
    if not options:
        return None
    total = sum(option.weight for option in options)
    point = rng.random() * total
    for option in options:
        point -= option.weight
        if point < 0:
            return option
    return options[-1]
