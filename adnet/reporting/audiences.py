"""Reports by audience: a campaign's billed impressions, clicks, attributed conversions and spend per audience rule
group, counts only.

Serving puts the number of the group that admitted the viewer (``adnet.audiences.membership.Audience.group_of``: 1
for the campaign's first group, 0 when it has none) into the tracking token, and tracking records it with the event
(``tracking_event.audience_group``); a conversion counts in the group of the click (or impression) it is attributed
to. Figures come from the raw events, so a report reaches back as far as their retention. Group numbers are
positions in the campaign's rules: a group described is the campaign's group of that number today.

Privacy (KNOWN-HOLES 32): a group's figures are shown only when its billed impressions came from at least
``adnet.audiences.reach.THRESHOLD`` distinct viewers (fingerprints), as reach before buying shows no count under it.
The groups under it are pooled into one row of withheld figures ("fewer than 100 viewers" each), so a small group's
figures are never shown by themselves; the pool's sum shows only when the pool reaches the threshold and holds two
groups or more. Advertisers see counts and spend, never a wallet, a fingerprint or which viewer saw what.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta

from tortoise.functions import Count

from adnet.accounts.models import MemberRole
from adnet.audiences.reach import THRESHOLD, rounded
from adnet.campaigns.audiences import describe
from adnet.campaigns.campaigns import owned_campaign
from adnet.campaigns.models import Campaign
from adnet.campaigns.targeting import Targeting
from adnet.conversions.models import Conversion
from adnet.core.amounts import to_decimal_string
from adnet.core.csv_text import csv_text
from adnet.delivery.models import EventType, TrackingEvent

CSV_COLUMNS = ("group", "rules", "viewers", "impressions", "clicks", "conversions", "spend")


@dataclass
class GroupFigures:
    """One audience rule group's figures (``number`` 0: served without a group; None: the pool of groups under the
    threshold): its rules in words, whether it reached the threshold of viewers (``shown``), and the billed
    impressions, clicks, attributed conversions and spend (events and conversions, G$ smallest units)."""

    number: int | None
    rules: list[str] = field(default_factory=list)
    viewers: int = 0
    impressions: int = 0
    clicks: int = 0
    conversions: int = 0
    spend: int = 0
    members: list[int] = field(default_factory=list)

    @property
    def shown(self) -> bool:
        """Whether its figures may be shown: enough viewers (and, for the pool, more than one group in it)."""
        return self.viewers >= THRESHOLD and (self.number is not None or len(self.members) > 1)

    @property
    def rounded_viewers(self) -> int | None:
        """The viewers as an advertiser may see them: rounded down to a hundred, None under the threshold."""
        return rounded(self.viewers)

    def add(self, other: GroupFigures) -> None:
        self.viewers += other.viewers
        self.impressions += other.impressions
        self.clicks += other.clicks
        self.conversions += other.conversions
        self.spend += other.spend


@dataclass(frozen=True)
class AudienceReport:
    """A campaign's figures per audience rule group from ``start`` to ``end`` (UTC days): the groups that reached
    the threshold, in their order, then ``small``, the pool of those that did not (None when none)."""

    campaign: Campaign
    start: date
    end: date
    groups: list[GroupFigures]
    small: GroupFigures | None
    threshold: int = THRESHOLD


async def audience_report(wallet: str, campaign_id: str, start: date, end: date) -> AudienceReport:
    """The report by audience group of a campaign the wallet's advertiser account owns (any role; NotFound /
    Forbidden ``not_owner`` otherwise)."""
    campaign = await owned_campaign(wallet, campaign_id, MemberRole.VIEWER)
    since = datetime.combine(start, time.min, tzinfo=UTC)
    until = datetime.combine(end + timedelta(days=1), time.min, tzinfo=UTC)
    described = group_words(campaign.targeting)
    found: dict[int, GroupFigures] = {}

    def group(number: int) -> GroupFigures:
        return found.setdefault(number, GroupFigures(number, described.get(number, [])))

    billed = TrackingEvent.filter(campaign_id=campaign.id, billable=True, received_at__gte=since,
                                  received_at__lt=until)
    # Grouped by price too and multiplied here: a sum of 18-decimal amounts overflows SQLite's integers, and an
    # event's price is one of few (the campaign's CPM or CPC of the moment), so the rows stay few.
    for number, kind, cost, events in await billed.annotate(events=Count("id")).group_by(
            "audience_group", "type", "cost").values_list("audience_group", "type", "cost", "events"):
        figures = group(int(number))
        if kind == EventType.IMPRESSION:
            figures.impressions += int(events)
        else:
            figures.clicks += int(events)
        figures.spend += int(cost) * int(events)
    for number, viewers in await billed.filter(type=EventType.IMPRESSION).annotate(
            viewers=Count("fingerprint", distinct=True)).group_by("audience_group").values_list(
            "audience_group", "viewers"):
        group(int(number)).viewers = int(viewers)
    converted = await Conversion.filter(campaign_id=campaign.id, attributed=True, received_at__gte=since,
                                        received_at__lt=until).values_list("click_event_id", "cost")
    groups_of = dict(await TrackingEvent.filter(id__in=[event_id for event_id, _ in converted if event_id])
                     .values_list("id", "audience_group")) if converted else {}
    for event_id, cost in converted:
        figures = group(int(groups_of.get(event_id, 0)))
        figures.conversions += 1
        figures.spend += int(cost)
    for number in described:  # a group that served nothing is reported too (under the threshold)
        group(number)
    shown = [found[number] for number in sorted(found) if found[number].shown]
    small = None
    for number in sorted(found):
        if not found[number].shown:
            small = small or GroupFigures(None)
            small.add(found[number])
            small.members.append(number)
    return AudienceReport(campaign=campaign, start=start, end=end, groups=shown, small=small)


def group_words(stored: dict[str, object] | None) -> dict[int, list[str]]:
    """The campaign's audience rule groups by number (1 for the first), each rule in words; none without groups."""
    if not stored or not stored.get("audience_groups"):
        return {}
    targeting = Targeting.model_validate(stored)
    return {number: [describe(item) for item in rules]
            for number, rules in enumerate(targeting.audience_groups, start=1)}


def report_csv(report: AudienceReport) -> str:
    """The report as CSV: one line per group that reached the threshold (``group`` its number, 0 for events served
    without a group; ``rules`` its rules in words), then a ``small`` line for the pool of the others (``group``
    lists their numbers; figures empty unless the pool may be shown). Spend in G$ as decimal strings."""
    def line(name: str, figures: GroupFigures) -> list[object]:
        if not figures.shown:
            return [name, "; ".join(figures.rules), f"<{report.threshold}", "", "", "", ""]
        return [name, "; ".join(figures.rules), figures.rounded_viewers, figures.impressions, figures.clicks,
                figures.conversions, to_decimal_string(figures.spend)]

    lines = [line(str(figures.number), figures) for figures in report.groups]
    if report.small is not None:
        lines.append(line("small:" + " ".join(str(number) for number in report.small.members), report.small))
    return csv_text([list(CSV_COLUMNS), *lines])
