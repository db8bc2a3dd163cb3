"""What a publisher reads about its sites in the portal: the dashboard's figures over three periods with a daily
earnings series and the fill rate, the answers visitors gave to units on a site, and a site's events as CSV.

Counts come from ``SiteDailyStat`` (one row per site and UTC day); earnings from the site's G$ ledger postings that
are ad revenue (every kind but ``publishers.NOT_EARNINGS``), the same rule as ``publishers.list_sites``, so the
portal and the API never disagree. Days are UTC days.

The 30-day earnings read one posting per billed event of those days: fine for the sizes adnet serves today; a
per-day earnings column in ``SiteDailyStat`` is the next step when a site bills millions of events a month.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from adnet import publishers
from adnet.csv_text import csv_text
from adnet.errors import bad_request
from adnet.models import Interaction, LedgerPosting, SiteDailyStat, Task, TaskKind, TrackingEvent
from adnet.money import to_decimal_string
from adnet.publishers import EARNINGS_SYMBOL, NOT_EARNINGS, Figures

DASHBOARD_DAYS = 30
MAX_EXPORT_DAYS = 92
EXPORT_BATCH = 1000
EVENT_COLUMNS = ("eventId", "receivedAt", "type", "campaignId", "adId", "placement", "billable", "refusalReason",
                 "publisherAmount", "pageUrl")


@dataclass(frozen=True)
class SiteReport:
    """One site's figures today (UTC), over the last ``DASHBOARD_DAYS`` days (today included) and ever."""

    site_id: str
    domain: str
    name: str
    active: bool
    today: Figures
    recent: Figures
    lifetime: Figures


@dataclass(frozen=True)
class DayEarnings:
    day: date
    earned: int


@dataclass(frozen=True)
class Dashboard:
    """A wallet's sites with their figures, the totals over all of them, the daily earnings of the last
    ``DASHBOARD_DAYS`` days (oldest first, every day present) and the serve requests filled over those days."""

    sites: list[SiteReport]
    today: Figures
    recent: Figures
    lifetime: Figures
    daily: list[DayEarnings]
    requests: int
    filled: int

    @property
    def fill_rate(self) -> float | None:
        return self.filled / self.requests if self.requests else None


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


def click_through_rate(figures: Figures) -> float | None:
    """Clicks per impression, or None before the first impression."""
    return figures.clicks / figures.impressions if figures.impressions else None


async def publisher_dashboard(wallet: str, now: datetime) -> Dashboard:
    """The dashboard of ``wallet``: its sites (oldest first) with today's, recent and lifetime figures."""
    summaries = await publishers.list_sites(wallet, now)
    ids = [summary.site.id for summary in summaries]
    today = now.astimezone(UTC).date()
    first_day = today - timedelta(days=DASHBOARD_DAYS - 1)
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    requests = filled = 0
    daily: dict[date, int] = {first_day + timedelta(days=offset): 0 for offset in range(DASHBOARD_DAYS)}
    earned: dict[str, int] = defaultdict(int)
    if ids:
        for site_id, impressions, clicks, day_requests, day_filled in await SiteDailyStat.filter(
                site_id__in=ids, day__gte=first_day, day__lte=today).values_list(
                "site_id", "impressions", "clicks", "requests", "filled"):
            counts[site_id][0] += impressions
            counts[site_id][1] += clicks
            requests += day_requests
            filled += day_filled
        for owner, amount, booked_at in await LedgerPosting.filter(
                account__kind="site", account__token=EARNINGS_SYMBOL, account__owner__in=ids,
                created_at__gte=datetime.combine(first_day, time.min, tzinfo=UTC)).exclude(
                transaction__kind__in=NOT_EARNINGS).values_list("account__owner", "amount", "created_at"):
            day = _utc(booked_at).date()
            if day in daily:
                daily[day] += int(amount)
                earned[owner] += int(amount)
    reports = [
        SiteReport(site_id=summary.site.id, domain=summary.site.domain, name=summary.site.name,
                   active=summary.site.active, today=summary.today, lifetime=summary.lifetime,
                   recent=Figures(impressions=counts[summary.site.id][0], clicks=counts[summary.site.id][1],
                                  earned=earned[summary.site.id]))
        for summary in summaries
    ]
    return Dashboard(
        sites=reports, today=_total(report.today for report in reports),
        recent=_total(report.recent for report in reports), lifetime=_total(report.lifetime for report in reports),
        daily=[DayEarnings(day, amount) for day, amount in sorted(daily.items())], requests=requests, filled=filled,
    )


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


def export_range(start_text: Any, end_text: Any, today: date) -> tuple[date, date]:
    """The inclusive UTC day range of an export from two ``YYYY-MM-DD`` strings: 400 ``invalid_date`` for a
    malformed day, 400 ``invalid_date_range`` when the end is before the start, later than today, or the range is
    longer than ``MAX_EXPORT_DAYS``."""
    start, end = _day(start_text, "from"), _day(end_text, "to")
    if end < start:
        raise bad_request("invalid_date_range", "The last day is before the first.", field="to")
    if end > today:
        raise bad_request("invalid_date_range", "The last day cannot be after today (UTC).", field="to")
    if (end - start).days + 1 > MAX_EXPORT_DAYS:
        raise bad_request("invalid_date_range", f"Export at most {MAX_EXPORT_DAYS} days at a time.", field="from")
    return start, end


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
            (event_id, _utc(received_at).isoformat().replace("+00:00", "Z"), str(kind), campaign_id, creative_id,
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


def _total(figures: Any) -> Figures:
    items = list(figures)
    return Figures(impressions=sum(item.impressions for item in items), clicks=sum(item.clicks for item in items),
                   earned=sum(item.earned for item in items))


def _day(text: Any, field: str) -> date:
    try:
        if not isinstance(text, str) or len(text) != 10:
            raise ValueError(text)
        return date.fromisoformat(text)
    except ValueError:
        raise bad_request("invalid_date", f"{field} is a day written YYYY-MM-DD.", field=field) from None


def _utc(moment: datetime) -> datetime:
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)

