"""What a publisher reads about one site: the ads that ran there, the answers its visitors gave to units there, and
its events as CSV.

Free text answers are not shown here: they belong to the unit's owner. CSV cells a spreadsheet would run as a
formula are neutralised (``adnet.core.csv_text``).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import AsyncIterator
from dataclasses import dataclass, fields
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from tortoise.functions import Count

from adnet.campaigns.models import Campaign, Creative
from adnet.core.amounts import to_decimal_string
from adnet.core.clock import iso
from adnet.core.csv_text import csv_text
from adnet.delivery.models import EventType, TrackingEvent
from adnet.interactions.models import Interaction
from adnet.tasks.models import Task, TaskKind

EXPORT_BATCH = 1000
EVENT_COLUMNS = ("eventId", "receivedAt", "type", "campaignId", "adId", "placement", "billable", "refusalReason",
                 "publisherAmount", "pageUrl")


@dataclass(frozen=True)
class UnitResult:
    """What visitors of one site answered to one unit: the number of responses and, by kind, the poll's tally per
    option (every option, in the unit's order) or the ratings given (count per rating and the average)."""

    unit_id: str
    kind: str
    title: str
    question: str
    responses: int
    tally: list[tuple[str, int]]
    ratings: list[tuple[int, int]]
    rating_average: float | None


@dataclass
class AdFigures:
    """What one creative (or one campaign, all its creatives) did on a site in a period: recorded impressions and
    clicks, those billed, and what the site earned (G$ smallest units)."""

    impressions: int = 0
    billed_impressions: int = 0
    clicks: int = 0
    billed_clicks: int = 0
    earned: int = 0

    def count(self, kind: str, billable: bool, events: int, earned: int) -> None:
        if kind == EventType.IMPRESSION:
            self.impressions += events
            self.billed_impressions += events if billable else 0
        else:
            self.clicks += events
            self.billed_clicks += events if billable else 0
        self.earned += earned

    def add(self, other: AdFigures) -> None:
        """Add another creative's figures (a campaign's are its creatives')."""
        for item in fields(self):
            setattr(self, item.name, getattr(self, item.name) + getattr(other, item.name))


@dataclass(frozen=True)
class CreativeRun:
    """A creative that ran on the site, named as its advertiser described it, with its figures."""

    creative_id: str
    description: str
    size: str
    banner_url: str
    figures: AdFigures


@dataclass(frozen=True)
class CampaignRun:
    """A campaign that ran on the site, by name and advertiser name, with its figures and its creatives'."""

    campaign_id: str
    name: str
    advertiser_id: str
    advertiser: str
    category: str
    figures: AdFigures
    creatives: list[CreativeRun]


async def ads_that_ran(site_id: str, start: date, end: date) -> list[CampaignRun]:
    """The campaigns and creatives whose events ``site_id`` recorded from ``start`` to ``end`` (UTC days,
    inclusive), most earning first, from the raw events still kept (``adnet.delivery.retention``). One grouped
    query counts events per creative, type, billing and amount, so earnings are summed exactly here (SQLite has no
    exact decimal sum)."""
    since = datetime.combine(start, time.min, tzinfo=UTC)
    until = datetime.combine(end + timedelta(days=1), time.min, tzinfo=UTC)
    rows = await TrackingEvent.filter(site_id=site_id, received_at__gte=since, received_at__lt=until).annotate(
        events=Count("id")).group_by("creative_id", "type", "billable", "publisher_amount").values_list(
        "creative_id", "type", "billable", "publisher_amount", "events")
    by_creative: dict[str, AdFigures] = defaultdict(AdFigures)
    for creative_id, kind, billable, amount, events in rows:
        by_creative[creative_id].count(kind, bool(billable), int(events), int(amount) * int(events) if billable
                                       else 0)
    if not by_creative:
        return []
    creatives = await Creative.filter(id__in=list(by_creative)).order_by("id")
    campaigns = {campaign.id: campaign for campaign in await Campaign.filter(
        id__in={creative.campaign_id for creative in creatives}).prefetch_related("advertiser")}
    runs: dict[str, CampaignRun] = {}
    for creative in creatives:
        campaign = campaigns[creative.campaign_id]
        run = runs.get(campaign.id)
        if run is None:
            run = runs[campaign.id] = CampaignRun(
                campaign_id=campaign.id, name=campaign.name, advertiser_id=campaign.advertiser.id,
                advertiser=campaign.advertiser.name, category=campaign.category.value, figures=AdFigures(),
                creatives=[])
        figures = by_creative[creative.id]
        run.creatives.append(CreativeRun(creative_id=creative.id, description=creative.description,
                                         size=f"{creative.width}x{creative.height}", banner_url=creative.banner_url,
                                         figures=figures))
        run.figures.add(figures)
    for run in runs.values():
        run.creatives.sort(key=lambda item: (-item.figures.earned, -item.figures.impressions, item.creative_id))
    return sorted(runs.values(), key=lambda item: (-item.figures.earned, -item.figures.impressions, item.name))


async def site_unit_results(site_id: str) -> list[UnitResult]:
    """The units visitors answered on ``site_id``, by title, with what they answered there (free text is not
    shown here: it belongs to the unit's owner)."""
    answers_by_unit: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for unit_id, answers in await Interaction.filter(site_id=site_id).values_list("unit_id", "answers"):
        answers_by_unit[unit_id].append(answers if isinstance(answers, dict) else {})
    if not answers_by_unit:
        return []
    units = await Task.filter(id__in=list(answers_by_unit)).order_by("title", "id")
    return [_unit_result(unit, answers_by_unit[unit.id]) for unit in units]


async def site_events_csv(site_id: str, start: date, end: date) -> AsyncIterator[str]:
    """The site's tracking events received from ``start`` to ``end`` (UTC days, inclusive), oldest first, as CSV
    text in chunks: a header row, then one row per event. Cells a spreadsheet would run as a formula are
    neutralised."""
    yield csv_text([EVENT_COLUMNS])
    since = datetime.combine(start, time.min, tzinfo=UTC)
    until = datetime.combine(end + timedelta(days=1), time.min, tzinfo=UTC)
    query = TrackingEvent.filter(site_id=site_id, received_at__gte=since, received_at__lt=until).order_by(
        "received_at", "id")
    offset = 0
    while True:
        batch = await query.offset(offset).limit(EXPORT_BATCH).values_list(
            "id", "received_at", "type", "campaign_id", "creative_id", "placement", "billable", "refusal_reason",
            "publisher_amount", "page_url")
        if not batch:
            return
        yield csv_text([
            (event_id, iso(received_at), str(kind), campaign_id, creative_id,
             placement, "true" if billable else "false", reason or "", to_decimal_string(int(amount)), page_url)
            for event_id, received_at, kind, campaign_id, creative_id, placement, billable, reason, amount, page_url
            in batch
        ])
        offset += len(batch)


def _unit_result(unit: Task, answers: list[dict[str, Any]]) -> UnitResult:
    config = unit.config if isinstance(unit.config, dict) else {}
    tally: list[tuple[str, int]] = []
    ratings: list[tuple[int, int]] = []
    average = None
    if unit.kind == TaskKind.POLL:
        chosen = Counter(answer.get("optionId") for answer in answers)
        tally = [(option["label"], chosen[option["id"]]) for option in config.get("options", [])]
    elif unit.kind == TaskKind.FEEDBACK:
        given = [answer["rating"] for answer in answers if isinstance(answer.get("rating"), int)]
        counted = Counter(given)
        bounds = config.get("rating") or {}
        low, high = bounds.get("min", min(given, default=1)), bounds.get("max", max(given, default=5))
        ratings = [(rating, counted[rating]) for rating in range(low, high + 1)]
        average = sum(given) / len(given) if given else None
    return UnitResult(unit_id=unit.id, kind=unit.kind.value, title=unit.title,
                      question=str(config.get("question", "")), responses=len(answers), tally=tally,
                      ratings=ratings, rating_average=average)
