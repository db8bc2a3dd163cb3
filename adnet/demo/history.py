"""A month of the demo network's life, so a newcomer who signs in as the demo publisher, advertiser or operator
sees charts, breakdowns and traffic quality at once.

Nothing here writes a counter or a ledger posting of its own: the history is traffic, played through the code that
serves and bills real traffic, with a clock moved over the last ``HISTORY_DAYS`` days. Visitors ask
``adnet.delivery.serving.serve`` for each slot of a demo page and report what they saw through the tracker
(``adnet.delivery.tracking.Tracker``: its token, viewability and site checks, and the batch that deduplicates,
caps and bills in one transaction); some complete the banners' attached tasks (``adnet.tasks.completion``) and
answer the units (``adnet.interactions.submission``); the publisher withdraws part of its earnings
(``adnet.money.withdrawals``) and the advertiser tops up its balance by a deposit on the chain
(``adnet.money.deposits``). So every figure the reports show agrees with the ledger, and ``adnet audit`` passes.

The traffic: two sites of the demo publisher (the demo site, and ``NEWS_DOMAIN``, a news site whose pages are
simulated only), their placements, desktops, phones and tablets, and viewers in several countries, placed by the
country header a trusted proxy writes (``ADNET_COUNTRY_HEADER``; the demo has no GeoIP database), growing over
the month with quieter weekends and nights. Among them, traffic that is recorded but not billed, each for the
reason the tracking rules name: crawlers (``bot_user_agent``), a copy of the demo site on another domain
(``domain_mismatch``), a script that reports impressions as soon as it is served (``view_too_short``), tokens
replayed under other fingerprints (``token_reused``), clicks without a viewed impression
(``click_without_impression``), and an office network past the billing caps (``client_rate_exceeded``).

The history is drawn from a seeded random source, so every load draws the same traffic (ids and signatures
differ). Time runs in steps: each step's visitors are served at one instant, report their impressions a few
seconds later and their clicks, task steps and answers after that, so each step writes a few tracking batches.

It is loaded once per database: the news site is created first, and its unique key (publisher, domain) is the
claim, so a second load, or a concurrent one, finds it and loads nothing. A load that stopped half-way (the
process killed) is not completed by the next one.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
from collections.abc import Awaitable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, time, timedelta
from functools import cache
from typing import Any
from urllib.parse import urlsplit

from eth_account import Account
from eth_account.messages import encode_defunct
from eth_account.signers.local import LocalAccount
from tortoise.exceptions import IntegrityError
from tortoise.transactions import in_transaction

from adnet.accounts.models import Advertiser, ProofMethod, Publisher, Site
from adnet.accounts.ownership import mark_verified
from adnet.campaigns.models import Campaign
from adnet.chain.client import ChainClient
from adnet.chain.deploy import can_mint, mint
from adnet.config import Settings
from adnet.core.amounts import UNIT, Token
from adnet.core.clock import FrozenClock
from adnet.core.errors import DomainError
from adnet.core.ids import new_id
from adnet.db import config as database
from adnet.db.outage import DatabaseLink
from adnet.delivery import serving
from adnet.delivery.clients import Client
from adnet.delivery.commands import ServeQuery, TrackEvent
from adnet.delivery.events import TrackResult
from adnet.delivery.frequency import FrequencyMemory
from adnet.delivery.models import EventType
from adnet.delivery.serving import Decision, Server
from adnet.delivery.targeting import Locator
from adnet.delivery.tracking import Tracker
from adnet.interactions.commands import Submission
from adnet.interactions.submission import submit
from adnet.money import deposits, ledger, withdrawals
from adnet.money.holders import Holder
from adnet.tasks.commands import CompleteTask, MessageRequest, VisitStart
from adnet.tasks.completion import complete_task
from adnet.tasks.config import TaskView
from adnet.tasks.messages import issue_message
from adnet.tasks.models import Task, TaskKind
from adnet.tasks.visits import start_visit

log = logging.getLogger(__name__)

HISTORY_DAYS = 30
NEWS_DOMAIN = "demo-news.example"
SEED = 20_26
# Page views of the first day and of the last; each day's are spread over its steps by STEP_SHARES.
FIRST_DAY_VIEWS = 35
LAST_DAY_VIEWS = 80
WEEKEND = 0.75
# Each day is played in steps of six hours (from midnight, UTC); each step's share of the day's page views.
STEP_HOURS = 6
STEP_SHARES = (0.1, 0.28, 0.34, 0.28)
# When, within a step, visitors report what they saw: impressions once in view, then clicks, task steps and answers.
REPORT_AFTER = timedelta(seconds=4)
ACT_AFTER = timedelta(seconds=25)
COMPLETE_AFTER = timedelta(seconds=60)
# How visitors behave (probabilities per banner, per unit, per page view).
NEVER_IN_VIEW = 0.12
HURRIED_SCRIPT = 0.02
REPLAYED = 0.01
CLICK_FRAUD = 0.004
TASK_TAKEN = 0.2
UNIT_ANSWERED = 0.04
BOT_VIEW = 0.05
COPYCAT_VIEW = 0.02
NEWS_VIEW = 0.4
# What the advertiser deposits at the end, and the share of the publisher's balance it withdraws three days ago.
TOP_UP = 100 * UNIT
WITHDRAWN_SHARE = 0.5
WITHDRAWAL_DAYS_AGO = 3
# Click-through rates of the demo campaigns, in the order of ``adnet.demo.CAMPAIGNS``.
CLICK_RATES = (0.025, 0.012, 0.03)

COUNTRIES = {"NG": 18, "US": 14, "KE": 9, "DE": 9, "BR": 9, "IN": 9, "GB": 7, "PH": 6, "AR": 5, "FR": 5, "ZA": 5,
             "GH": 4}
# (device, User-Agent, share): the demo campaigns' device rules leave tablets and Chrome OS fewer campaigns.
BROWSERS = (
    ("desktop", "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
                "Chrome/131.0.0.0 Safari/537.36", 26),
    ("desktop", "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) "
                "Version/18.1 Safari/605.1.15", 9),
    ("desktop", "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0", 6),
    ("desktop", "Mozilla/5.0 (X11; CrOS x86_64 14541.0.0) AppleWebKit/537.36 (KHTML, like Gecko) "
                "Chrome/131.0.0.0 Safari/537.36", 3),
    ("mobile", "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) "
               "Chrome/131.0.0.0 Mobile Safari/537.36", 30),
    ("mobile", "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
               "Version/18.1 Mobile/15E148 Safari/604.1", 18),
    ("tablet", "Mozilla/5.0 (iPad; CPU OS 17_7 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
               "Version/17.6 Mobile/15E148 Safari/604.1", 8),
)
CRAWLERS = (
    "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
    "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)",
    "python-requests/2.32.3",
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/131.0.0.0 Safari/537.36",
)
VISITORS = 700
WITH_WALLET = 0.3
# A company's office: colleagues behind one network, on the demo site in working hours, some past the billing caps.
OFFICE_VISITORS = 14
OFFICE_COUNTRY = "DE"
OFFICE_VIEWS = 0.2
COPYCAT_ORIGIN = "https://copycat.example"
POLL_VOTES = {"celo": 45, "ethereum": 30, "rootstock": 25}
FEEDBACK_TEXTS = ("Clear and useful.", "More tutorials please!", "Good news coverage.", "")
SURVEY_WALLETS = {"minipay": 45, "metamask": 35, "valora": 20}
SURVEY_WISHES = ("Learning about new chains", "Trying new dapps", "Donating to climate projects", "")


@dataclass(frozen=True)
class Slot:
    """A placeholder of a demo page, as its ``data-adnet-slot`` asks: kinds, size, placement, attached tasks."""

    placement: str
    kinds: str
    size: str | None = None
    attached: bool = False
    devices: frozenset[str] = frozenset({"desktop", "mobile", "tablet"})


@dataclass(frozen=True)
class Page:
    """A page of a demo site: where it is, and its slots."""

    site_id: str
    url: str
    slots: tuple[Slot, ...]

    @property
    def origin(self) -> str:
        parts = urlsplit(self.url)
        return f"{parts.scheme}://{parts.netloc}"


WIDE = frozenset({"desktop", "tablet"})
# The slots of ``templates/demo.html``, and those of the news site's articles.
DEMO_SLOTS = (
    Slot("header", "BANNER", "728x90", devices=WIDE), Slot("sidebar", "BANNER", "300x250", attached=True),
    Slot("footer", "BANNER", "320x50"), Slot("poll", "POLL"), Slot("feedback", "FEEDBACK"), Slot("survey", "SURVEY"),
    Slot("mixed", "BANNER,POLL", "300x250"),
)
NEWS_SLOTS = (
    Slot("article-top", "BANNER", "728x90", devices=WIDE), Slot("article-side", "BANNER", "300x250", attached=True),
    Slot("mobile-footer", "BANNER", "320x50", devices=frozenset({"mobile"})),
    # A size no demo campaign has: it stays empty, as slots a network cannot fill do, and the fill rate says so.
    Slot("skyscraper", "BANNER", "160x600", devices=frozenset({"desktop"})),
)


@dataclass(frozen=True)
class Visitor:
    """A browser that comes back: its address, User-Agent, country and fingerprint, and its wallet's key if it
    has one."""

    ip: str
    user_agent: str
    device: str
    country: str
    fingerprint: str
    wallet_key: bytes | None = None

    @property
    def account(self) -> LocalAccount | None:
        return None if self.wallet_key is None else _account(self.wallet_key)

    @property
    def wallet(self) -> str | None:
        account = self.account
        return None if account is None else account.address.lower()

    def client(self, page: Page) -> Client:
        """The visitor's requests from ``page``, as a trusted proxy that writes the country header passes them."""
        return Client(ip=self.ip, user_agent=self.user_agent, origin=page.origin, referer=page.url,
                      country=self.country)


@cache
def _account(key: bytes) -> LocalAccount:
    return Account.from_key(key)


@dataclass
class Shown:
    """A banner served to a visitor on a page, and what became of its impression."""

    visitor: Visitor
    page: Page
    slot: Slot
    decision: Decision
    result: TrackResult | None = None


@dataclass
class Step:
    """What one step's visitors saw and will do."""

    banners: list[Shown] = field(default_factory=list)
    units: list[tuple[Visitor, Page, TaskView]] = field(default_factory=list)


@dataclass
class DemoWorld:
    """The demo's accounts and pages the history plays on."""

    publisher_wallet: str
    site_id: str
    news_site_id: str
    advertiser: Advertiser
    demo_page: Page
    news_pages: tuple[Page, ...]
    copycat_page: Page
    campaign_click_rates: dict[str, float]


async def load_history(settings: Settings, chain: ChainClient, advertiser_wallet: str, publisher_wallet: str, *,
                       now: datetime, minter: LocalAccount | None, advertiser_key: LocalAccount) -> bool:
    """Play the demo's last ``HISTORY_DAYS`` days up to ``now``, unless they were played on this database before
    (False then). The demo (``adnet.demo.create_demo``) must exist."""
    start = _midnight(now) - timedelta(days=HISTORY_DAYS - 1)
    world = await _claim(settings, advertiser_wallet, publisher_wallet, start)
    if world is None:
        log.info("demo history played before publisher=%s", publisher_wallet)
        return False
    await _live_since(world.advertiser, start - timedelta(days=1))
    history = History(settings, chain, world, start=start, end=now)
    with _quiet_domain():
        await history.play()
        await _top_up(chain, world.advertiser, advertiser_key, minter, now)
    log.info("demo history loaded days=%d views=%d events=%d", HISTORY_DAYS, history.views, history.events)
    return True


@contextlib.contextmanager
def _quiet_domain() -> Iterator[None]:
    """While the month plays, adnet's own records below WARNING are not shown: the domain logs each completion,
    claim and answer, hundreds of lines that would bury ``make run``'s start in a newcomer's terminal."""
    domain = logging.getLogger("adnet")
    level = domain.level
    domain.setLevel(logging.WARNING)
    try:
        yield
    finally:
        domain.setLevel(level)


async def _claim(settings: Settings, advertiser_wallet: str, publisher_wallet: str,
                 start: datetime) -> DemoWorld | None:
    """The news site, created now with its domain verified (the claim on the history), and the world around it;
    None when it exists already (or the demo has no site)."""
    publisher = await Publisher.get(wallet=publisher_wallet)
    site = await Site.filter(publisher=publisher).order_by("created_at").first()
    if site is None:
        return None
    try:
        async with in_transaction():  # listed after the demo site, also where that was loaded after ``start``
            news = await Site.create(id=new_id("site"), publisher=publisher, domain=NEWS_DOMAIN, name="Demo news",
                                     created_at=max(start, site.created_at + timedelta(seconds=1)))
    except IntegrityError:
        return None
    try:
        await mark_verified(news, ProofMethod.DEMO, start)
    except DomainError as refused:
        log.warning("demo news site not verified site=%s reason=%s", news.id, refused.message)
    advertiser = await Advertiser.get(wallet=advertiser_wallet)
    campaigns = await Campaign.filter(advertiser=advertiser).order_by("created_at", "name").values_list("id",
                                                                                                       flat=True)
    public = settings.public_url
    return DemoWorld(
        publisher_wallet=publisher_wallet, site_id=site.id, news_site_id=news.id, advertiser=advertiser,
        demo_page=Page(site.id, f"{public}/demo", DEMO_SLOTS),
        news_pages=tuple(Page(news.id, f"https://{NEWS_DOMAIN}/{path}", NEWS_SLOTS) for path in (
            "markets/celo-climate-fund", "guides/first-wallet", "defi/sovryn-swap-week", "opinion/ubi-in-practice")),
        copycat_page=Page(site.id, f"{COPYCAT_ORIGIN}/demo", DEMO_SLOTS),
        campaign_click_rates={str(campaign_id): rate for campaign_id, rate in zip(campaigns, CLICK_RATES,
                                                                                   strict=False)},
    )


async def _live_since(advertiser: Advertiser, since: datetime) -> None:
    """Let the demo's campaigns and tasks run from ``since`` (a demo loaded before there was a history started
    them the day before it was loaded)."""
    await Campaign.filter(advertiser=advertiser, starts_at__gt=since).update(starts_at=since)
    await Task.filter(advertiser=advertiser, starts_at__gt=since).update(starts_at=since)


class History:
    """The month played step by step on a serving state and a tracker of its own, on a clock it moves."""

    def __init__(self, settings: Settings, chain: ChainClient, world: DemoWorld, *, start: datetime,
                 end: datetime) -> None:
        self.settings = settings
        self.chain = chain
        self.world = world
        self.start = start
        self.end = end
        self.random = random.Random(SEED)  # noqa: S311 - demo traffic, not a secret
        self.clock = FrozenClock(start)
        self.server = Server(clock=self.clock, rng=random.Random(SEED + 1),  # noqa: S311
                             tracking_secret=settings.tracking_secret, locator=Locator(),
                             frequency=FrequencyMemory())
        self.tracker = Tracker(clock=self.clock, settings=settings, server=self.server,
                               database=DatabaseLink(database.ping))
        self.visitors = _visitors(self.random)
        self.office = _office(self.random)
        self.crawlers = [Visitor(ip=_address(self.random), user_agent=agent, device="desktop", country="US",
                                 fingerprint=_fingerprint(self.random)) for agent in CRAWLERS]
        self.answered: set[tuple[str, str]] = set()
        self.completed: set[tuple[str, str]] = set()
        self.withdrawn = False
        self.views = 0
        self.events = 0

    async def play(self) -> None:
        """Every step from the first day's midnight to ``end``, then the serve counts added to the daily stats."""
        self.tracker.start()
        try:
            for day in range(HISTORY_DAYS):
                midnight = self.start + timedelta(days=day)
                await self._at(midnight)
                await self.server.rebuild()  # as the service's index job does: today's spend starts at zero
                for index, share in enumerate(STEP_SHARES):
                    moment = midnight + timedelta(hours=index * STEP_HOURS,
                                                  minutes=self.random.randrange(STEP_HOURS * 60 - 2))
                    if moment + COMPLETE_AFTER > self.end:
                        break
                    await self._withdraw_when_due(moment)
                    await self._step(moment, round(self._day_views(day) * share * self.random.uniform(0.8, 1.2)))
        finally:
            await self.tracker.stop()
        await self.server.flush_counts()

    def _day_views(self, day: int) -> float:
        views = FIRST_DAY_VIEWS + (LAST_DAY_VIEWS - FIRST_DAY_VIEWS) * day / (HISTORY_DAYS - 1)
        return views * (WEEKEND if (self.start + timedelta(days=day)).weekday() >= 5 else 1.0)

    async def _step(self, moment: datetime, views: int) -> None:
        await self._at(moment)
        step = Step()
        hurried: list[Awaitable[TrackResult]] = []
        for _ in range(views):
            visitor, page = self._visit(moment)
            await self._serve(step, visitor, page)
        self.views += views
        for shown in step.banners:
            if shown.visitor.user_agent in CRAWLERS or self.random.random() < HURRIED_SCRIPT:
                hurried.append(self._report(shown, EventType.IMPRESSION))
        await self._gather(hurried)

        await self._at(moment + REPORT_AFTER)
        viewed = [shown for shown in step.banners if shown.result is None
                  and self.random.random() >= NEVER_IN_VIEW]
        replays = [shown for shown in viewed if self.random.random() < REPLAYED]
        await self._gather([*(self._report(shown, EventType.IMPRESSION) for shown in viewed),
                            *(self._report(shown, EventType.IMPRESSION, fingerprint=_fingerprint(self.random))
                              for shown in replays)])

        await self._at(moment + ACT_AFTER)
        billed = [shown for shown in viewed if shown.result is not None and shown.result.billable]
        clicks = [shown for shown in billed
                  if self.random.random() < self.world.campaign_click_rates.get(_campaign_of(shown), 0.0)]
        fraud = [shown for shown in step.banners if shown.result is None and self.random.random() < CLICK_FRAUD]
        await self._gather(self._report(shown, EventType.CLICK) for shown in clicks + fraud)
        tasks = [(shown, task) for shown in billed if (task := self._task_to_take(shown)) is not None]
        visits = [await self._begin_task(shown, task) for shown, task in tasks]
        for visitor, page, unit in step.units:
            if self.random.random() < UNIT_ANSWERED:
                await self._answer(visitor, page, unit)

        await self._at(moment + COMPLETE_AFTER)
        for (shown, task), proof in zip(tasks, visits, strict=True):
            await self._complete(shown, task, proof)

    def _visit(self, moment: datetime) -> tuple[Visitor, Page]:
        """Who views which page now: mostly people (regulars more often), some crawlers, a copy of the demo site,
        and the office on the demo site on weekdays' working hours."""
        draw = self.random.random()
        working = moment.weekday() < 5 and 8 <= moment.hour < 18
        if draw < BOT_VIEW:
            return self.random.choice(self.crawlers), self.world.demo_page
        if draw < BOT_VIEW + COPYCAT_VIEW:
            return self._regular(), self.world.copycat_page
        if working and draw < BOT_VIEW + COPYCAT_VIEW + OFFICE_VIEWS:
            return self.random.choice(self.office), self.world.demo_page
        visitor = self._regular()
        if self.random.random() < NEWS_VIEW:
            return visitor, self.random.choice(self.world.news_pages)
        return visitor, self.world.demo_page

    def _regular(self) -> Visitor:
        return self.visitors[int(len(self.visitors) * self.random.random() ** 2)]

    async def _serve(self, step: Step, visitor: Visitor, page: Page) -> None:
        """Each slot of ``page`` the visitor's device shows, served as the embed asks."""
        client = visitor.client(page)
        for slot in page.slots:
            if visitor.device not in slot.devices:
                continue
            query = ServeQuery.model_validate({
                "siteId": page.site_id, "kind": slot.kinds, "size": slot.size, "placement": slot.placement,
                "attached": "1" if slot.attached else "0", "viewer": visitor.fingerprint, "wallet": visitor.wallet})
            decision = await serving.serve(self.server, query, client)
            if decision.banner is not None:
                step.banners.append(Shown(visitor, page, slot, decision))
            elif decision.unit is not None:
                step.units.append((visitor, page, decision.unit))

    async def _report(self, shown: Shown, kind: EventType, *, fingerprint: str | None = None) -> TrackResult:
        """The embed's report of an impression (rendered and in view) or a click of ``shown``'s banner."""
        banner = shown.decision.banner
        assert banner is not None  # noqa: S101 - only banners are shown
        moment = self.clock.now()
        event = TrackEvent(
            type=kind, campaign_id=banner.creative.campaign_id, ad_id=banner.creative.id, site_id=shown.page.site_id,
            fingerprint=fingerprint or shown.visitor.fingerprint, rendered=True, viewport_visible=True,
            render_time=float(self.random.randrange(40, 400)), timestamp=int(moment.timestamp() * 1000),
            page_url=shown.page.url, user_agent=shown.visitor.user_agent, tracking_token=banner.tracking_token)
        result = await self.tracker.track(event, shown.visitor.client(shown.page))
        if kind == EventType.IMPRESSION and fingerprint is None:
            shown.result = result
        self.events += result.status == "recorded"
        return result

    async def _gather(self, reports: Iterator[Awaitable[TrackResult]] | list[Awaitable[TrackResult]]) -> None:
        """Reports sent at the same moment, which the tracker writes in as few batches as it can."""
        await asyncio.gather(*reports)

    def _task_to_take(self, shown: Shown) -> TaskView | None:
        """An attached task the visitor's wallet takes on, now and then, that a demo can complete without sending
        a transaction."""
        banner = shown.decision.banner
        wallet = shown.visitor.wallet
        if banner is None or wallet is None or self.random.random() >= TASK_TAKEN:
            return None
        for task in banner.attached_tasks:
            if task.kind in (TaskKind.VISIT_URL, TaskKind.QUIZ, TaskKind.SIGN_MESSAGE) \
                    and (task.id, wallet) not in self.completed:
                self.completed.add((task.id, wallet))
                return task
        return None

    async def _begin_task(self, shown: Shown, task: TaskView) -> dict[str, Any]:
        """The task's first step, now, and the proof the completion will carry: the visit of VISIT_URL starts,
        SIGN_MESSAGE's message is issued and signed, QUIZ is answered."""
        visitor, now = shown.visitor, self.clock.now()
        account = visitor.account
        assert account is not None  # noqa: S101 - only visitors with a wallet take tasks
        if task.kind == TaskKind.VISIT_URL:
            await start_visit(task.id, VisitStart(fingerprint=visitor.fingerprint), now)
            return {"dwellMs": int((COMPLETE_AFTER - ACT_AFTER).total_seconds() * 1000) - 2000}
        if task.kind == TaskKind.SIGN_MESSAGE:
            issued = await issue_message(task.id, MessageRequest(wallet=account.address), now=now, rng=self.random)
            signature = account.sign_message(encode_defunct(text=issued.message)).signature.to_0x_hex()
            return {"message": issued.message, "signature": signature}
        return {"answer": "G$"}

    async def _complete(self, shown: Shown, task: TaskView, proof: dict[str, Any]) -> None:
        visitor = shown.visitor
        await complete_task(CompleteTask(task_id=task.id, wallet=str(visitor.wallet), fingerprint=visitor.fingerprint,
                                         proof=proof, site_id=shown.page.site_id),
                            now=self.clock.now(), chain=self.chain)

    async def _answer(self, visitor: Visitor, page: Page, unit: TaskView) -> None:
        """The visitor's answer to a unit it has not answered: a poll's vote, a rating, or the survey's three
        questions one by one."""
        respondent = visitor.wallet or f"fp:{visitor.fingerprint}"
        if (unit.id, respondent) in self.answered:
            return
        self.answered.add((unit.id, respondent))
        now = self.clock.now()
        answers: list[dict[str, Any]]
        if unit.kind == TaskKind.POLL:
            answers = [{"optionId": self._draw(POLL_VOTES)}]
        elif unit.kind == TaskKind.FEEDBACK:
            text = self.random.choice(FEEDBACK_TEXTS)
            answers = [{"rating": self.random.choice((3, 4, 4, 5, 5, 5)), **({"text": text} if text else {})}]
        else:
            wish = self.random.choice(SURVEY_WISHES)
            answers = [{"questionId": "wallet", "optionId": self._draw(SURVEY_WALLETS)},
                       {"questionId": "trust", "rating": self.random.randint(2, 5)},
                       {"questionId": "wish", **({"text": wish} if wish else {})}]
        session_id = None
        for proof in answers:
            outcome = await submit(Submission(task_id=unit.id, site_id=page.site_id, fingerprint=visitor.fingerprint,
                                              wallet=visitor.wallet, proof=proof, session_id=session_id),
                                   now=now, chain=self.chain)
            session_id = outcome.session.id if outcome.session is not None else None

    def _draw(self, weights: dict[str, int]) -> str:
        return self.random.choices(list(weights), weights=list(weights.values()))[0]

    async def _withdraw_when_due(self, moment: datetime) -> None:
        """Once, ``WITHDRAWAL_DAYS_AGO`` days before the end: the publisher withdraws part of the demo site's
        balance (a claim its wallet may redeem on the vault until its deadline)."""
        if self.withdrawn or moment < self.end - timedelta(days=WITHDRAWAL_DAYS_AGO):
            return
        self.withdrawn = True
        holder = Holder("site", self.world.site_id, self.world.publisher_wallet)
        whole = int(await ledger.balance(holder.account()) * WITHDRAWN_SHARE) // UNIT * UNIT
        if whole < self.settings.min_withdrawal:
            return
        await self._at(moment)
        await withdrawals.withdraw(holder, whole, Token.GS, minimum=self.settings.min_withdrawal, chain=self.chain,
                                   now=moment)

    async def _at(self, moment: datetime) -> None:
        """Move the clock to ``moment`` (never backwards)."""
        if moment > self.clock.now():
            self.clock.advance(seconds=(moment - self.clock.now()).total_seconds())


async def _top_up(chain: ChainClient, advertiser: Advertiser, account: LocalAccount, minter: LocalAccount | None,
                  now: datetime) -> None:
    """The advertiser deposits ``TOP_UP`` G$ to its balance on the vault, as its wallet would from the portal, and
    adnet credits it (at once where the chain needs no confirmations, else the watcher does). Its wallet is given
    the G$ first where it lacks them and ``minter`` may mint them; otherwise there is no top-up."""
    wallet = account.address.lower()
    if await chain.token_balance(Token.GS, wallet) < TOP_UP:
        if minter is None or not await can_mint(chain.w3, minter.address, chain.gs_address):
            log.info("demo top-up left out: the advertiser's wallet holds too little G$ wallet=%s", wallet)
            return
        await mint(chain.w3, minter, chain.gs_address, wallet, TOP_UP)
    holder = Holder("advertiser", advertiser.id, wallet)
    await chain.send(account, chain.build_approve_tx(wallet, Token.GS, TOP_UP))
    tx_hash = await chain.send(account, chain.build_deposit_tx(wallet, Token.GS, TOP_UP, holder.account_ref))
    await deposits.credit(holder, tx_hash, chain, now)


def _visitors(rng: random.Random) -> list[Visitor]:
    devices = [(device, agent) for device, agent, _ in BROWSERS]
    shares = [share for _, _, share in BROWSERS]
    visitors = []
    for _ in range(VISITORS):
        device, agent = rng.choices(devices, weights=shares)[0]
        country = rng.choices(list(COUNTRIES), weights=list(COUNTRIES.values()))[0]
        key = rng.randbytes(32) if rng.random() < WITH_WALLET else None
        visitors.append(Visitor(ip=_address(rng), user_agent=agent, device=device, country=country,
                                fingerprint=_fingerprint(rng), wallet_key=key))
    return visitors


def _office(rng: random.Random) -> list[Visitor]:
    """Colleagues on one network: one /24, desktops, one country."""
    network = _address(rng).rsplit(".", 1)[0]
    return [Visitor(ip=f"{network}.{rng.randrange(2, 250)}", user_agent=BROWSERS[0][1], device="desktop",
                    country=OFFICE_COUNTRY, fingerprint=_fingerprint(rng)) for _ in range(OFFICE_VISITORS)]


def _address(rng: random.Random) -> str:
    return f"{rng.randrange(1, 224)}.{rng.randrange(256)}.{rng.randrange(256)}.{rng.randrange(1, 255)}"


def _fingerprint(rng: random.Random) -> str:
    return rng.randbytes(16).hex()


def _campaign_of(shown: Shown) -> str:
    banner = shown.decision.banner
    return "" if banner is None else banner.creative.campaign_id


def _midnight(moment: datetime) -> datetime:
    return datetime.combine(moment.astimezone(UTC).date(), time.min, tzinfo=UTC)
