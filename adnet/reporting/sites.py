"""What a publisher reads about one site: the answers its visitors gave to units there, and its events as CSV.

Free text answers are not shown here: they belong to the unit's owner. CSV cells a spreadsheet would run as a
formula are neutralised (``adnet.core.csv_text``).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from adnet.core.amounts import to_decimal_string
from adnet.core.clock import iso
from adnet.core.csv_text import csv_text
from adnet.delivery.models import TrackingEvent
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
