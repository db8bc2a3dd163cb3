"""Ad serving: which banner or unit a site gets, decided from memory so ``GET /api/serve`` touches no database.

The decision is made from the index (``adnet.delivery.index``) by a weighted draw (``adnet.delivery.selection``).
Tracking lowers a campaign's remaining budget in the index as soon as it bills, between the index's reads of the
budgets.

A banner served to a page of another domain than the site's (``adnet.delivery.sites``) is still served, with a token
that says so: its events are recorded as ``domain_mismatch``, never billed.

A request whose page's consent signals do not let adnet keep a viewer id (``adnet.delivery.consent``) is served as
one without a viewer id: its viewer is neither read in the frequency counts nor signed into the token.

A request with a viewer id reads what that viewer was billed of the capped campaigns that may fill the slot, in one
call to the frequency counts (``adnet.delivery.frequency``: one Redis round trip with ``ADNET_REDIS_URL``, this
process's memory without); tracking adds what each batch billed.

Sites are registered by the publisher API at any time: a site id missing from the index costs one database lookup,
whose answer is cached (a known site until it changes or the next rebuild, an unknown one for
``UNKNOWN_SITE_SECONDS``), so a new site is served at once and a flood of made-up ids cannot reach the database
more than once each. That lookup reads the site's floors; its house ads come with the index's next refresh.

Serve and empty decisions are counted per site and UTC day in memory and added to ``SiteDailyStat`` by a periodic
job and at shutdown (fill rate = filled / requests). A slot that shows a house ad counts as not filled: the fill
rate is what paid campaigns and units fill. Each banner request is also counted per site, UTC hour, size, country
and device kind (``adnet.delivery.requests``: one dict increment), added to ``request_hour`` by the same job, for
forecasts; a bid slot counts as one request of its first (preferred) size.

A campaign with wallet audiences (``adnet.audiences``) is matched against what this process holds in memory of the
wallet the query's audience pass proves (a signed pass, checked without a database); a ``wallet`` parameter plays no
part in it.

Leaving out attached tasks a wallet already completed is the one case that reads the database: only when the
request names a wallet, asks for attached tasks, and the chosen campaign has some; then it is one lookup on the
completion table's (task, wallet) unique index. Requests without a wallet — the common case — do no query.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import date, datetime

from adnet.accounts.models import Site
from adnet.audiences.membership import CHANGED_PREFIX, MembershipStore
from adnet.audiences.passes import wallet_of
from adnet.campaigns.eligibility import refusal
from adnet.campaigns.models import Rotation
from adnet.core.clock import Clock
from adnet.core.errors import NotFound
from adnet.core.ids import has_prefix
from adnet.delivery import tokens
from adnet.delivery.clients import Client
from adnet.delivery.commands import BANNER, ServeQuery
from adnet.delivery.consent import limitation
from adnet.delivery.controls import narrow
from adnet.delivery.counters import add_daily_stats
from adnet.delivery.explainer import Sampler, sample_of
from adnet.delivery.frequency import Billed, FrequencyCounts, FrequencyMemory
from adnet.delivery.index import (
    BUDGET_SECONDS,
    REBUILD_SECONDS,
    SITE_FIELDS,
    CampaignEntry,
    CreativeEntry,
    Index,
    build_index,
    read_budgets,
    refresh_index,
    site_entry,
)
from adnet.delivery.requests import RequestCounts, hour_of
from adnet.delivery.selection import Candidate, candidates, ecpm, house_ad_for, pick
from adnet.delivery.sites import HouseAdEntry, SiteEntry, on_site
from adnet.delivery.targeting import Locator, Viewer
from adnet.tasks.config import TaskView
from adnet.tasks.models import Completion

log = logging.getLogger(__name__)

UNKNOWN_SITE_SECONDS = 5.0
HOUSE = "HOUSE"
MAX_UNKNOWN_SITES = 10_000
MAX_ATTACHED_TASKS = 2


class Server:
    """The serving state of one process: the index, the site cache and the fill counters. The jobs scheduler runs
    ``update`` periodically and as soon as ``stale`` is set (a change was announced), and adds the counters to the
    database (``flush_counts``)."""

    def __init__(self, *, clock: Clock, rng: random.Random, tracking_secret: str,
                 locator: Locator | None = None, frequency: FrequencyCounts | None = None,
                 sampler: Sampler | None = None, iab_vendor_id: int | None = None) -> None:
        self.clock = clock
        self.iab_vendor_id = iab_vendor_id
        self.random = rng
        self.tracking_secret = tracking_secret
        self.locator = locator or Locator()
        self.frequency = frequency or FrequencyMemory()
        self.sampler = sampler or Sampler()
        self.index = Index()
        self.audiences = MembershipStore()
        self.stale = asyncio.Event()
        self._changed: set[str] = set()
        self._rebuild_due = False
        self._budgets_at = 0.0
        self._unknown_sites: dict[str, float] = {}
        self._fill: Counter[tuple[str, date, bool]] = Counter()
        self.requests = RequestCounts()
        self._lock = asyncio.Lock()

    async def rebuild(self) -> None:
        """Replace the index with a fresh one read whole from the database."""
        async with self._lock:
            self._rebuild_due = False
            self._changed.clear()  # what is announced from now on is applied after this read, again
            self.index = await build_index(self.clock.now())
            await self.audiences.load(self.clock.now())
            self._budgets_at = self.index.built_at
            self._unknown_sites.clear()

    async def update(self) -> None:
        """The index's job: apply the announced changes; read the budgets every ``BUDGET_SECONDS``; rebuild the
        whole index every ``REBUILD_SECONDS`` or when told that anything may have changed."""
        if self._rebuild_due or time.monotonic() - self.index.built_at >= REBUILD_SECONDS:
            await self.rebuild()
            return
        async with self._lock:
            changed, self._changed = self._changed, set()
            wallets = {item.removeprefix(CHANGED_PREFIX) for item in changed if item.startswith(CHANGED_PREFIX)}
            if wallets:
                try:
                    await self.audiences.load(self.clock.now(), wallets)
                except Exception:
                    self._changed |= changed
                    raise
                changed = {item for item in changed if not item.startswith(CHANGED_PREFIX)}
            if changed:
                try:
                    await refresh_index(self.index, changed, self.clock.now())
                except Exception:
                    self._changed |= changed  # tried again at the next turn
                    raise
                for item in changed:
                    self._unknown_sites.pop(item, None)
            if time.monotonic() - self._budgets_at >= BUDGET_SECONDS:
                self.index.update_budgets(*await read_budgets(self.clock.now()))
                self._budgets_at = time.monotonic()

    def invalidate(self, changed: frozenset[str] | None) -> None:
        """Have the index brought up to date now for the ids ``changed`` names, or rebuilt whole for None (what
        ``adnet.core.changes`` announcements call)."""
        if changed is None:
            self._rebuild_due = True
        else:
            self._changed |= changed
            # A wallet's membership changed (an opt-out, a new evaluation): not known until reloaded, which is no
            # match, so an opt-out is honoured from this moment.
            self.audiences.forget(item.removeprefix(CHANGED_PREFIX) for item in changed
                                  if item.startswith(CHANGED_PREFIX))
        self.stale.set()

    async def site(self, site_id: str) -> SiteEntry:
        """The active site ``site_id``: the index first, then one cached database lookup; NotFound otherwise."""
        entry = self.index.sites.get(site_id)
        if entry is not None:
            return entry
        if not has_prefix(site_id, "site"):
            raise NotFound.of("site")
        now = time.monotonic()
        refused_at = self._unknown_sites.get(site_id)
        if refused_at is not None and now - refused_at < UNKNOWN_SITE_SECONDS:
            raise NotFound.of("site")
        found = await Site.filter(id=site_id, active=True).first().values_list(*SITE_FIELDS)
        if found is not None:
            # An index refresh that ran during the lookup holds the fuller entry (with the house ads): it stays.
            entry = self.index.sites.setdefault(site_id, site_entry(found))
            self._unknown_sites.pop(site_id, None)
            return entry
        if len(self._unknown_sites) >= MAX_UNKNOWN_SITES:
            self._unknown_sites.clear()
        self._unknown_sites[site_id] = now
        raise NotFound.of("site")

    def spent(self, campaign_id: str, amount: int) -> None:
        """Lower the remaining budget the index knows and raise today's spend, after tracking billed ``amount``."""
        entry = self.index.campaigns.get(campaign_id)
        if entry is not None:
            entry.remaining = max(0, entry.remaining - amount)
            entry.spent_today += amount

    def billed(self, creative_id: str, impression: bool) -> None:
        """Count a billed impression or click of a creative whose campaign rotates by click-through rate."""
        figures = self.index.creative_stats
        creative = self.index.creatives.get(creative_id)
        campaign = self.index.campaigns.get(creative.campaign_id) if creative is not None else None
        if campaign is not None and campaign.rotation == Rotation.BEST_CTR:
            figures.setdefault(creative_id, [0, 0])[0 if impression else 1] += 1

    async def viewed(self, impressions: list[tuple[str, str, datetime]]) -> None:
        """Count the impressions (campaign id, viewer, time) a committed tracking batch billed to viewers, those of
        campaigns with a frequency cap, in one call to the frequency counts."""
        billed = []
        for campaign_id, viewer, at in impressions:
            entry = self.index.campaigns.get(campaign_id)
            if entry is not None and entry.frequency_cap is not None:
                billed.append(Billed(campaign_id, viewer, entry.frequency_seconds, at))
        if billed:
            await self.frequency.add(billed)

    async def frequency_counts(self, query: ServeQuery, site: SiteEntry, now: datetime) -> dict[str, int]:
        """What the query's viewer was billed in the current period of each capped campaign that may serve the
        slot on ``site``: one read of the frequency counts, none without a viewer id or such a campaign."""
        if query.viewer is None:
            return {}
        periods = {campaign.id: campaign.frequency_seconds for campaign in self.index.campaigns.values()
                   if campaign.frequency_cap is not None and campaign.live(now) and campaign.fits(query.placement)
                   and refusal(site, campaign, paid=False) is None}
        return await self.frequency.counts(query.viewer, periods, now) if periods else {}

    def count(self, site_id: str, day: date, filled: bool) -> None:
        self._fill[(site_id, day, filled)] += 1

    async def flush_counts(self) -> None:
        """Add the counted serve decisions to the per-site daily stats, in one transaction, the counted requests
        to their hourly aggregates, and write the sampled decisions (``adnet.delivery.explainer.Sampler``)."""
        await self.requests.flush()
        await self.sampler.flush()
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


@dataclass(frozen=True)
class Banner:
    """A banner to show: the creative, the token its impression and click are reported with, whether a click is
    paid, and the campaign's attached tasks the wallet may still complete."""

    creative: CreativeEntry
    tracking_token: str
    click_active: bool
    attached_tasks: list[TaskView]


@dataclass(frozen=True)
class Decision:
    """What a slot shows: a banner (``kind`` BANNER), a standalone unit (POLL, FEEDBACK, SURVEY), the site's own
    house ad (HOUSE), or nothing (NONE)."""

    kind: str
    banner: Banner | None = None
    unit: TaskView | None = None
    house_ad: HouseAdEntry | None = None


NOTHING = Decision(kind="NONE")


async def serve(server: Server, query: ServeQuery, client: Client) -> Decision:
    """Decide what ``query.site_id`` shows ``client`` now and count the decision; NotFound for an unknown site."""
    site, query, now, viewer, choice = await _choose(server, query, client)
    server.count(query.site_id, now.date(), filled=choice is not None)
    if BANNER in query.kinds:
        _count_request(server, query.site_id, now, query.size or "", viewer)
    decision = await _decide(server, query, client, site, now, viewer, choice)
    if server.sampler.due():
        outcome = decision.banner.creative.campaign_id if decision.banner is not None else decision.kind
        server.sampler.keep(sample_of(server.index, query, now, viewer, site, outcome, client))
    return decision


def _count_request(server: Server, site_id: str, now: datetime, size: str, viewer: Viewer) -> None:
    """Count a banner request for forecasts (``adnet.delivery.requests``), under the viewer's country and device."""
    location = viewer.location
    server.requests.count((site_id, hour_of(now), size, location.country if location else "", viewer.device))


async def _decide(server: Server, query: ServeQuery, client: Client, site: SiteEntry, now: datetime, viewer: Viewer,
                  choice: Candidate | None) -> Decision:
    """What the slot shows for the candidate drawn for ``viewer`` (the site's house ad, or nothing, for none)."""
    if choice is None:
        house_ad = house_ad_for(site, query, server.random)
        return NOTHING if house_ad is None else Decision(kind=HOUSE, house_ad=house_ad)
    if choice.unit is not None:
        return Decision(kind=choice.unit.kind.value, unit=choice.unit.view)
    assert choice.campaign is not None and choice.creative is not None  # noqa: S101 - a banner candidate has both
    off_site = not on_site(site, origin=client.origin, referer=client.referer)
    group = choice.campaign.targeting.audience.group_of(viewer.membership, viewer.injected_wallet, now)
    return Decision(kind=BANNER, banner=await _banner(server, query, client, site, off_site, choice.campaign,
                                                      choice.creative, now, group))


@dataclass(frozen=True)
class Preview:
    """What a slot would show now, as the portal previews it: a banner's creative (with the attached tasks it would
    show), a standalone unit, the site's own house ad (HOUSE), or nothing (``kind`` NONE)."""

    kind: str
    creative: CreativeEntry | None = None
    tasks: list[TaskView] = field(default_factory=list)
    unit: TaskView | None = None
    house_ad: HouseAdEntry | None = None


async def preview(server: Server, query: ServeQuery, client: Client) -> Preview:
    """What ``serve`` would decide for ``query`` and ``client`` now, by the same choice, without counting it, issuing
    a tracking token or reading completions (the portal's unit builder; nothing it shows can be billed)."""
    site, query, now, _, choice = await _choose(server, query, client)
    if choice is None:
        house_ad = house_ad_for(site, query, server.random)
        return Preview(kind="NONE") if house_ad is None else Preview(kind=HOUSE, house_ad=house_ad)
    if choice.unit is not None:
        return Preview(kind=choice.unit.kind.value, unit=choice.unit.view)
    assert choice.campaign is not None and choice.creative is not None  # noqa: S101 - a banner candidate has both
    tasks = await attached_tasks(choice.campaign, None, now, site) if query.attached else []
    return Preview(kind=BANNER, creative=choice.creative, tasks=tasks)


@dataclass(frozen=True)
class Bid:
    """A banner a header-bidding auction may show (``adnet.delivery.bidding``): the banner as ``serve`` would
    answer it, and the eCPM its campaign offers (smallest units of G$ per 1000 impressions, gross)."""

    banner: Banner
    ecpm: float


async def bid(server: Server, query: ServeQuery, client: Client, *, sizes: tuple[str, ...],
              floor: float = 0.0) -> Bid | None:
    """What ``serve`` would answer a banner slot of any of ``sizes`` on ``query.site_id`` for ``client`` now, by the
    same rules and draw, among the campaigns whose eCPM reaches ``floor`` besides the site's own floors (an auction's
    floor, gross, in smallest units); None when none does. Counted as one serve decision and one request of its
    first size; never a house ad, which no auction pays for; NotFound for an unknown site."""
    site, query, now, viewer, choice = await _choose(server, query, client, sizes=sizes, floor=floor)
    server.count(query.site_id, now.date(), filled=choice is not None and choice.campaign is not None)
    _count_request(server, query.site_id, now, sizes[0], viewer)
    if choice is None or choice.campaign is None or choice.creative is None:
        return None
    off_site = not on_site(site, origin=client.origin, referer=client.referer)
    group = choice.campaign.targeting.audience.group_of(viewer.membership, viewer.injected_wallet, now)
    banner = await _banner(server, query, client, site, off_site, choice.campaign, choice.creative, now, group)
    return Bid(banner=banner, ecpm=ecpm(choice.campaign))


async def _choose(server: Server, query: ServeQuery, client: Client, *, sizes: tuple[str, ...] | None = None,
                  floor: float = 0.0) -> tuple[SiteEntry, ServeQuery, datetime, Viewer, Candidate | None]:
    """The site, the query narrowed by its controls, the time, the viewer, and the candidate drawn for ``client``;
    NotFound for an unknown or inactive site. With ``sizes``, the candidates of each size in one draw, of those
    whose campaign's eCPM reaches ``floor``."""
    if limitation(query, server.iab_vendor_id) is not None and query.viewer is not None:
        query = query.model_copy(update={"viewer": None})  # consent-limited: no frequency state for this viewer
    site = await server.site(query.site_id)
    query = narrow(site.controls, query)
    now = server.clock.now()
    proven = wallet_of(query.audience, secrets=(server.tracking_secret,), now=now)
    viewer = Viewer(client, query.keywords, server.locator, seen=await server.frequency_counts(query, site, now),
                    membership=server.audiences.get(proven), injected_wallet=query.injected_wallet)
    if sizes is None:
        found = candidates(server.index, query, now, viewer, site)
    else:
        found = [candidate for size in sizes
                 for candidate in candidates(server.index, query.model_copy(update={"size": size}), now, viewer, site)
                 if candidate.campaign is not None and ecpm(candidate.campaign) >= floor]
    return site, query, now, viewer, pick(found, server.random)


async def _banner(server: Server, query: ServeQuery, client: Client, site: SiteEntry, off_site: bool,
                  campaign: CampaignEntry, creative: CreativeEntry, now: datetime, audience_group: int) -> Banner:
    click_active = campaign.has_budget()
    token = tokens.issue_token(
        server.tracking_secret, ad_id=creative.id, campaign_id=campaign.id, site_id=query.site_id,
        placement=query.placement, size=creative.size, wallet=query.wallet, click_active=click_active,
        off_site=off_site, client=client.binding, now=now, nonce=server.random.getrandbits(64), viewer=query.viewer,
        audience_group=audience_group)
    tasks = await attached_tasks(campaign, query.wallet, now, site) if query.attached else []
    return Banner(creative=creative, tracking_token=token, click_active=click_active, attached_tasks=tasks)


async def attached_tasks(campaign: CampaignEntry, wallet: str | None, now: datetime,
                         site: SiteEntry) -> list[TaskView]:
    """Up to two live attached tasks of the campaign that ``site`` may offer (``refusal``: a verified site that takes
    their kind), without those ``wallet`` has completed as often as allowed."""
    live = [task for task in campaign.tasks if task.live(now) and refusal(
        site, campaign, task.kind.value, attached=True, paid=True) is None]
    if wallet is not None and live:
        done: Counter[str] = Counter(str(task_id) for task_id in await Completion.filter(
            task_id__in=[task.id for task in live], wallet=wallet).values_list("task_id", flat=True))
        live = [task for task in live if done[task.id] < task.max_per_wallet]
    return [task.view for task in live[:MAX_ATTACHED_TASKS]]
