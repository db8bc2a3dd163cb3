"""Impressions and clicks: validation, fraud and viewability rules, deduplication, and billing.

An event that passes validation (known site, campaign and ad) is recorded once per fingerprint + campaign + type
and hour, and is billable only when nothing names a reason against it. Reasons, first one wins, stored with the
event and counted (``refusal_counts``), never shown to the client:

- decided when the request arrives: ``bot_user_agent``; ``token_missing``, ``token_invalid``, ``token_expired``,
  ``token_mismatch`` (the token names another ad, campaign or site); for impressions ``not_rendered``,
  ``not_viewable``, ``view_too_short`` (reported less than ``MIN_VIEW_MS`` after the ad was served, so it cannot
  have been in view for one second); for clicks ``click_not_priced`` (served with ``bannerClickActive=false``);
  ``rate_limited_fingerprint`` / ``rate_limited_ip`` (more events than ``FINGERPRINT_EVENTS_PER_MINUTE`` /
  ``IP_EVENTS_PER_MINUTE`` in this process's current minute);
- decided in the database, in the batch's transaction: ``token_reused`` (this token already had an event of this
  type, whatever the fingerprint), ``click_without_impression`` (no billable impression of the same token before),
  ``budget_exhausted`` (the campaign's remaining budget cannot pay the price).

Deduplication is one conditional write per event on ``DedupKey``: an upsert that inserts the key, or moves its
``last_accepted_at`` only when the hour has passed, and returns the key only when it did either. Whatever runs
concurrently, in this process or another, exactly one of identical events gets the key; the others answer
``duplicate`` and leave nothing behind. The same write on a key made of the token digest makes ``token_reused``
exact, so rotating the fingerprint cannot bill one served ad twice.

Writes go through a ``GroupCommitter``: the events of a few milliseconds are deduplicated, checked, inserted and
billed in one database transaction, and each request is answered only after that transaction committed. Billing of
a batch is one balanced ledger transaction (kind ``ad_billing``): each campaign pays the sum of its events' costs
(an impression costs CPM/1000, a click its CPC, at the price of the moment, stored with the event), each site earns
its publisher share (``ADNET_PUBLISHER_SHARE_BPS``, rounded down), the platform the rest. The campaign's ledger
account cannot go negative, so spend never exceeds the funded budget; an event it cannot pay is recorded as
``budget_exhausted``. A batch that loses a race with another process is rolled back whole and retried.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter, defaultdict
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from decimal import Decimal
from functools import partial
from typing import TYPE_CHECKING, Any

from tortoise.exceptions import IntegrityError, OperationalError
from tortoise.functions import Count

from adnet import ledger, serving, statements, tracking_tokens
from adnet.batching import GroupCommitter
from adnet.errors import not_found
from adnet.ids import new_id
from adnet.models import Campaign, Creative, EventType, TrackingEvent
from adnet.statements import Program, Statement
from adnet.tracking_tokens import TokenClaims, TokenError

if TYPE_CHECKING:
    from adnet.app import Runtime

log = logging.getLogger(__name__)

BILLING_SYMBOL = "G$"  # the payout token campaigns pay in
DEDUP_WINDOW = timedelta(hours=1)
MIN_VIEW_MS = 1000
FINGERPRINT_EVENTS_PER_MINUTE = 30
IP_EVENTS_PER_MINUTE = 600
BATCH_DELAY_SECONDS = 0.0
BATCH_MAX_EVENTS = 256
_COMMIT_ATTEMPTS = 5
REASONS = (
    "bot_user_agent", "token_missing", "token_invalid", "token_expired", "token_mismatch", "not_rendered",
    "not_viewable", "view_too_short", "click_not_priced", "rate_limited_fingerprint", "rate_limited_ip",
    "token_reused", "click_without_impression", "budget_exhausted",
)
# Lower-case substrings of user agents that announce automation; an empty user agent counts as one too.
BOT_MARKERS = (
    "bot", "crawl", "spider", "slurp", "headless", "phantomjs", "selenium", "puppeteer", "playwright", "lighthouse",
    "curl/", "wget/", "python-requests", "python-urllib", "aiohttp", "httpx", "go-http-client", "java/", "okhttp",
    "libwww", "scrapy", "facebookexternalhit", "preview",
)


@dataclass(frozen=True)
class TrackRequest:
    """A validated ``POST /api/track`` body plus the client's address."""

    type: EventType
    campaign_id: str
    ad_id: str
    site_id: str
    fingerprint: str
    rendered: bool
    viewport_visible: bool
    render_time_ms: int | None
    timestamp_ms: int | None
    page_url: str
    user_agent: str
    tracking_token: str | None
    ip: str


@dataclass(frozen=True)
class TrackResult:
    """``recorded`` (with the event id and whether it was billed) or ``duplicate``."""

    status: str
    event_id: str | None = None
    billable: bool = False
    reason: str | None = None


@dataclass
class PendingEvent:
    """An event on its way into a batch: everything decided so far, and its price should it be billed."""

    request: TrackRequest
    received_at: datetime
    price: int
    reason: str | None
    claims: TokenClaims | None
    token_ref: str | None


def is_bot(user_agent: str) -> bool:
    """Whether a user agent announces a crawler, a headless browser or an HTTP library."""
    lowered = user_agent.lower()
    return not lowered.strip() or any(marker in lowered for marker in BOT_MARKERS)


class MinuteWindow:
    """Counts events per key in the current clock minute of this process (a billability heuristic: with several
    worker processes each allows the limit)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._minute = -1
        self._counts: Counter[str] = Counter()

    def over_limit(self, key: str, now: datetime) -> bool:
        """Count one event for ``key``; True when it exceeds the limit."""
        minute = int(now.timestamp() // 60)
        if minute != self._minute:
            self._minute, self._counts = minute, Counter()
        self._counts[key] += 1
        return self._counts[key] > self.limit


class Tracker:
    """This process's tracking state: the batch writer, the rate windows and the reason counters."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self.committer: GroupCommitter[PendingEvent, TrackResult] = GroupCommitter(
            self.commit, name="tracking", max_delay=BATCH_DELAY_SECONDS, max_size=BATCH_MAX_EVENTS)
        self.by_fingerprint = MinuteWindow(FINGERPRINT_EVENTS_PER_MINUTE)
        self.by_ip = MinuteWindow(IP_EVENTS_PER_MINUTE)
        self.reasons: Counter[str] = Counter()

    async def track(self, request: TrackRequest) -> TrackResult:
        """Record one event (or recognise a duplicate) and answer once it is committed; 404 for an unknown site,
        campaign or ad."""
        server = serving.server(self.runtime)
        if not await server.site_exists(request.site_id):
            raise not_found("site")
        price = await _price(server, request)
        now = self.runtime.clock.now()
        claims, reason = self._check_token(request, now)
        reason = _first(reason if not is_bot(request.user_agent) else "bot_user_agent",
                        _viewability(request, claims, now))
        if request.type == EventType.CLICK and reason is None and claims is not None and not claims.click_active:
            reason = "click_not_priced"
        over_fingerprint = self.by_fingerprint.over_limit(request.fingerprint, now)
        over_ip = self.by_ip.over_limit(request.ip, now)
        reason = _first(reason, "rate_limited_fingerprint" if over_fingerprint else None,
                        "rate_limited_ip" if over_ip else None)
        token_ref = tracking_tokens.token_ref(request.tracking_token) if claims and request.tracking_token else None
        return await self.committer.submit(PendingEvent(request=request, received_at=now, price=price,
                                                        reason=reason, claims=claims, token_ref=token_ref))

    def _check_token(self, request: TrackRequest, now: datetime) -> tuple[TokenClaims | None, str | None]:
        if not request.tracking_token:
            return None, "token_missing"
        settings = self.runtime.settings
        try:
            claims = tracking_tokens.verify_token(
                request.tracking_token, secrets=(settings.tracking_secret, settings.tracking_secret_previous or ""),
                now=now)
        except TokenError as exc:
            return None, exc.reason
        if (claims.ad_id, claims.campaign_id, claims.site_id) != (request.ad_id, request.campaign_id,
                                                                  request.site_id):
            return None, "token_mismatch"
        return claims, None

    async def commit(self, events: list[PendingEvent]) -> list[TrackResult]:
        """Write one batch in one transaction, retried whole when it lost a race with another writer."""
        for attempt in range(1, _COMMIT_ATTEMPTS + 1):
            now, share_bps = self.runtime.clock.now(), self.runtime.settings.publisher_share_bps
            try:
                results, spent = await statements.transaction(
                    partial(_write_batch, events=events, now=now, share_bps=share_bps))
                break
            except (ledger.InsufficientFunds, IntegrityError, OperationalError):
                if attempt == _COMMIT_ATTEMPTS:
                    raise
                log.info("tracking batch retried attempt=%d size=%d", attempt, len(events))
                await asyncio.sleep(0.005 * attempt)
        server = serving.server(self.runtime)
        for campaign_id, amount in spent.items():
            server.spent(campaign_id, amount)
        self.reasons.update(result.reason for result in results if result.reason)
        return results


async def _price(server: serving.Server, request: TrackRequest) -> int:
    """The price the event would cost: from the serving index, or from the database for an ad no longer served."""
    campaign = server.index.campaigns.get(request.campaign_id)
    creative = server.index.creatives.get(request.ad_id)
    if campaign is not None and creative is not None and creative.campaign_id == campaign.id:
        cpm, cpc = campaign.cpm, campaign.cpc
    else:
        stored = await Campaign.get_or_none(id=request.campaign_id).only("id", "cpm", "cpc")
        if stored is None:
            raise not_found("campaign")
        if not await Creative.filter(id=request.ad_id, campaign_id=stored.id).exists():
            raise not_found("ad")
        cpm, cpc = int(stored.cpm), int(stored.cpc)
    return cpm // 1000 if request.type == EventType.IMPRESSION else cpc


def _viewability(request: TrackRequest, claims: TokenClaims | None, now: datetime) -> str | None:
    if request.type != EventType.IMPRESSION:
        return None
    if not request.rendered:
        return "not_rendered"
    if not request.viewport_visible:
        return "not_viewable"
    if claims is not None and int(now.timestamp() * 1000) - claims.issued_at_ms < MIN_VIEW_MS:
        return "view_too_short"
    return None


def _first(*reasons: str | None) -> str | None:
    return next((reason for reason in reasons if reason is not None), None)


def _write_batch(dialect: str, events: list[PendingEvent], now: datetime, share_bps: int
                 ) -> Program[tuple[list[TrackResult], dict[str, int]]]:
    """Deduplicate, decide, insert and bill one batch: one program of statements (``adnet.statements``), run as a
    transaction of its own, so on SQLite the whole batch is one trip to the database's thread."""
    keys = [(event.request.fingerprint, event.request.campaign_id, event.request.type.value) for event in events]
    accepted_keys = yield from claim_keys(dialect, keys, now)
    first_index = {key: position for position, key in reversed(list(enumerate(keys)))}
    accepted = [event for position, (event, key) in enumerate(zip(events, keys, strict=True))
                if key in accepted_keys and first_index[key] == position]
    reasons = {id(event): event.reason for event in accepted}

    tokened = [event for event in accepted if reasons[id(event)] is None and event.token_ref]
    token_keys = [(f"token:{event.token_ref}", event.request.campaign_id, event.request.type.value)
                  for event in tokened]
    fresh_tokens = yield from claim_keys(dialect, token_keys, now)
    token_first = {key: position for position, key in reversed(list(enumerate(token_keys)))}
    for position, (event, key) in enumerate(zip(tokened, token_keys, strict=True)):
        if key not in fresh_tokens or token_first[key] != position:
            reasons[id(event)] = "token_reused"

    candidates = [event for event in accepted if reasons[id(event)] is None]
    click_refs = [event.token_ref for event in candidates if event.request.type == EventType.CLICK]
    viewed: set[str | None] = set()
    if click_refs:
        marks = statements.marks(dialect, len(click_refs) + 1)
        impressions = yield Statement(
            f"SELECT token_ref FROM tracking_event WHERE token_ref IN ({', '.join(marks[:-1])}) "  # noqa: S608
            f"AND type = {marks[-1]} AND billable", [*click_refs, EventType.IMPRESSION.value])
        viewed.update(str(row["token_ref"]) for row in impressions.rows)
    campaign_ids = sorted({event.request.campaign_id for event in candidates})
    remaining: dict[str, int] = {}
    if campaign_ids:
        marks = statements.marks(dialect, len(campaign_ids) + 2)
        budgets = yield Statement(
            f"SELECT owner, balance FROM ledger_account WHERE kind = {marks[0]} AND token = {marks[1]} "  # noqa: S608
            f"AND owner IN ({', '.join(marks[2:])})", ["campaign", BILLING_SYMBOL, *campaign_ids])
        remaining = {row["owner"]: int(Decimal(row["balance"])) for row in budgets.rows}

    rows: list[tuple[Any, ...]] = []
    results: dict[int, TrackResult] = {}
    legs: dict[ledger.AccountKey, int] = defaultdict(int)
    spent: dict[str, int] = defaultdict(int)
    stats: dict[tuple[str, date], Counter[str]] = defaultdict(Counter)
    for event in accepted:
        request, reason = event.request, reasons[id(event)]
        if reason is None and request.type == EventType.CLICK and event.token_ref not in viewed:
            reason = "click_without_impression"
        if reason is None and remaining.get(request.campaign_id, 0) < event.price:
            reason = "budget_exhausted"
        billable = reason is None
        cost = event.price if billable else 0
        publisher_amount = cost * share_bps // 10_000
        if billable:
            remaining[request.campaign_id] -= cost
            spent[request.campaign_id] += cost
            legs[ledger.campaign(request.campaign_id)] -= cost
            legs[ledger.site(request.site_id)] += publisher_amount
            legs[ledger.platform(BILLING_SYMBOL)] += cost - publisher_amount
            if request.type == EventType.IMPRESSION:
                viewed.add(event.token_ref)
        event_id = new_id("ev")
        rows.append(_event_row(event_id, event, reason, cost, publisher_amount))
        results[id(event)] = TrackResult("recorded", event_id, billable, reason)
        counter = stats[(request.site_id, event.received_at.date())]
        kind = "impressions" if request.type == EventType.IMPRESSION else "clicks"
        counter[kind] += 1
        counter[f"billable_{kind}"] += 1 if billable else 0

    if rows:
        yield _insert_events(dialect, rows)
    billed = [(account, amount) for account, amount in legs.items() if amount != 0]
    if billed:
        yield from ledger.booking_program([ledger.Booking("ad_billing", new_id("ltx"), billed, now,
                                                          memo=f"{len(rows)} tracking events")], dialect)
    if stats:
        yield from serving.daily_stats_program({key: dict(counter) for key, counter in stats.items()}, dialect)
    duplicate = TrackResult("duplicate")
    return [results.get(id(event), duplicate) for event in events], dict(spent)


_EVENT_COLUMNS = (
    "id", "type", "campaign_id", "creative_id", "site_id", "fingerprint", "wallet", "placement", "token_ref",
    "rendered", "viewport_visible", "render_time_ms", "client_timestamp_ms", "page_url", "user_agent", "ip",
    "billable", "refusal_reason", "cost", "publisher_amount", "received_at",
)


def _event_row(event_id: str, event: PendingEvent, reason: str | None, cost: int, publisher_amount: int
               ) -> tuple[Any, ...]:
    """The ``tracking_event`` row of an accepted event, in ``_EVENT_COLUMNS`` order."""
    request, claims = event.request, event.claims
    return (
        event_id, request.type.value, request.campaign_id, request.ad_id, request.site_id, request.fingerprint,
        claims.wallet if claims else None, claims.placement if claims else "", event.token_ref, request.rendered,
        request.viewport_visible, request.render_time_ms, request.timestamp_ms, request.page_url,
        request.user_agent, request.ip[:45], reason is None, reason, Decimal(cost), Decimal(publisher_amount),
        event.received_at,
    )


def _insert_events(dialect: str, rows: list[tuple[Any, ...]]) -> Statement:
    """One multi-row INSERT for the batch (building ORM objects would cost more than the write itself)."""
    values_sql = statements.value_rows(dialect, len(rows), len(_EVENT_COLUMNS))
    return Statement(f"INSERT INTO tracking_event ({', '.join(_EVENT_COLUMNS)}) VALUES {values_sql}",  # noqa: S608
                     [value for row in rows for value in row])


def claim_keys(dialect: str, keys: list[tuple[str, str, str]], now: datetime) -> Program[set[tuple[str, str, str]]]:
    """The one conditional write of deduplication: for each (fingerprint, campaign, type), insert its key or move
    ``last_accepted_at`` to ``now`` when the window has passed, and return the keys it wrote. A key named twice
    is written once; the caller decides which naming it belongs to."""
    unique = sorted(set(keys))  # one global order of row locks, so concurrent batches cannot deadlock
    if not unique:
        return set()
    values: list[Any] = []
    for key in unique:
        values.extend((*key, now))
    values.append(now - DEDUP_WINDOW)
    window = statements.marks(dialect, len(values))[-1]  # the marker after the rows'
    written = yield Statement(
        "INSERT INTO dedup_key (fingerprint, campaign_id, type, last_accepted_at) "  # noqa: S608
        f"VALUES {statements.value_rows(dialect, len(unique), 4)} ON CONFLICT (fingerprint, campaign_id, type) "
        "DO UPDATE SET last_accepted_at = excluded.last_accepted_at "
        f"WHERE dedup_key.last_accepted_at <= {window} "
        "RETURNING fingerprint, campaign_id, type", values)
    return {(row["fingerprint"], row["campaign_id"], row["type"]) for row in written.rows}


async def refusal_counts(*, site_id: str | None = None, since: datetime | None = None) -> dict[str, int]:
    """How many recorded events each reason kept from billing (optionally for one site, since a time)."""
    query = TrackingEvent.filter(billable=False)
    if site_id is not None:
        query = query.filter(site_id=site_id)
    if since is not None:
        query = query.filter(received_at__gte=since)
    rows = await query.annotate(count=Count("id")).group_by("refusal_reason").values_list("refusal_reason", "count")
    return {reason: count for reason, count in rows}


def tracker(runtime: Runtime) -> Tracker:
    """This process's tracker (created by ``start``)."""
    return runtime.extras["tracking"]


async def start(runtime: Runtime) -> None:
    """App start-up, after ``serving.start``: start the batch writer (idempotent)."""
    if "tracking" in runtime.extras:
        return
    current = Tracker(runtime)
    current.committer.start()
    runtime.extras["tracking"] = current


async def stop(runtime: Runtime) -> None:
    """App shutdown, before ``serving.stop``: commit what is queued and stop the writer."""
    current: Tracker | None = runtime.extras.pop("tracking", None)
    if current is not None:
        await current.committer.stop()
