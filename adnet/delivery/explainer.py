"""Why a campaign did or did not serve: the decision explainer, for the people who own the decision.

Two answers, both per candidate campaign with the first rule that kept it out, named as in ``REASONS``:

- **Now**: the serving index in memory is asked for a slot (site, placement, size) and a viewer the asker describes
  (``Supposed``: a country, a device, an operating system, the page's keywords; no proven wallet and no
  impressions seen, so wallet audiences exclude and frequency caps never do). The rules are serving's own:
  ``adnet.delivery.selection.slot_refusal`` and ``request_refusal`` (which ``candidates`` and ``offers`` ask too),
  so the explainer cannot say other than what serving decides. A campaign the index does not hold is explained by
  its review state, read from the database (``review_reasons``). A campaign every rule admits is a candidate, with
  its chance of the weighted draw (price and pacing, ``adnet.delivery.selection``).
- **Recently**: each serving process samples one in every ``SAMPLE_EVERY`` of its serve decisions (``Sampler``): the
  slot, the viewer's country and device, what was shown and every index campaign's first excluding rule, held in a
  bounded buffer in memory and written by the ``fill-counts`` job (``Sampler.flush``) to ``decision_sample``, which
  the retention job empties after ``SAMPLES_KEPT``. A sample is a few hundred bytes and one sampled decision
  evaluates the rules once more, so serving's cost per request stays flat. ``recent`` tallies the samples of a site
  (optionally of a placement, size, country, device and some campaigns) per campaign and reason.

Who sees what (``Asker``, ``for_asker``): an operator sees everything; a site's owner sees every candidate on its
site; an advertiser sees its own campaigns and, of the others, only how many were candidates. The reasons the
tracking filter keeps from billing (``PRIVATE_REASONS``, here a crawler's User-Agent on a sampled decision) are
told only to the site's owner, the campaign's advertiser and operators, as the traffic reports do.
"""

from __future__ import annotations

import logging
from collections import Counter, deque
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from adnet.campaigns.models import Campaign, CampaignStatus
from adnet.core.errors import NotFound
from adnet.delivery.clients import Client
from adnet.delivery.commands import BANNER, ExplainQuery, ServeQuery
from adnet.delivery.controls import narrow
from adnet.delivery.index import Index
from adnet.delivery.models import DecisionSample
from adnet.delivery.selection import candidates, request_refusal, slot_refusal
from adnet.delivery.sites import SiteEntry
from adnet.delivery.targeting import TARGETING_REFUSALS, Location, Locator, Viewer

if TYPE_CHECKING:
    from adnet.delivery.serving import Server

log = logging.getLogger(__name__)

SAMPLE_EVERY = 100
MAX_PENDING = 1000
SAMPLES_KEPT = timedelta(days=7)
MAX_RECENT_SAMPLES = 20_000

REVIEW_REFUSALS = {CampaignStatus.DRAFT: "campaign_draft", CampaignStatus.REVIEW: "campaign_in_review",
                   CampaignStatus.PAUSED: "campaign_paused", CampaignStatus.ENDED: "campaign_ended",
                   CampaignStatus.REJECTED: "campaign_rejected"}
# Every reason the explainer names, in the order serving asks (the review state first: such a campaign is not in the
# index at all). ``web.labels.DECISION_WORDS`` says each in words, and docs/advertisers.md lists them.
# Of the site rules (``adnet.campaigns.eligibility.REFUSALS``) a banner meets only these: an inactive site is not
# asked about, verification is asked only where something is paid, and a site takes banners of every kind.
REASONS = (*REVIEW_REFUSALS.values(), "not_loaded", "below_floor", "placement_excluded", "site_excluded",
           "site_blocked", "no_approved_creative",
           "no_creative_of_size", "not_started", "ended", "budget_exhausted", "daily_cap_reached",
           *TARGETING_REFUSALS, "frequency_capped")
PRIVATE_REASONS = ("bot_user_agent",)
CANDIDATE = "candidate"


class Supposed(Viewer):
    """A viewer as an asker describes it: where it is, its device and system, the page's keywords; nothing
    seen and no proven wallet."""

    def __init__(self, *, country: str | None, device: str | None, os: str | None = None,
                 keywords: frozenset[str] = frozenset()) -> None:
        super().__init__(Client(ip="", user_agent=""), keywords, Locator())
        self._where = Location(country.upper()) if country else None
        self._device = device or "desktop"
        self._os = os or "other"

    @property
    def location(self) -> Location | None:
        return self._where

    @property
    def device(self) -> str:
        return self._device

    @property
    def os(self) -> str:
        return self._os


@dataclass(frozen=True)
class Verdict:
    """One campaign's part in a decision: the first rule that kept it out (None: a candidate), its chance of being
    drawn as a candidate, and, over a period, how often it was asked and shown and each reason's count."""

    campaign_id: str | None
    advertiser_id: str | None
    reason: str | None
    chance: float = 0.0
    decisions: int = 0
    shown: int = 0
    reasons: dict[str, int] = field(default_factory=dict)


def refusals(index: Index, query: ServeQuery, now: datetime, viewer: Viewer, site: SiteEntry,
             campaign_ids: Collection[str] | None = None) -> dict[str, str | None]:
    """Each index campaign's (or each of ``campaign_ids`` the index holds) first excluding rule for ``query`` and
    ``viewer`` now on ``site``, by serving's own rules; None for a candidate."""
    floor = site.floor_for(query.placement)
    found: dict[str, str | None] = {}
    for campaign in index.campaigns.values() if campaign_ids is None else (
            index.campaigns[campaign_id] for campaign_id in campaign_ids if campaign_id in index.campaigns):
        found[campaign.id] = (slot_refusal(campaign, query, site, floor)
                              or request_refusal(campaign, query, viewer, now))
    return found


def explain(index: Index, query: ServeQuery, now: datetime, viewer: Viewer, site: SiteEntry,
            campaign_ids: Collection[str] | None = None) -> list[Verdict]:
    """The verdict on each campaign of the index (or of ``campaign_ids`` that it holds) for a slot now, with each
    candidate's chance of the draw among all candidates; candidates first, by chance."""
    weights: dict[str, float] = {}
    for candidate in candidates(index, query, now, viewer, site):
        if candidate.campaign is not None:
            weights[candidate.campaign.id] = weights.get(candidate.campaign.id, 0.0) + candidate.weight
    total = sum(weights.values())
    verdicts = [Verdict(campaign_id, index.campaigns[campaign_id].advertiser_id, reason,
                        chance=weights.get(campaign_id, 0.0) / total if reason is None and total else 0.0)
                for campaign_id, reason in refusals(index, query, now, viewer, site, campaign_ids).items()]
    return sorted(verdicts, key=lambda verdict: (verdict.reason is not None, -verdict.chance,
                                                 verdict.campaign_id or ""))


async def review_reasons(campaign_ids: Iterable[str]) -> list[Verdict]:
    """The verdict on campaigns the index does not hold: their review state (``REVIEW_REFUSALS``), or
    ``not_loaded`` for an approved one serving has not read yet (or whose stored targeting no longer validates)."""
    ids = list(campaign_ids)
    rows = await Campaign.filter(id__in=ids).values_list("id", "advertiser_id", "status") if ids else []
    return [Verdict(str(campaign_id), str(advertiser_id), REVIEW_REFUSALS.get(CampaignStatus(status), "not_loaded"))
            for campaign_id, advertiser_id, status in rows]


@dataclass(frozen=True)
class Asker:
    """Who asks: an operator, the owner of the site asked about, and the advertiser accounts whose campaigns it
    may see."""

    operator: bool = False
    site_owner: bool = False
    advertisers: frozenset[str] = frozenset()

    def sees(self, verdict: Verdict) -> bool:
        return self.operator or self.site_owner or verdict.advertiser_id in self.advertisers


def for_asker(verdicts: Iterable[Verdict], asker: Asker) -> list[Verdict]:
    """What ``asker`` may read of ``verdicts``: those it sees (``Asker.sees``) whole; the others' candidates folded
    into one verdict of no campaign (``campaign_id`` None: "other campaigns", counted in ``decisions``), with
    nothing of their reasons, shares or private filter reasons."""
    shown: list[Verdict] = []
    others = 0
    for verdict in verdicts:
        if asker.sees(verdict):
            shown.append(verdict)
        elif verdict.reason is None or verdict.shown:
            others += 1
    if others:
        shown.append(Verdict(None, None, None, decisions=others))
    return shown


@dataclass(frozen=True)
class Sample:
    """A sampled serve decision (``DecisionSample``)."""

    decided_at: datetime
    site_id: str
    placement: str
    size: str
    country: str
    device: str
    outcome: str
    verdicts: dict[str, str]
    filtered: str = ""


def sample_of(index: Index, query: ServeQuery, now: datetime, viewer: Viewer, site: SiteEntry, outcome: str,
              client: Client) -> Sample:
    """The sample of a decision serving just made (``outcome``: the campaign shown, or the kind answered)."""
    location = viewer.location
    return Sample(now, site.id, query.placement, query.size or "", location.country if location else "",
                  viewer.device, outcome, {campaign_id: reason or "" for campaign_id, reason
                                           in refusals(index, query, now, viewer, site).items()},
                  "bot_user_agent" if client.is_bot else "")


class Sampler:
    """One process's sample of its serve decisions: one in every ``every``, held until ``flush`` writes them (at
    most ``limit``: beyond, the oldest go)."""

    def __init__(self, every: int = SAMPLE_EVERY, limit: int = MAX_PENDING) -> None:
        self.every = every
        self.pending: deque[Sample] = deque(maxlen=limit)
        self._count = 0

    def due(self) -> bool:
        """Whether this decision is one to sample (counting it)."""
        self._count += 1
        if self._count < self.every:
            return False
        self._count = 0
        return True

    def keep(self, sample: Sample) -> None:
        self.pending.append(sample)

    async def flush(self) -> int:
        """Write the held samples in one statement; kept for the next turn when it fails. How many went."""
        taken = list(self.pending)
        if not taken:
            return 0
        self.pending.clear()
        try:
            await DecisionSample.bulk_create([DecisionSample(
                decided_at=sample.decided_at, site_id=sample.site_id, placement=sample.placement, size=sample.size,
                country=sample.country, device=sample.device, outcome=sample.outcome, verdicts=sample.verdicts,
                filtered=sample.filtered) for sample in taken])
        except Exception:
            self.pending.extendleft(reversed(taken))
            raise
        return len(taken)


@dataclass(frozen=True)
class Slot:
    """What a recent answer is about: a site, and optionally a placement, size, country and device."""

    site_id: str
    placement: str | None = None
    size: str | None = None
    country: str | None = None
    device: str | None = None


async def recent(slot: Slot, since: datetime, campaign_ids: Collection[str] | None = None) -> tuple[int, list[Verdict]]:
    """How many sampled decisions of ``slot`` since ``since`` (the newest ``MAX_RECENT_SAMPLES``), and per campaign
    (each of ``campaign_ids``, or every one sampled): how often it was sampled, shown, and kept out by each reason
    (``PRIVATE_REASONS`` counted apart, for ``for_asker``); the most shown first."""
    query = DecisionSample.filter(site_id=slot.site_id, decided_at__gte=since)
    for name in ("placement", "size", "country", "device"):
        value = getattr(slot, name)
        if value is not None:
            query = query.filter(**{name: value})
    rows = await query.order_by("-decided_at").limit(MAX_RECENT_SAMPLES).values_list("outcome", "verdicts",
                                                                                      "filtered")
    tallies: dict[str, Counter[str]] = {}
    for outcome, verdicts, filtered in rows:
        for campaign_id, reason in verdicts.items():
            if campaign_ids is not None and campaign_id not in campaign_ids:
                continue
            tally = tallies.setdefault(campaign_id, Counter())
            tally["decisions"] += 1
            tally[reason or (CANDIDATE if outcome != campaign_id else "shown")] += 1
            if outcome == campaign_id and filtered:
                tally[filtered] += 1
    advertisers = dict(await Campaign.filter(id__in=list(tallies)).values_list("id", "advertiser_id")) \
        if tallies else {}
    verdicts_out = [Verdict(campaign_id, str(advertisers.get(campaign_id, "")) or None,
                            _most(tally), decisions=tally.pop("decisions"), shown=tally.pop("shown", 0),
                            reasons=dict(tally)) for campaign_id, tally in tallies.items()]
    return len(rows), sorted(verdicts_out, key=lambda verdict: (-verdict.shown, verdict.campaign_id or ""))


def _most(tally: Counter[str]) -> str | None:
    """The reason that kept a campaign out most often (None when it was shown or a candidate more often)."""
    kept = [(count, reason) for reason, count in tally.items() if reason in REASONS]
    best = max(kept, default=None)
    admitted = tally["shown"] + tally[CANDIDATE]
    return best[1] if best is not None and best[0] > admitted else None



@dataclass(frozen=True)
class Explanation:
    """The answer to an ``ExplainQuery`` on ``site_id``: now (``hours`` None) or over the last ``hours`` (from
    ``samples`` sampled decisions), the verdicts the asker may read."""

    site_id: str
    ask: ExplainQuery
    verdicts: list[Verdict]
    hours: int | None = None
    samples: int = 0


async def answer(server: Server, ask: ExplainQuery, site_id: str, asker: Asker,
                 campaign_ids: frozenset[str] | None = None) -> Explanation:
    """Why each campaign (each of ``campaign_ids``, or every one) would fill the slot ``ask`` describes on
    ``site_id`` now, or did over the last ``ask.hours`` (where a placement, size, country or device left out
    means any), as far as ``asker`` may read (``for_asker``). Now asks
    serving's index (NotFound for an unknown or inactive site); a campaign of ``campaign_ids`` the index does not
    hold is explained by its review state; NotFound for a campaign of ``campaign_ids`` that does not exist."""
    if campaign_ids and await Campaign.filter(id__in=list(campaign_ids)).count() < len(campaign_ids):
        raise NotFound.of("campaign")
    if ask.hours is not None:
        slot = Slot(site_id, ask.placement or None, ask.size,
                    ask.country.upper() if ask.country else None, ask.device)
        samples, verdicts = await recent(slot, server.clock.now() - timedelta(hours=ask.hours))
        if campaign_ids is not None:
            verdicts = [verdict for verdict in verdicts if verdict.campaign_id in campaign_ids
                        or not asker.sees(verdict)]
        return Explanation(site_id, ask, for_asker(verdicts, asker), ask.hours, samples)
    site = await server.site(site_id)
    query = ServeQuery.model_construct(site_id=site_id, kinds=frozenset({BANNER}), size=ask.size,
                                       placement=ask.placement, keywords=ask.keywords)
    viewer = Supposed(country=ask.country, device=ask.device, os=ask.os, keywords=ask.keywords)
    found = explain(server.index, narrow(site.controls, query), server.clock.now(), viewer, site)
    if campaign_ids is not None:
        found = [verdict for verdict in found if verdict.campaign_id in campaign_ids or not asker.sees(verdict)]
        missing = campaign_ids - {verdict.campaign_id for verdict in found}
        found += await review_reasons(missing)
    return Explanation(site_id, ask, for_asker(found, asker))
