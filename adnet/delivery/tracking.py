"""Impressions and clicks: the rules that decide, before the batch, whether an event could be billed.

An event that passes validation (known site, campaign and ad) is recorded once per fingerprint + campaign + type
and hour (``adnet.delivery.batch``), and is billable only when nothing names a reason against it. Reasons, in the
order of ``REASONS`` (the first one wins), are stored with the event and reported per day to the site's owner and
the campaign's advertiser, never to the client:

- decided when the request arrives: ``bot_user_agent`` (the request's own User-Agent header, see
  ``adnet.delivery.clients``; the body's ``userAgent`` is kept as information only); the refusals of where a
  campaign may be paid (``adnet.campaigns.eligibility.refusal``, from the serving index, as it stands now rather
  than when the ad was served): ``site_unverified`` (the site's owner has not proven its domain, or the proof
  lapsed), ``site_excluded`` (the campaign's ``siteAllow``/``siteDeny``), ``site_blocked`` (the site's owner blocks
  the campaign, its advertiser or its category); ``domain_mismatch`` (the page, by ``Origin`` or
  ``Referer`` and ``pageUrl``, is not on the site's domain, now or when the ad was served: ``adnet.delivery.sites``);
  ``token_missing``, ``token_invalid``, ``token_expired``, ``token_mismatch`` (the token names another ad, campaign
  or site), ``client_mismatch`` (the event comes from another network or browser family than the ad was served
  to); for impressions ``not_rendered``, ``not_viewable``, ``view_too_short`` (reported less than ``MIN_VIEW_MS``
  after the ad was served, so it cannot have been in view for one second); for clicks ``click_not_priced`` (served
  with ``bannerClickActive=false``);
- decided in the database, in the batch's transaction, exact across processes: ``token_reused`` (this token
  already had an event of this type, whatever the fingerprint), ``click_without_impression`` (no billable impression
  of the same token before), ``client_rate_exceeded`` (the client's network reached a billing cap on this site or
  campaign, ``adnet.delivery.caps``), ``frequency_capped`` (the viewer its token names already had as many billed
  impressions of the campaign in the period as its frequency cap allows, ``adnet.delivery.frequency``),
  ``budget_exhausted`` (the campaign's remaining budget cannot pay the price),
  ``daily_cap_reached`` (the price would take the campaign's spend of the UTC day past its ``dailyCap``).

An event whose page's consent signals do not let adnet keep a viewer id (``adnet.delivery.consent.limitation``,
decided here from the strings the request carries, whatever its token says) is **consent-limited**: recorded with
``consent_limited`` set and without its viewer id, deduplicated by its token (once per served ad and type in the
hour) instead of by viewer, and kept out of frequency caps and counts; the client network's caps still apply.

Writes go through a ``GroupCommitter``: the events of a few milliseconds are written in one database transaction,
and each request is answered only after that transaction committed. On a SQLite file the transaction runs in the
worker's writer process (``adnet.db.writer_process``), so the batch's work does not take turns with the worker's
HTTP work at Python's lock. A batch that loses a race with another process, or whose writer process ended, is
rolled back whole and retried.

While the database cannot be reached (``adnet.db.outage``), a batch is kept in the host's spool instead
(``adnet.delivery.spool``) and each of its events answered 201 under the id it will be stored under; the worker
writes the spool to the database when it answers again, through the same batch (``write_batch(..., replayed=True)``),
so deduplication and billing are decided then and each event is stored once. A worker's new batches go behind its
spooled ones until those are written, so its events reach the database in the order they came. Without a spool
(``ADNET_SPOOL_MAX_EVENTS=0``) or with a full one, a request answers 503 ``database_unavailable`` instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sqlite3
import time
from collections import Counter
from dataclasses import replace
from datetime import datetime
from functools import partial

from tortoise.exceptions import IntegrityError, OperationalError

from adnet.campaigns.eligibility import TERMS_FIELDS, CampaignTerms, refusal, terms_of
from adnet.campaigns.models import Campaign, Creative
from adnet.config import Settings
from adnet.core import metrics
from adnet.core.clock import Clock
from adnet.core.errors import NotFound
from adnet.db import sql
from adnet.db.config import sqlite_file
from adnet.db.group_commit import GroupCommitter
from adnet.db.outage import DatabaseLink, is_outage, unavailable
from adnet.db.writer_process import WriterProcess
from adnet.delivery import tokens
from adnet.delivery.batch import write_batch
from adnet.delivery.caps import Caps
from adnet.delivery.clients import Client
from adnet.delivery.commands import TrackEvent
from adnet.delivery.consent import limitation
from adnet.delivery.events import PendingEvent, TrackResult
from adnet.delivery.models import EventType
from adnet.delivery.serving import Server
from adnet.delivery.sites import on_site
from adnet.delivery.spool import ORPHAN_SCAN_SECONDS, Spool, SpoolFull
from adnet.delivery.targeting import device_of
from adnet.delivery.tokens import TokenClaims, TokenError
from adnet.money import ledger

log = logging.getLogger(__name__)

MIN_VIEW_MS = 1000
BATCH_DELAY_SECONDS = 0.0
BATCH_MAX_EVENTS = 256
_COMMIT_ATTEMPTS = 5
# How long a batch kept nowhere keeps the host out of readiness, unless one is kept before.
FAILING_SECONDS = 30.0
# How long a stopping worker may spend writing its spool to a database that answers.
STOP_DRAIN_SECONDS = 5.0
REASONS = (
    "bot_user_agent", "site_unverified", "site_excluded", "site_blocked", "domain_mismatch", "token_missing",
    "token_invalid", "token_expired", "token_mismatch", "client_mismatch", "not_rendered", "not_viewable",
    "view_too_short", "click_not_priced", "token_reused", "click_without_impression", "client_rate_exceeded",
    "frequency_capped", "budget_exhausted", "daily_cap_reached",
)
class Tracker:
    """This process's tracking state: the batch writer, the spool, the rate windows and the reason counters.

    ``database`` is the process's view of its database (``adnet.db.outage``); ``spool`` where events are kept while
    it is away (None: requests then answer 503 ``database_unavailable`` instead)."""

    def __init__(self, *, clock: Clock, settings: Settings, server: Server, database: DatabaseLink,
                 spool: Spool | None = None) -> None:
        self.clock = clock
        self.settings = settings
        self.server = server
        self.database = database
        self.spool = spool
        self.committer: GroupCommitter[PendingEvent, TrackResult] = GroupCommitter(
            self.commit, name="tracking", max_delay=BATCH_DELAY_SECONDS, max_size=BATCH_MAX_EVENTS)
        self.caps = Caps.of(settings)
        self.single_writer = settings.database_url.startswith("sqlite")
        # A SQLite file's batches run in a writer process (an in-memory database lives in this one's connection).
        self.writer = (WriterProcess.take(settings.database_url) if sqlite_file(settings.database_url) is not None
                       else None)
        self.reasons: Counter[str] = Counter()
        self.failing_since: float | None = None  # monotonic: since when batches can be kept nowhere
        self._writing = asyncio.Lock()  # one batch at a time to the database (the writer process runs one)
        self._drain_wake = asyncio.Event()
        self._drainer: asyncio.Task[None] | None = None

    def start(self) -> None:
        self.committer.start()
        if self.spool is not None:
            self._drainer = asyncio.get_running_loop().create_task(self._drain_loop(self.spool),
                                                                   name="tracking-spool-drain")

    async def stop(self) -> None:
        """Commit (or spool) what is queued, write what the spool holds if the database answers (within
        ``STOP_DRAIN_SECONDS``), and stop (before the database closes)."""
        await self.committer.stop()
        if self._drainer is not None:
            self._drainer.cancel()
            await asyncio.gather(self._drainer, return_exceptions=True)
        if self.spool is not None:
            if self.spool.depth and self.database.reachable:
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(STOP_DRAIN_SECONDS):
                        await self._drain(self.spool)
            await self.spool.close()
        if self.writer is not None:
            self.writer.give_back()

    @property
    def failing(self) -> bool:
        """Whether the last batch could be kept neither in the database nor in the spool, within
        ``FAILING_SECONDS`` (readiness: ``adnet.jobs.health``)."""
        return self.failing_since is not None and time.monotonic() - self.failing_since < FAILING_SECONDS

    async def unready(self, *, database_reachable: bool) -> list[str]:
        """Why this process cannot record tracking events now (readiness, ``adnet.jobs.health``), given whether
        the database answered: ``database_unreachable`` when it did not and the spool cannot take events either
        (off, full, or on a disk that refuses a write), ``disk_unwritable``, ``spool_full``, ``tracking_failing``
        (the last batch was kept nowhere, within ``FAILING_SECONDS``)."""
        spool = self.spool
        disk = spool is None or await spool.writable()
        full = spool is not None and spool.full
        return [reason for reason, holds in (
            ("database_unreachable", not database_reachable and (spool is None or full or not disk)),
            ("disk_unwritable", not disk), ("spool_full", full), ("tracking_failing", self.failing)) if holds]

    async def track(self, request: TrackEvent, client: Client) -> TrackResult:
        """Record one event ``client`` reported (or recognise a duplicate) and answer once it is committed, or kept
        in the spool while the database is away; NotFound for an unknown site, campaign or ad, ConsentError for
        consent strings that cannot be decoded."""
        limited = limitation(request, self.settings.iab_vendor_id) is not None
        site = await self.server.site(request.site_id)
        price, campaign = await _price(self.server, request)
        now = self.clock.now()
        claims, token_reason = self._check_token(request, client, now)
        if limited and claims is not None and claims.viewer is not None:
            claims = replace(claims, viewer=None)  # no frequency window or count for this viewer
        off_site = (claims is not None and claims.off_site) or not on_site(
            site, origin=client.origin, referer=client.referer, page_url=request.page_url)
        reason = _first("bot_user_agent" if client.is_bot else None, refusal(site, campaign, paid=True),
                        "domain_mismatch" if off_site else None, token_reason, _viewability(request, claims, now))
        if request.type == EventType.CLICK and reason is None and claims is not None and not claims.click_active:
            reason = "click_not_priced"
        token_ref = tokens.token_ref(request.tracking_token) if claims and request.tracking_token else None
        location = self.server.locator.locate(client)
        return await self.committer.submit(PendingEvent(
            reported=request, client=client, received_at=now, price=price, reason=reason, claims=claims,
            token_ref=token_ref, country=location.country if location else "", device=device_of(client.user_agent)[0],
            consent_limited=limited))

    def _check_token(self, request: TrackEvent, client: Client, now: datetime
                     ) -> tuple[TokenClaims | None, str | None]:
        if not request.tracking_token:
            return None, "token_missing"
        settings = self.settings
        try:
            claims = tokens.verify_token(
                request.tracking_token, secrets=(settings.tracking_secret, settings.tracking_secret_previous or ""),
                now=now)
        except TokenError as exc:
            return None, exc.reason
        if (claims.ad_id, claims.campaign_id, claims.site_id) != (request.ad_id, request.campaign_id,
                                                                  request.site_id):
            return None, "token_mismatch"
        if claims.client != client.binding:
            return claims, "client_mismatch"
        return claims, None

    async def commit(self, events: list[PendingEvent]) -> list[TrackResult]:
        """Keep one batch: in the database, or in the spool while the database is away or the spool still holds
        earlier events of this worker (they are written first, in order)."""
        if self.spool is not None and (self.spool.holds_own or not self.database.reachable):
            return await self._keep(self.spool, events)
        try:
            results = await self._write(events)
        except Exception as error:
            if not is_outage(error):
                self._failed(error)
                raise
            self.database.failed(error)
            if self.spool is None:  # readiness says database_unreachable, for as long as it is
                raise
            return await self._keep(self.spool, events)
        self._kept()
        return results

    async def _keep(self, spool: Spool, events: list[PendingEvent]) -> list[TrackResult]:
        """Append a batch to the spool and answer each event ``recorded`` under its id."""
        try:
            await spool.append(events)
        except SpoolFull as full:
            log.debug("tracking spool full: %s", full)
            raise unavailable("The database cannot be reached and this host's spool is full") from full
        except (OSError, sqlite3.Error) as error:
            self._failed(error)
            raise unavailable("The database cannot be reached and this host cannot keep the event") from error
        metrics.SPOOLED_EVENTS.labels(outcome="spooled").inc(len(events))
        self._kept()
        self._drain_wake.set()
        return [TrackResult("recorded", event.event_id) for event in events]

    def _kept(self) -> None:
        if self.failing_since is not None:
            log.info("tracking keeps events again failed_seconds=%.1f", time.monotonic() - self.failing_since)
            self.failing_since = None

    def _failed(self, error: BaseException) -> None:
        if self.failing_since is None:
            log.error("tracking cannot keep events error=%r", f"{type(error).__name__}: {error}")
        self.failing_since = time.monotonic()

    async def _write(self, events: list[PendingEvent], *, replayed: bool = False) -> list[TrackResult]:
        """Write one batch in one transaction, retried whole when it lost a race with another writer (a retry may
        find what a failed commit stored after all: it is ``replayed``), then tell serving what it billed."""
        async with self._writing:
            for attempt in range(1, _COMMIT_ATTEMPTS + 1):
                now, share_bps = self.clock.now(), self.settings.publisher_share_bps
                try:
                    batch = partial(write_batch, events, now, share_bps, self.caps, single_writer=self.single_writer,
                                    replayed=replayed or attempt > 1)
                    results, spent = await (self.writer.transaction(batch) if self.writer is not None
                                            else sql.transaction(batch))
                    break
                except (ledger.InsufficientFunds, IntegrityError, OperationalError):
                    if attempt == _COMMIT_ATTEMPTS:
                        raise
                    log.info("tracking batch retried attempt=%d size=%d", attempt, len(events))
                    await asyncio.sleep(0.005 * attempt)
        self.database.answered()
        for campaign_id, amount in spent.items():
            self.server.spent(campaign_id, amount)
        viewed: list[tuple[str, str, datetime]] = []
        for event, result in zip(events, results, strict=True):
            if not result.billable:
                continue
            impression = event.reported.type == EventType.IMPRESSION
            self.server.billed(event.reported.ad_id, impression)
            if impression and event.claims is not None and event.claims.viewer:
                viewed.append((event.reported.campaign_id, event.claims.viewer, event.received_at))
        await self.server.viewed(viewed)
        reasons = Counter(result.reason for result in results if result.reason)
        self.reasons.update(reasons)
        metrics.count_filtered(reasons)
        return results

    async def _drain_loop(self, spool: Spool) -> None:
        """Write what the spool holds whenever the database answers: woken by an append and by the database's
        return, and every ``ORPHAN_SCAN_SECONDS`` to adopt the spools of workers that ended."""
        while True:
            try:
                await spool.adopt_orphans()
                await self.database.wait_until_reachable()
                await self._drain(spool)
            except Exception:  # the spool's disk or a database that failed otherwise: try again at the next turn
                log.exception("tracking spool drain failed")
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(ORPHAN_SCAN_SECONDS):
                    await self._drain_wake.wait()
            self._drain_wake.clear()

    async def _drain(self, spool: Spool) -> None:
        """Write the spool's events to the database, oldest first, until it is empty or the database fails; say
        once what was written."""
        written = duplicates = 0
        try:
            while (batch := await spool.take(BATCH_MAX_EVENTS)) is not None:
                try:
                    results = await self._write(batch.events, replayed=True)
                except Exception as error:
                    if not is_outage(error):
                        raise
                    self.database.failed(error)
                    return
                await spool.remove(batch)
                dropped = sum(result.event_id is None for result in results)
                written, duplicates = written + len(results) - dropped, duplicates + dropped
                metrics.SPOOLED_EVENTS.labels(outcome="written").inc(len(results) - dropped)
                metrics.SPOOLED_EVENTS.labels(outcome="duplicate").inc(dropped)
        finally:
            if written or duplicates:
                log.info("tracking spool written events=%d duplicates=%d left=%d", written, duplicates,
                         spool.depth)


async def _price(server: Server, request: TrackEvent) -> tuple[int, CampaignTerms]:
    """The price the event would cost and its campaign's facts for the rule of where it may be paid: from the
    serving index, or from the database for an ad no longer served."""
    campaign = server.index.campaigns.get(request.campaign_id)
    creative = server.index.creatives.get(request.ad_id)
    if campaign is not None and creative is not None and creative.campaign_id == campaign.id:
        return _cost(request, campaign.cpm, campaign.cpc), campaign
    stored = await Campaign.get_or_none(id=request.campaign_id).only("cpm", "cpc", *TERMS_FIELDS)
    if stored is None:
        raise NotFound.of("campaign")
    if not await Creative.filter(id=request.ad_id, campaign_id=stored.id).exists():
        raise NotFound.of("ad")
    return _cost(request, int(stored.cpm), int(stored.cpc)), terms_of(stored)


def _cost(request: TrackEvent, cpm: int, cpc: int) -> int:
    return cpm // 1000 if request.type == EventType.IMPRESSION else cpc


def _viewability(request: TrackEvent, claims: TokenClaims | None, now: datetime) -> str | None:
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


