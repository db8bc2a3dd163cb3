"""The tracking batch: the events of a few milliseconds deduplicated, checked, recorded and billed in one database
transaction, written as one program of statements (``adnet.db.sql``), so on a SQLite file the whole batch is one
message to the worker's writer process (``adnet.db.writer_process``).

Deduplication is one conditional write per event on ``DedupKey``: an upsert that inserts the key, or moves its
``last_accepted_at`` only when the hour has passed, and returns the key only when it did either. Whatever runs
concurrently, in this process or another, exactly one of identical events gets the key; the others answer
``duplicate`` and leave nothing behind. The same write on a key made of the token digest makes ``token_reused``
exact, so rotating the fingerprint cannot bill one served ad twice. A consent-limited event keeps no viewer id: its key
names the served ad its token names instead (``_viewer_key``).

Before billing, the batch locks the billing windows its candidates count in (``adnet.delivery.caps``): an event
beyond a cap of its client network is recorded as ``client_rate_exceeded``, one that would take its campaign's
spend of the day past ``dailyCap`` as ``daily_cap_reached``, an impression beyond its campaign's frequency cap for
the viewer its token names as ``frequency_capped`` (``adnet.delivery.frequency``). Every recorded event is also
counted in ``traffic_daily`` (per day, site, campaign, type and reason), and every billed one in ``report_daily``
(per day, campaign, site, placement, country and device), what the reports read. Reach and frequency are counted
later, off this path, from the events' viewer digests (``adnet.delivery.reach``).

Billing of a batch is one balanced ledger transaction (kind ``ad_billing``): each campaign pays the sum of its
events' costs (an impression costs CPM/1000, a click its CPC, at the price of the moment, stored with the event),
each site earns its publisher share (``ADNET_PUBLISHER_SHARE_BPS``, rounded down), the platform the rest. The
campaign's ledger account cannot go negative, so spend never exceeds the funded budget; an event it cannot pay is
recorded as ``budget_exhausted``.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta
from decimal import Decimal
from typing import Any

from adnet.core.amounts import Token
from adnet.core.ids import new_id
from adnet.db.sql import Program, Statement
from adnet.delivery.billing import Decisions, Limits, decide, tally, windows_of
from adnet.delivery.caps import Caps, add_to_windows, lock_windows
from adnet.delivery.counters import daily_stats_program
from adnet.delivery.events import PendingEvent, TrackResult
from adnet.delivery.models import EventType
from adnet.delivery.reach import viewer_key
from adnet.money import ledger

DEDUP_WINDOW = timedelta(hours=1)


def write_batch(events: list[PendingEvent], now: datetime, share_bps: int, caps: Caps, *, single_writer: bool,
                replayed: bool = False) -> Program[tuple[list[TrackResult], dict[str, int]]]:
    """Deduplicate, decide, insert and bill one batch: one program of statements (``adnet.db.sql``), run as a
    transaction of its own (on a SQLite file in the worker's writer process, which is why its arguments are plain
    picklable values). The billing rules are ``adnet.delivery.billing.decide``; this loads what they read and
    writes what they decide. Each recorded event is stored under the id it carries (``PendingEvent.event_id``).

    ``replayed``: the batch may hold events already stored (it comes from the spool, ``adnet.delivery.spool``, or
    again after a failure whose commit is unknown). An event whose id is in ``tracking_event`` is then answered
    ``recorded`` and left alone: the transaction that stored it deduplicated and billed it. Since the id is the
    table's primary key, a replay that races the first write fails on it and is retried whole: either way once."""
    stored: set[str] = set()
    if replayed and events:
        found = yield Statement("SELECT id FROM tracking_event WHERE id IN (:ids)",
                                {"ids": [event.event_id for event in events]})
        stored = {str(row["id"]) for row in found.rows}
    fresh = [event for event in events if event.event_id not in stored]
    accepted = yield from _deduplicated(fresh, now)
    limits = yield from _limits(accepted, caps, now, single_writer=single_writer)
    decided = decide(accepted, limits, caps, share_bps, now)
    yield from _write(decided, now)
    results = {id(decision.event): TrackResult("recorded", decision.event.event_id, decision.billable,
                                               decision.reason) for decision in decided.decisions}
    results.update((id(event), TrackResult("recorded", event.event_id)) for event in events
                   if event.event_id in stored)
    duplicate = TrackResult("duplicate")
    return [results.get(id(event), duplicate) for event in events], decided.spent


def _deduplicated(events: list[PendingEvent], now: datetime) -> Program[list[tuple[PendingEvent, str | None]]]:
    """The events that are not duplicates (the first of identical ones whose key this batch wrote), in order, each
    with the reason that already stands against it: tracking's own, or ``token_reused`` for a token that already
    had an event of its type."""
    keys = [(_viewer_key(event), event.reported.campaign_id, event.reported.type.value) for event in events]
    accepted = yield from _first_written(events, keys, now)
    tokened = [event for event in accepted if event.reason is None and event.token_ref]
    fresh = yield from _first_written(tokened, [(f"token:{event.token_ref}", event.reported.campaign_id,
                                                 event.reported.type.value) for event in tokened], now)
    fresh_ids = {id(event) for event in fresh}
    return [(event, "token_reused" if event.reason is None and event.token_ref and id(event) not in fresh_ids
             else event.reason) for event in accepted]


def _viewer_key(event: PendingEvent) -> str:
    """Whom an event is deduplicated by: its viewer id, or for a consent-limited event (which keeps none) the served
    ad its token names, or nothing (the event's own id) without a token."""
    if not event.consent_limited:
        return event.reported.fingerprint
    return f"limited:{event.token_ref or event.event_id}"


def _first_written(events: list[PendingEvent], keys: list[tuple[str, str, str]], now: datetime
                   ) -> Program[list[PendingEvent]]:
    """Of ``events``, each the first named with its key, those whose key ``claim_keys`` wrote."""
    written = yield from claim_keys(keys, now)
    first = {key: position for position, key in reversed(list(enumerate(keys)))}
    return [event for position, (event, key) in enumerate(zip(events, keys, strict=True))
            if key in written and first[key] == position]


def _limits(accepted: list[tuple[PendingEvent, str | None]], caps: Caps, now: datetime, *, single_writer: bool
            ) -> Program[Limits]:
    """What the billing rules read for the candidates (the events nothing stands against yet), with the windows
    they count in locked until the batch commits."""
    candidates = [event for event, reason in accepted if reason is None]
    if not candidates:
        return Limits()
    click_refs = [event.token_ref for event in candidates if event.reported.type == EventType.CLICK]
    viewed: frozenset[str] = frozenset()
    if click_refs:
        impressions = yield Statement(
            "SELECT token_ref FROM tracking_event WHERE token_ref IN (:refs) AND type = :type AND billable",
            {"refs": click_refs, "type": EventType.IMPRESSION.value})
        viewed = frozenset(str(row["token_ref"]) for row in impressions.rows)
    campaign_ids = sorted({event.reported.campaign_id for event in candidates})
    budgets = yield Statement(_BUDGETS, {"kind": "campaign", "token": Token.GS, "ids": campaign_ids})
    limits = Limits(viewed=viewed)
    for row in budgets.rows:
        limits.remaining[row["id"]] = int(Decimal(row["balance"] or 0))
        limits.daily_caps[row["id"]] = None if row["daily_cap"] is None else int(Decimal(row["daily_cap"]))
        if row["frequency_cap"] is not None:
            limits.frequency_caps[row["id"]] = int(row["frequency_cap"]), int(row["frequency_hours"]) * 3600
    windows = set().union(*(windows_of(event, caps, limits.frequency_caps, now).keys for event in candidates))
    used = yield from lock_windows(windows, single_writer=single_writer)
    limits.used.update(used)
    return limits


def _write(decided: Decisions, now: datetime) -> Program[None]:
    """Insert the decided events, book their billing, add to the windows and the counters."""
    if decided.decisions:
        yield Statement(_INSERT_EVENTS, {"rows": [
            _event_row(decision.event.event_id, decision.event, decision.reason, decision.cost,
                       decision.publisher_amount, now) for decision in decided.decisions]})
    tallies = tally(decided.decisions)
    billed = [(account, amount) for account, amount in tallies.legs.items() if amount != 0]
    if billed:
        yield from ledger.booking_program([ledger.Booking("ad_billing", new_id("ltx"), billed, now,
                                                          memo=f"{len(decided.decisions)} tracking events")])
    yield from add_to_windows(decided.billed_in)
    if tallies.stats:
        yield from daily_stats_program({key: dict(counter) for key, counter in tallies.stats.items()})
    if tallies.traffic:
        yield Statement(_ADD_TRAFFIC, {"rows": [
            (*key, events, Decimal(cost), Decimal(publisher_amount))
            for key, (events, cost, publisher_amount) in sorted(tallies.traffic.items())]})
    if tallies.reports:
        yield from report_program(tallies.reports)


# Each key is written only when it is new or its last acceptance is older than the window, and returned only then.
_CLAIM_KEYS = ("INSERT INTO dedup_key (fingerprint, campaign_id, type, last_accepted_at) VALUES :rows "
               "ON CONFLICT (fingerprint, campaign_id, type) "
               "DO UPDATE SET last_accepted_at = excluded.last_accepted_at "
               "WHERE dedup_key.last_accepted_at <= :window_start RETURNING fingerprint, campaign_id, type")
# Each candidate campaign's remaining budget (its ledger account, absent before its first funding), daily cap and
# frequency cap.
_BUDGETS = ("SELECT campaign.id, campaign.daily_cap, campaign.frequency_cap, campaign.frequency_hours, "
            "ledger_account.balance FROM campaign "
            "LEFT JOIN ledger_account ON ledger_account.owner = campaign.id AND ledger_account.kind = :kind "
            "AND ledger_account.token = :token WHERE campaign.id IN (:ids)")
_ADD_TRAFFIC = ("INSERT INTO traffic_daily (day, site_id, campaign_id, type, reason, events, cost, publisher_amount) "
                "VALUES :rows ON CONFLICT (day, site_id, campaign_id, type, reason) DO UPDATE SET "
                "events = traffic_daily.events + excluded.events, cost = traffic_daily.cost + excluded.cost, "
                "publisher_amount = traffic_daily.publisher_amount + excluded.publisher_amount")
_ADD_REPORTS = ("INSERT INTO report_daily (day, campaign_id, site_id, placement, country, device, impressions, "
                "clicks, cost, publisher_amount) VALUES :rows "
                "ON CONFLICT (day, campaign_id, site_id, placement, country, device) DO UPDATE SET "
                "impressions = report_daily.impressions + excluded.impressions, "
                "clicks = report_daily.clicks + excluded.clicks, cost = report_daily.cost + excluded.cost, "
                "publisher_amount = report_daily.publisher_amount + excluded.publisher_amount")
_EVENT_COLUMNS = (
    "id", "type", "campaign_id", "creative_id", "site_id", "fingerprint", "wallet", "placement", "token_ref",
    "rendered", "viewport_visible", "render_time_ms", "client_timestamp_ms", "page_url", "user_agent",
    "reported_user_agent", "client_network", "billable", "refusal_reason", "cost", "publisher_amount", "received_at",
    "country", "device", "viewer_key", "recorded_at", "audience_group", "consent_limited",
)
# One multi-row INSERT for the batch (building ORM objects would cost more than the write itself).
_INSERT_EVENTS = f"INSERT INTO tracking_event ({', '.join(_EVENT_COLUMNS)}) VALUES :rows"  # noqa: S608


def _event_row(event_id: str, event: PendingEvent, reason: str | None, cost: int, publisher_amount: int,
               now: datetime) -> tuple[Any, ...]:
    """The ``tracking_event`` row of an accepted event, in ``_EVENT_COLUMNS`` order: recorded ``now`` (the reach job's
    cursor), with its viewer as the campaign's digest of the id, never the id (and none when consent-limited)."""
    request, claims = event.reported, event.claims
    viewer = (viewer_key(request.campaign_id, claims.viewer)
              if claims is not None and claims.viewer and not event.consent_limited else None)
    return (
        event_id, request.type.value, request.campaign_id, request.ad_id, request.site_id,
        "" if event.consent_limited else request.fingerprint,
        claims.wallet if claims else None, claims.placement if claims else "", event.token_ref, request.rendered,
        request.viewport_visible, None if request.render_time is None else round(request.render_time),
        request.timestamp, request.page_url, event.client.user_agent, request.user_agent, event.client.network,
        reason is None, reason,
        Decimal(cost), Decimal(publisher_amount), event.received_at, event.country, event.device, viewer, now,
        claims.audience_group if claims else 0, event.consent_limited,
    )


def report_program(reports: dict[tuple[date, str, str, str, str, str], list[int]]) -> Program[None]:
    """Add billed figures to ``report_daily``: per (day, campaign, site, placement, country, device), [impressions,
    clicks, cost, publisher amount]; one upsert that adds in the database, in a stable order of row locks."""
    yield Statement(_ADD_REPORTS, {"rows": [
        (*key, impressions, clicks, Decimal(cost), Decimal(publisher_amount))
        for key, (impressions, clicks, cost, publisher_amount) in sorted(reports.items())]})


def claim_keys(keys: list[tuple[str, str, str]], now: datetime) -> Program[set[tuple[str, str, str]]]:
    """The one conditional write of deduplication: for each (fingerprint, campaign, type), insert its key or move
    ``last_accepted_at`` to ``now`` when the window has passed, and return the keys it wrote. A key named twice
    is written once; the caller decides which naming it belongs to."""
    unique = sorted(set(keys))  # one global order of row locks, so concurrent batches cannot deadlock
    if not unique:
        return set()
    written = yield Statement(_CLAIM_KEYS, {"rows": [(*key, now) for key in unique],
                                            "window_start": now - DEDUP_WINDOW})
    return {(row["fingerprint"], row["campaign_id"], row["type"]) for row in written.rows}
