"""The billing rules of a tracking batch, as a pure decision: given the batch's accepted events and what the
database said about their campaigns and windows (``Limits``), which events are billed, which are not and why, and
what each costs. No I/O: ``adnet.delivery.batch`` loads the limits in the batch's transaction, calls ``decide`` and
writes what it returns, and the database still guards what must be exact (the ledger account that cannot go
negative, the locked windows it adds to).

The rules, in the order ``adnet.delivery.tracking.REASONS`` gives them (the first that applies wins), for an event
nothing stood against before the batch:

- ``click_without_impression``: a click whose token had no billable impression, before or earlier in the batch;
- ``client_rate_exceeded``: a window of the client network's caps (``adnet.delivery.caps``) is full;
- ``frequency_capped``: the viewer its token names had the campaign's frequency cap of impressions in the period;
- ``budget_exhausted``: the campaign's remaining budget cannot pay the price;
- ``daily_cap_reached``: the price would take the campaign's spend of the UTC day past its daily cap.

Events are decided in arrival order, each against the limits as the events before it in the batch left them.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime

from adnet.delivery.caps import Caps, WindowKey, spend_window
from adnet.delivery.events import PendingEvent
from adnet.delivery.frequency import frequency_window
from adnet.delivery.models import EventType
from adnet.money import ledger

FrequencyCap = tuple[int, int]  # impressions, period in seconds


@dataclass(frozen=True)
class EventWindows:
    """The windows a billed event counts in: its client network's caps (each with its cap), the viewer's frequency
    window of the campaign (with its cap) where the campaign has one, and the campaign's spend of the day."""

    client: tuple[tuple[WindowKey, int], ...]
    frequency: tuple[WindowKey, int] | None
    spend: WindowKey

    @property
    def keys(self) -> set[WindowKey]:
        keys = {window for window, _cap in self.client} | {self.spend}
        return keys | {self.frequency[0]} if self.frequency is not None else keys


def windows_of(event: PendingEvent, caps: Caps, frequency_caps: dict[str, FrequencyCap], now: datetime
               ) -> EventWindows:
    """The windows ``event`` would count in if it were billed now."""
    request = event.reported
    client = caps.client_windows(site_id=request.site_id, campaign_id=request.campaign_id,
                                 network=event.client.network, kind=request.type, at=event.received_at)
    frequency_cap = frequency_caps.get(request.campaign_id)
    viewer = event.claims.viewer if event.claims is not None else None
    frequency = None
    if request.type == EventType.IMPRESSION and viewer and frequency_cap is not None:
        count, seconds = frequency_cap
        frequency = frequency_window(request.campaign_id, viewer, event.received_at, seconds), count
    return EventWindows(tuple(client), frequency, spend_window(request.campaign_id, now))


@dataclass(frozen=True)
class Limits:
    """What the rules read from the database for a batch: the tokens that already have a billable impression, each
    campaign's remaining budget, daily cap and frequency cap, and what each window has used."""

    viewed: frozenset[str] = frozenset()
    remaining: dict[str, int] = field(default_factory=dict)
    daily_caps: dict[str, int | None] = field(default_factory=dict)
    frequency_caps: dict[str, FrequencyCap] = field(default_factory=dict)
    used: dict[WindowKey, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Decision:
    """What the batch made of one accepted event: the reason it is not billed (None when billed), its cost and the
    publisher's share of it."""

    event: PendingEvent
    reason: str | None
    cost: int
    publisher_amount: int

    @property
    def billable(self) -> bool:
        return self.reason is None


@dataclass(frozen=True)
class Decisions:
    """A batch's decisions in arrival order, what its billed events add to each window, and each campaign's spend."""

    decisions: list[Decision]
    billed_in: dict[WindowKey, int]
    spent: dict[str, int]


def decide(events: Iterable[tuple[PendingEvent, str | None]], limits: Limits, caps: Caps, share_bps: int,
           now: datetime) -> Decisions:
    """Decide each accepted event (with the reason already standing against it, or None) in order."""
    viewed = set(limits.viewed)
    remaining = dict(limits.remaining)
    billed_in: dict[WindowKey, int] = defaultdict(int)
    spent: dict[str, int] = defaultdict(int)
    decisions = []
    for event, standing in events:
        if standing is not None:
            decisions.append(Decision(event, standing, 0, 0))
            continue
        windows = windows_of(event, caps, limits.frequency_caps, now)
        reason = _refusal(event, windows, viewed, remaining, limits, billed_in)
        if reason is not None:
            decisions.append(Decision(event, reason, 0, 0))
            continue
        cost = event.price
        for window, _cap in windows.client:
            billed_in[window] += 1
        if windows.frequency is not None:
            billed_in[windows.frequency[0]] += 1
        billed_in[windows.spend] += cost
        remaining[event.reported.campaign_id] = remaining.get(event.reported.campaign_id, 0) - cost
        spent[event.reported.campaign_id] += cost
        if event.reported.type == EventType.IMPRESSION and event.token_ref:
            viewed.add(event.token_ref)
        decisions.append(Decision(event, None, cost, cost * share_bps // 10_000))
    return Decisions(decisions, dict(billed_in), dict(spent))


def _refusal(event: PendingEvent, windows: EventWindows, viewed: set[str], remaining: dict[str, int],
             limits: Limits, billed_in: dict[WindowKey, int]) -> str | None:
    """The first billing rule that stands against ``event`` given the limits as the batch has left them so far."""
    used = limits.used

    def full(window: WindowKey, cap: int) -> bool:
        return used.get(window, 0) + billed_in[window] >= cap

    request = event.reported
    if request.type == EventType.CLICK and event.token_ref not in viewed:
        return "click_without_impression"
    if any(full(window, cap) for window, cap in windows.client):
        return "client_rate_exceeded"
    if windows.frequency is not None and full(*windows.frequency):
        return "frequency_capped"
    if remaining.get(request.campaign_id, 0) < event.price:
        return "budget_exhausted"
    daily_cap = limits.daily_caps.get(request.campaign_id)
    if daily_cap is not None and used.get(windows.spend, 0) + billed_in[windows.spend] + event.price > daily_cap:
        return "daily_cap_reached"
    return None


@dataclass
class Tallies:
    """What a batch's decisions add to the books and the counters: the ledger legs of its billing, the site's daily
    counts, the traffic per reason and the report rows of what was billed."""

    legs: dict[ledger.AccountKey, int] = field(default_factory=lambda: defaultdict(int))
    stats: dict[tuple[str, date], Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    traffic: dict[tuple[date, str, str, str, str], list[int]] = field(
        default_factory=lambda: defaultdict(lambda: [0, 0, 0]))
    reports: dict[tuple[date, str, str, str, str, str], list[int]] = field(
        default_factory=lambda: defaultdict(lambda: [0, 0, 0, 0]))


def tally(decisions: Iterable[Decision]) -> Tallies:
    """Add up ``decisions``: campaigns pay their events' costs, sites earn the publisher's share, the platform the
    rest; every event counts in its site's day and its traffic row; every billed one in its report row."""
    tallies = Tallies()
    for decision in decisions:
        event, request = decision.event, decision.event.reported
        if decision.billable:
            tallies.legs[ledger.campaign(request.campaign_id)] -= decision.cost
            tallies.legs[ledger.site(request.site_id)] += decision.publisher_amount
            tallies.legs[ledger.platform()] += decision.cost - decision.publisher_amount
        day = event.received_at.astimezone(UTC).date()
        kind = "impressions" if request.type == EventType.IMPRESSION else "clicks"
        counter = tallies.stats[(request.site_id, day)]
        counter[kind] += 1
        counter[f"billable_{kind}"] += 1 if decision.billable else 0
        figures = tallies.traffic[(day, request.site_id, request.campaign_id, request.type.value,
                                   decision.reason or "")]
        figures[0] += 1
        figures[1] += decision.cost
        figures[2] += decision.publisher_amount
        if decision.billable:
            report = tallies.reports[(day, request.campaign_id, request.site_id,
                                      event.claims.placement if event.claims else "", event.country, event.device)]
            report[0 if request.type == EventType.IMPRESSION else 1] += 1
            report[2] += decision.cost
            report[3] += decision.publisher_amount
    return tallies
