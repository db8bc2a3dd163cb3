"""Advertisers' reports: per campaign and UTC day (or hour), what was shown, clicked, billed and completed, and why
events were not billed; as data for the API and pages, and as CSV.

Event figures come from ``traffic_daily``, which every tracking batch adds to in the transaction that records and
bills its events (per day, site, campaign, type and reason, with the cost billed at the moment), so they outlive the
raw events' retention (an hourly report reads the raw events of its hours, ``adnet.reporting.buckets``); rewards
from the completions of the campaign's tasks and the answers to its units. A report covers at most
``adnet.reporting.commands.MAX_DAYS`` days, read in one pass per record type.

- impressions / clicks: recorded events (duplicates inside the hour are not recorded at all);
- billable impressions / clicks: those that were billed; CTR = billable clicks / billable impressions;
- spend: G$ billed for events; eCPM = spend per 1000 billable impressions;
- rewards: G$ granted to viewers for the campaign's tasks and units (paid from their pools or the budget);
- completions: per task or unit, completions and answers recorded that day (or hour);
- refusals: per reason (``adnet.delivery.tracking.REASONS``), how many recorded events were not billed, per day and
  over the period;
- conversions: conversions reported for the campaign's goals (``adnet.conversions``) and attributed to a click, on
  the day (or hour) they were received; conversion spend: what paid ones cost (also in ``spend``); cost per
  conversion: the whole spend of the day (events and conversions) per attributed conversion; conversion rate: attributed
  conversions per billable click; value: what the advertiser reported attributed conversions were worth, and ROAS:
  value per G$ spent (``adnet.reporting.outcomes``); conversion refusals: per reason
  (``adnet.conversions.attribution.REASONS``), the conversions recorded without being attributed or paid.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import date

from adnet.accounts.models import MemberRole
from adnet.campaigns.campaigns import owned_campaign
from adnet.campaigns.models import Campaign
from adnet.conversions.attribution import REASONS as CONVERSION_REASONS
from adnet.conversions.models import Conversion
from adnet.core.amounts import to_decimal_string
from adnet.core.csv_text import csv_text
from adnet.delivery.tracking import REASONS
from adnet.interactions.models import Interaction
from adnet.reporting import buckets, outcomes
from adnet.reporting.buckets import Buckets, Granularity
from adnet.reporting.traffic import EventCounts, bucket_text, bucketed, ordered_reasons
from adnet.tasks.models import Completion, Task

CSV_COLUMNS = ("impressions", "billable_impressions", "clicks", "billable_clicks", "ctr", "spend", "ecpm",
               "rewards", "conversions", "conversion_spend", "cost_per_conversion", "conversion_rate",
               "conversion_value", "roas")


@dataclass
class DayFigures(EventCounts):
    """One day's or hour's (or the period's) figures; money in G$ smallest units."""

    spend: int = 0
    rewards: int = 0
    completions: Counter[str] = field(default_factory=Counter)
    conversions: int = 0
    conversion_spend: int = 0
    conversion_value: int = 0
    valued: int = 0
    unconverted: Counter[str] = field(default_factory=Counter)

    @property
    def ctr(self) -> float:
        """Billable clicks per billable impression (0 without impressions)."""
        return self.billable_clicks / self.billable_impressions if self.billable_impressions else 0.0

    @property
    def ecpm(self) -> int:
        """Spend per 1000 billable impressions, smallest units, rounded down (0 without impressions)."""
        return self.spend * 1000 // self.billable_impressions if self.billable_impressions else 0

    @property
    def cost_per_conversion(self) -> int:
        """Spend per attributed conversion, smallest units, rounded down (0 without conversions)."""
        return outcomes.cost_per_conversion(self.spend, self.conversions)

    @property
    def conversion_rate(self) -> str | None:
        """Attributed conversions per billable click (None without billable clicks)."""
        return outcomes.conversion_rate(self.conversions, self.billable_clicks)

    @property
    def roas(self) -> str | None:
        """The attributed conversions' reported value per G$ spent (None without a value or spend)."""
        return outcomes.roas(self.conversion_value, self.valued, self.spend)

    def convert(self, attributed: bool, reason: str | None, cost: int, value: int | None = None) -> None:
        """Count one recorded conversion: attributed or not, with the reason it was not attributed or paid, and the
        value reported for it (counted when it was attributed)."""
        self.conversions += 1 if attributed else 0
        self.conversion_spend += cost
        self.spend += cost
        if attributed and value is not None:
            self.conversion_value += value
            self.valued += 1
        if reason:
            self.unconverted[reason] += 1


@dataclass(frozen=True)
class CampaignReport:
    """A campaign's figures per day or hour from ``start`` to ``end`` (inclusive, UTC days), their totals, its
    tasks, and the refusal reasons of the period."""

    campaign: Campaign
    start: date
    end: date
    days: list[DayFigures]
    totals: DayFigures
    tasks: list[Task]
    refusals: dict[str, int]
    conversion_refusals: dict[str, int]
    granularity: Granularity = Granularity.DAY


async def campaign_report(wallet: str, campaign_id: str, start: date, end: date,
                          granularity: Granularity = Granularity.DAY) -> CampaignReport:
    """The report of a campaign of an advertiser account the wallet owns or is a member of, any role (NotFound /
    Forbidden ``not_owner`` otherwise), per day or hour."""
    campaign = await owned_campaign(wallet, campaign_id, MemberRole.VIEWER)
    series = Buckets(granularity, start, end)
    days = bucketed(DayFigures, series)
    for row in await buckets.traffic(series, "campaign_id", [campaign.id]):
        days[row.bucket].count(row.type, row.reason, row.events)
        days[row.bucket].spend += row.cost
    tasks = await Task.filter(campaign_id=campaign.id).order_by("created_at", "id")
    task_ids = [task.id for task in tasks]
    for model in (Completion, Interaction):
        rows = await model.filter(created_at__gte=series.since, created_at__lt=series.until,
                                  **{f"{_task_field(model)}__in": task_ids}).values_list(
            _task_field(model), "created_at", "gs_amount") if task_ids else []
        for task_id, created_at, gs_amount in rows:
            figures = days[series.of(created_at)]
            figures.completions[str(task_id)] += 1
            figures.rewards += int(gs_amount)
    for received_at, attributed, reason, cost, value in await Conversion.filter(
            campaign_id=campaign.id, received_at__gte=series.since, received_at__lt=series.until).values_list(
            "received_at", "attributed", "reason", "cost", "value"):
        days[series.of(received_at)].convert(attributed, reason, int(cost), None if value is None else int(value))
    totals = DayFigures(None)
    for figures in days.values():
        totals.add(figures)
    return CampaignReport(campaign=campaign, start=start, end=end, days=list(days.values()), totals=totals,
                          tasks=tasks, refusals=ordered_reasons(totals.filtered),
                          conversion_refusals=conversion_reasons(totals.unconverted), granularity=granularity)


def conversion_reasons(counts: Counter[str]) -> dict[str, int]:
    """The reasons conversions were not attributed or paid, in the order they are decided."""
    return {reason: counts[reason] for reason in CONVERSION_REASONS if counts.get(reason)}


def _task_field(model: type[Completion] | type[Interaction]) -> str:
    return "task_id" if model is Completion else "unit_id"


def ctr_text(figures: DayFigures) -> str:
    """The CTR as a fraction with six decimals, e.g. ``"0.012500"``."""
    return f"{figures.ctr:.6f}"


def report_csv(report: CampaignReport) -> str:
    """The report as CSV: one row per day (or hour: the first column is then ``hour``) then a ``total`` row; G$
    amounts as decimal strings, one
    ``completions:<taskId>`` column per task and one ``filtered:<reason>`` column per reason events are kept from
    billing for, then one ``unconverted:<reason>`` column per reason conversions are kept from attribution or pay.
    A ratio over nothing (``conversion_rate``, ``roas``) is empty. Only numbers and identifiers, no
    advertiser-written text."""
    task_ids = [task.id for task in report.tasks]
    return csv_text([
        [report.granularity.value, *CSV_COLUMNS, *(f"completions:{task_id}" for task_id in task_ids),
         *(f"filtered:{reason}" for reason in REASONS),
         *(f"unconverted:{reason}" for reason in CONVERSION_REASONS)],
        *([bucket_text(figures), figures.impressions, figures.billable_impressions,
           figures.clicks, figures.billable_clicks, ctr_text(figures), to_decimal_string(figures.spend),
           to_decimal_string(figures.ecpm), to_decimal_string(figures.rewards), figures.conversions,
           to_decimal_string(figures.conversion_spend), to_decimal_string(figures.cost_per_conversion),
           figures.conversion_rate or "", to_decimal_string(figures.conversion_value), figures.roas or "",
           *(figures.completions.get(task_id, 0) for task_id in task_ids),
           *(figures.filtered.get(reason, 0) for reason in REASONS),
           *(figures.unconverted.get(reason, 0) for reason in CONVERSION_REASONS)]
          for figures in [*report.days, report.totals]),
    ])


def completions_by_task(figures: DayFigures, tasks: list[Task]) -> dict[str, int]:
    """Completions per task id, every task of the campaign named (0 when none)."""
    return {task.id: figures.completions.get(task.id, 0) for task in tasks}

