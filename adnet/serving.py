"""Ad serving: which banner or unit a site gets, decided from memory so ``GET /api/serve`` touches no database.

An ``Index`` holds everything a decision needs: active sites, approved campaigns with their approved creatives,
remaining budgets and attached tasks, and standalone units. It is rebuilt from the database when other code says
something changed (``invalidate()`` or ``await refresh()`` after editing campaigns, creatives, tasks or sites) and
every ``REBUILD_SECONDS`` by a background task, so other worker processes catch up within that time. Tracking
lowers a campaign's remaining budget in the index as soon as it bills, between rebuilds.

Sites are registered by the publisher API at any time: a site id missing from the index costs one database lookup,
whose answer is cached (a known site until the next rebuild, an unknown one for ``UNKNOWN_SITE_SECONDS``), so a
new site is served at once and a flood of made-up ids cannot reach the database more than once each.

The pick is a weighted draw: weight = price x pacing, each clamped (price to [``MIN_PRICE_SHARE``, 1] of the best
eCPM on offer, pacing to [``MIN_PACING``, ``MAX_PACING``]), so the best offer wins most often, a campaign behind its
even spend catches up, and no candidate starves. The random source is the runtime's, injectable for tests.

Serve and empty decisions are counted per site and UTC day in memory and added to ``SiteDailyStat`` on every
background tick and at shutdown (fill rate = filled / requests).

Leaving out attached tasks a wallet already completed is the one case that reads the database: only when the
request names a wallet, asks for attached tasks, and the chosen campaign has some; then it is one lookup on the
completion table's (task, wallet) unique index. Requests without a wallet — the common case — do no query.
"""

from __future__ import annotations

import asyncio
import logging
import random
import re
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import TYPE_CHECKING, Any

from quart import current_app, has_app_context
from tortoise import connections
from tortoise.expressions import Q

from adnet import ledger, statements, tracking_tokens
from adnet.errors import bad_request, not_found
from adnet.ids import has_prefix
from adnet.models import (
    Campaign,
    CampaignStatus,
    Completion,
    Creative,
    CreativeStatus,
    Site,
    Task,
    TaskKind,
    TaskSurface,
)
from adnet.statements import Program, Statement
from adnet.tasks.config import public_task
from adnet.wallets import InvalidWallet, normalize_wallet

if TYPE_CHECKING:
    from adnet.app import Runtime

log = logging.getLogger(__name__)

REBUILD_SECONDS = 3.0
UNKNOWN_SITE_SECONDS = 5.0
MAX_UNKNOWN_SITES = 10_000
MAX_ATTACHED_TASKS = 2
BANNER = "BANNER"
KINDS = (BANNER, TaskKind.POLL.value, TaskKind.FEEDBACK.value, TaskKind.SURVEY.value)
UNIT_KINDS = frozenset({TaskKind.POLL, TaskKind.FEEDBACK, TaskKind.SURVEY})
MAX_PLACEMENT_LENGTH = 64
# Click-through rate assumed when turning a CPC into an eCPM (0.2 %, a typical display banner).
ASSUMED_CTR = 0.002
MIN_PRICE_SHARE = 0.05
MIN_PACING = 0.25
MAX_PACING = 4.0
_SIZE = re.compile(r"^([1-9][0-9]{0,4})x([1-9][0-9]{0,4})$")


@dataclass(frozen=True)
class ServeRequest:
    """A validated ``GET /api/serve`` query."""

    site_id: str
    kinds: frozenset[str]
    size: str | None
    placement: str
    wallet: str | None
    attached: bool


@dataclass(frozen=True)
class CreativeEntry:
    id: str
    campaign_id: str
    banner_url: str
    target_url: str
    description: str
    media_type: str
    size: str


@dataclass(frozen=True)
class TaskEntry:
    """An attached task or standalone unit, with its public view computed once per rebuild."""

    id: str
    kind: TaskKind
    starts_at: datetime
    ends_at: datetime | None
    max_per_wallet: int
    view: dict[str, Any]

    def live(self, now: datetime) -> bool:
        return self.starts_at <= now and (self.ends_at is None or now < self.ends_at)


@dataclass
class CampaignEntry:
    id: str
    cpm: int
    cpc: int
    budget: int
    remaining: int
    starts_at: datetime
    ends_at: datetime | None
    sizes: frozenset[str]
    placements: frozenset[str]
    site_allow: frozenset[str]
    site_deny: frozenset[str]
    creatives: tuple[CreativeEntry, ...]
    tasks: tuple[TaskEntry, ...]

    @property
    def impression_cost(self) -> int:
        return self.cpm // 1000

    def has_budget(self) -> bool:
        """Whether the campaign can still pay for an impression (or a click when it prices only clicks)."""
        cheapest = min((cost for cost in (self.impression_cost, self.cpc) if cost > 0), default=0)
        return self.remaining > 0 and self.remaining >= cheapest

    def live(self, now: datetime) -> bool:
        return self.starts_at <= now and (self.ends_at is None or now < self.ends_at)

    def runs_on(self, site_id: str, placement: str) -> bool:
        if site_id in self.site_deny or (self.site_allow and site_id not in self.site_allow):
            return False
        return not self.placements or placement in self.placements

    def creatives_for(self, size: str | None) -> list[CreativeEntry]:
        if size is None:
            return list(self.creatives)
        if self.sizes and size not in self.sizes:
            return []
        return [creative for creative in self.creatives if creative.size == size]


@dataclass
class Index:
    """One consistent snapshot of what can be served."""

    sites: set[str] = field(default_factory=set)
    campaigns: dict[str, CampaignEntry] = field(default_factory=dict)
    creatives: dict[str, CreativeEntry] = field(default_factory=dict)
    units: tuple[TaskEntry, ...] = ()
    built_at: float = 0.0


@dataclass(frozen=True)
class Candidate:
    """A possible answer: a campaign's creative, or a standalone unit."""

    weight: float
    campaign: CampaignEntry | None = None
    creative: CreativeEntry | None = None
    unit: TaskEntry | None = None


class Server:
    """The serving state of one process: the index, the site cache, fill counters and the rebuild task."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self.index = Index()
        self._unknown_sites: dict[str, float] = {}
        self._fill: Counter[tuple[str, date, bool]] = Counter()
        self._dirty = asyncio.Event()
        self._lock = asyncio.Lock()
        self._task: asyncio.Task[None] | None = None

    async def rebuild(self) -> None:
        """Replace the index with a fresh one read from the database."""
        async with self._lock:
            self.index = await build_index(self.runtime.clock.now(), self.runtime.settings.public_url)
            self._unknown_sites.clear()

    def invalidate(self) -> None:
        """Ask the background task to rebuild now (for callers that cannot await)."""
        self._dirty.set()

    async def site_exists(self, site_id: str) -> bool:
        """Whether ``site_id`` is an active site: the index first, then one cached database lookup."""
        if site_id in self.index.sites:
            return True
        if not has_prefix(site_id, "site"):
            return False
        now = time.monotonic()
        refused_at = self._unknown_sites.get(site_id)
        if refused_at is not None and now - refused_at < UNKNOWN_SITE_SECONDS:
            return False
        if await Site.filter(id=site_id, active=True).exists():
            self.index.sites.add(site_id)
            self._unknown_sites.pop(site_id, None)
            return True
        if len(self._unknown_sites) >= MAX_UNKNOWN_SITES:
            self._unknown_sites.clear()
        self._unknown_sites[site_id] = now
        return False

    def spent(self, campaign_id: str, amount: int) -> None:
        """Lower the remaining budget the index knows, after tracking billed ``amount``."""
        entry = self.index.campaigns.get(campaign_id)
        if entry is not None:
            entry.remaining = max(0, entry.remaining - amount)

    def count(self, site_id: str, day: date, filled: bool) -> None:
        self._fill[(site_id, day, filled)] += 1

    async def flush_counts(self) -> None:
        """Add the counted serve decisions to the per-site daily stats, in one transaction."""
        pending, self._fill = self._fill, Counter()
        totals: dict[tuple[str, date], list[int]] = {}
        for (site_id, day, filled), count in pending.items():
            row = totals.setdefault((site_id, day), [0, 0])
            row[0] += count
            row[1] += count if filled else 0
        if not totals:
            return
        try:
            await add_daily_stats({key: {"requests": row[0], "filled": row[1]} for key, row in totals.items()})
        except Exception:
            self._fill.update(pending)  # kept for the next tick
            raise

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run(), name="serving-index")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass
            self._task = None
        await self.flush_counts()

    async def _run(self) -> None:
        while True:
            try:
                await asyncio.wait_for(self._dirty.wait(), timeout=REBUILD_SECONDS)
            except TimeoutError:
                pass
            self._dirty.clear()
            try:
                await self.rebuild()
                await self.flush_counts()
            except Exception:  # the old index keeps serving; the next tick tries again
                log.exception("serving index rebuild failed")


async def build_index(now: datetime, base_url: str) -> Index:
    """Read everything servable: a handful of queries, whatever the traffic."""
    sites: set[str] = {str(site_id) for site_id in await Site.filter(active=True).values_list("id", flat=True)}
    campaigns = await Campaign.filter(Q(ends_at__isnull=True) | Q(ends_at__gt=now), status=CampaignStatus.APPROVED)
    campaign_ids = [campaign.id for campaign in campaigns]
    creatives: dict[str, list[CreativeEntry]] = {}
    for creative in await Creative.filter(campaign_id__in=campaign_ids, status=CreativeStatus.APPROVED):
        creatives.setdefault(creative.campaign_id, []).append(_creative_entry(creative))  # type: ignore[attr-defined]
    remaining = await ledger.balances("campaign")
    tasks = await Task.filter(Q(ends_at__isnull=True) | Q(ends_at__gt=now), active=True)
    attached: dict[str, list[TaskEntry]] = {}
    units: list[TaskEntry] = []
    approved = set(campaign_ids)
    for task in sorted(tasks, key=lambda task: (task.created_at, task.id)):
        campaign_id = task.campaign_id  # type: ignore[attr-defined]
        try:
            entry = TaskEntry(id=task.id, kind=task.kind, starts_at=task.starts_at, ends_at=task.ends_at,
                              max_per_wallet=task.max_per_wallet, view=public_task(task, base_url))
        except ValueError:
            log.warning("task config invalid, not served task_id=%s", task.id)
            continue
        if task.surface == TaskSurface.STANDALONE and task.kind in UNIT_KINDS:
            if campaign_id is None or campaign_id in approved:
                units.append(entry)
        elif task.surface == TaskSurface.ATTACHED and campaign_id in approved:
            attached.setdefault(campaign_id, []).append(entry)
    index = Index(sites=sites, units=tuple(units), built_at=time.monotonic())
    for campaign in campaigns:
        entries = tuple(creatives.get(campaign.id, ()))
        index.campaigns[campaign.id] = CampaignEntry(
            id=campaign.id, cpm=int(campaign.cpm), cpc=int(campaign.cpc), budget=int(campaign.budget),
            remaining=remaining.get(campaign.id, 0), starts_at=campaign.starts_at, ends_at=campaign.ends_at,
            sizes=frozenset(campaign.sizes or ()), placements=frozenset(campaign.placements or ()),
            site_allow=frozenset(campaign.site_allow or ()), site_deny=frozenset(campaign.site_deny or ()),
            creatives=entries, tasks=tuple(attached.get(campaign.id, ())),
        )
        index.creatives.update((entry.id, entry) for entry in entries)
    return index


def _creative_entry(creative: Creative) -> CreativeEntry:
    return CreativeEntry(id=creative.id, campaign_id=creative.campaign_id,  # type: ignore[attr-defined]
                         banner_url=creative.banner_url, target_url=creative.target_url,
                         description=creative.description, media_type=creative.media_type.value,
                         size=f"{creative.width}x{creative.height}")


def parse_serve_query(args: Any) -> ServeRequest:
    """Validate the query string of ``GET /api/serve``; a 400 names the offending parameter."""
    site_id = args.get("siteId", "")
    if not site_id:
        raise bad_request("missing_field", "siteId: this parameter is required", field="siteId")
    kinds = frozenset(part.strip().upper() for part in args.get("kind", BANNER).split(","))
    if not kinds or not kinds <= set(KINDS):
        raise bad_request("invalid_field", f"kind: a comma-separated list of {', '.join(KINDS)}", field="kind")
    size = args.get("size") or None
    if size is not None and not _SIZE.match(size):
        raise bad_request("invalid_field", "size: expected WIDTHxHEIGHT, such as 300x250", field="size")
    placement = args.get("placement", "")
    if len(placement) > MAX_PLACEMENT_LENGTH:
        raise bad_request("invalid_field", f"placement: at most {MAX_PLACEMENT_LENGTH} characters",
                          field="placement")
    wallet = args.get("wallet") or None
    if wallet is not None:
        try:
            wallet = normalize_wallet(wallet)
        except InvalidWallet as exc:
            raise bad_request("invalid_wallet", f"wallet: {exc}", field="wallet") from None
    attached = args.get("attached", "0")
    if attached not in ("0", "1"):
        raise bad_request("invalid_field", "attached: 1 to include attached tasks, or leave it out",
                          field="attached")
    return ServeRequest(site_id=site_id, kinds=kinds, size=size, placement=placement, wallet=wallet,
                        attached=attached == "1")


async def serve(server: Server, query: ServeRequest) -> dict[str, Any]:
    """Decide what ``query.site_id`` shows now and count the decision; 404 for an unknown site."""
    if not await server.site_exists(query.site_id):
        raise not_found("site")
    runtime = server.runtime
    now = runtime.clock.now()
    choice = pick(candidates(server.index, query, now), runtime.random)
    server.count(query.site_id, now.date(), filled=choice is not None)
    if choice is None:
        return {"kind": "NONE"}
    if choice.unit is not None:
        return {"kind": choice.unit.kind.value, "task": choice.unit.view}
    assert choice.campaign is not None and choice.creative is not None  # noqa: S101 - a banner candidate has both
    return await _banner(server, query, choice.campaign, choice.creative, now)


async def _banner(server: Server, query: ServeRequest, campaign: CampaignEntry, creative: CreativeEntry,
                  now: datetime) -> dict[str, Any]:
    settings = server.runtime.settings
    click_active = campaign.has_budget()
    token = tracking_tokens.issue_token(
        settings.tracking_secret, ad_id=creative.id, campaign_id=campaign.id, site_id=query.site_id,
        placement=query.placement, size=creative.size, wallet=query.wallet, click_active=click_active, now=now,
        nonce=server.runtime.random.getrandbits(64))
    tasks = await attached_tasks(campaign, query.wallet, now) if query.attached else []
    return {
        "kind": BANNER,
        "ad": {
            "id": creative.id,
            "campaignId": campaign.id,
            "bannerUrl": creative.banner_url,
            "targetUrl": creative.target_url,
            "description": creative.description,
            "mediaType": creative.media_type,
            "trackingToken": token,
        },
        "bannerClickActive": click_active,
        "attachedTasks": tasks,
    }


async def attached_tasks(campaign: CampaignEntry, wallet: str | None, now: datetime) -> list[dict[str, Any]]:
    """Up to two live attached tasks of the campaign, without those ``wallet`` has completed as often as allowed."""
    live = [task for task in campaign.tasks if task.live(now)]
    if wallet is not None and live:
        done: Counter[str] = Counter(str(task_id) for task_id in await Completion.filter(
            task_id__in=[task.id for task in live], wallet=wallet).values_list("task_id", flat=True))
        live = [task for task in live if done[task.id] < task.max_per_wallet]
    return [task.view for task in live[:MAX_ATTACHED_TASKS]]


def candidates(index: Index, query: ServeRequest, now: datetime) -> list[Candidate]:
    """Everything ``query`` may be shown now, each with its selection weight."""
    found: list[Candidate] = []
    if BANNER in query.kinds:
        offers: list[tuple[CampaignEntry, list[CreativeEntry]]] = []
        for campaign in index.campaigns.values():
            if not campaign.live(now) or not campaign.runs_on(query.site_id, query.placement):
                continue
            if not (query.attached or campaign.has_budget()):
                continue
            creatives = campaign.creatives_for(query.size)
            if creatives:
                offers.append((campaign, creatives))
        best = max((ecpm(campaign) for campaign, _ in offers), default=0.0)
        for campaign, creatives in offers:
            weight = campaign_weight(campaign, now, best)
            found.extend(Candidate(weight / len(creatives), campaign=campaign, creative=creative)
                         for creative in creatives)
    for unit in index.units:
        if unit.kind.value in query.kinds and unit.live(now):
            found.append(Candidate(1.0, unit=unit))
    return found


def ecpm(campaign: CampaignEntry) -> float:
    """Expected revenue per 1000 impressions: the CPM plus clicks at the assumed click-through rate."""
    return float(campaign.cpm) + float(campaign.cpc) * 1000 * ASSUMED_CTR


def pacing(campaign: CampaignEntry, now: datetime) -> float:
    """How far the campaign is behind (> 1) or ahead (< 1) of spending its budget evenly over its flight."""
    if campaign.ends_at is None or campaign.budget <= 0:
        return 1.0
    flight = (campaign.ends_at - campaign.starts_at).total_seconds()
    elapsed = min(max((now - campaign.starts_at).total_seconds() / flight, 0.0), 1.0) if flight > 0 else 1.0
    spent = min(max(1 - campaign.remaining / campaign.budget, 0.0), 1.0)
    return min(max((elapsed + 0.01) / (spent + 0.01), MIN_PACING), MAX_PACING)


def campaign_weight(campaign: CampaignEntry, now: datetime, best_ecpm: float) -> float:
    """Price share of the best offer (clamped so none starves) times pacing (clamped)."""
    share = ecpm(campaign) / best_ecpm if best_ecpm > 0 else 1.0
    return min(max(share, MIN_PRICE_SHARE), 1.0) * pacing(campaign, now)


def pick(options: list[Candidate], rng: random.Random) -> Candidate | None:
    """A weighted random draw; None when there is nothing to serve."""
    if not options:
        return None
    total = sum(option.weight for option in options)
    point = rng.random() * total
    for option in options:
        point -= option.weight
        if point < 0:
            return option
    return options[-1]


async def add_daily_stats(increments: dict[tuple[str, date], dict[str, int]]) -> None:
    """Add counters to ``SiteDailyStat`` rows, creating them as needed: one upsert per (site, day), safe against
    other processes adding at the same time (the increment happens in the database)."""
    connection = connections.get("default")
    await statements.run(connection, daily_stats_program(increments, statements.dialect_of(connection)))


def daily_stats_program(increments: dict[tuple[str, date], dict[str, int]], dialect: str) -> Program[None]:
    """``add_daily_stats`` as a program of statements (``adnet.statements``), for a write that includes it."""
    columns = ("requests", "filled", "impressions", "billable_impressions", "clicks", "billable_clicks")
    marks = ", ".join(statements.marks(dialect, 2 + len(columns)))
    updates = ", ".join(f"{column} = site_daily_stat.{column} + excluded.{column}" for column in columns)
    sql = (f"INSERT INTO site_daily_stat (site_id, day, {', '.join(columns)}) VALUES ({marks}) "  # noqa: S608
           f"ON CONFLICT (site_id, day) DO UPDATE SET {updates}")
    for (site_id, day), counts in sorted(increments.items()):
        yield Statement(sql, [site_id, day, *(counts.get(column, 0) for column in columns)])


def server(runtime: Runtime) -> Server:
    """This process's serving state (created by ``start``)."""
    return runtime.extras["serving"]


def invalidate(runtime: Runtime | None = None) -> None:
    """Call after changing campaigns, creatives, tasks or sites: this process's index is rebuilt right away in
    the background. ``runtime`` defaults to the current app's; outside an app (a CLI command) there is no index
    here, and serving processes pick the change up within ``REBUILD_SECONDS``."""
    current = _current(runtime)
    if current is not None:
        current.invalidate()


async def refresh(runtime: Runtime | None = None) -> None:
    """Rebuild this process's index now and wait for it (same ``runtime`` rule as ``invalidate``)."""
    current = _current(runtime)
    if current is not None:
        await current.rebuild()


def _current(runtime: Runtime | None) -> Server | None:
    if runtime is None:
        if not has_app_context():
            return None
        runtime = current_app.extensions["adnet"]
    return runtime.extras.get("serving")


async def start(runtime: Runtime) -> None:
    """App start-up: build the index and start the periodic rebuild (idempotent)."""
    if "serving" in runtime.extras:
        return
    current = Server(runtime)
    await current.rebuild()
    current.start()
    runtime.extras["serving"] = current


async def stop(runtime: Runtime) -> None:
    """App shutdown: stop the rebuild task and save the fill counters."""
    current: Server | None = runtime.extras.pop("serving", None)
    if current is not None:
        await current.stop()
