"""The running service's parts, built once when a process starts serving and handed to what needs them.

``start`` opens the database, connects the chain (checking the database is bound to it, and, in production, that
the vault accepts adnet's claim signer), starts hearing the other processes' changes (through Redis, or the
database's change log without it), loads the serving index,
starts the tracking and completion writers and the jobs; ``stop`` lets each finish what it holds (queued events
and completions are written, counted serve decisions saved) before the database closes. The app keeps the
``Services`` of its process (``adnet.app``); request handlers reach them through it, domain code gets what it needs
as arguments.
"""

from __future__ import annotations

import logging
import random
from dataclasses import dataclass
from datetime import timedelta

from adnet.accounts.fetching import Fetcher, FetchFailed, FetchPolicy
from adnet.accounts.ownership import SiteChecks
from adnet.accounts.sellers import Contact, SellersDirectory
from adnet.audiences.evaluation import AUDIENCE_LEASE, AudienceJob
from adnet.campaigns import taxonomy
from adnet.campaigns.banners import banner_fetcher
from adnet.campaigns.previews import BannerPreviews
from adnet.chain.client import ChainClient
from adnet.chain.service import ChainConnection, connect
from adnet.chain.watcher import Watcher
from adnet.config import Settings
from adnet.conversions.onchain import GoalReader
from adnet.conversions.recording import Terms
from adnet.core import changes, metrics
from adnet.core.clock import Clock
from adnet.core.drain import Drain
from adnet.core.redis_link import RedisLink
from adnet.db import config as database
from adnet.db.outage import DatabaseLink
from adnet.delivery import clients
from adnet.delivery.frequency import FrequencyMemory, RedisFrequency
from adnet.delivery.reach import REACH_LEASE
from adnet.delivery.serving import Server
from adnet.delivery.spool import SPOOL_DIRECTORY, Spool
from adnet.delivery.targeting import Locator
from adnet.delivery.tracking import Tracker
from adnet.jobs.changelog import ChangeLog
from adnet.jobs.health import HEALTH_SECONDS, Health, SignerNotAuthorized
from adnet.jobs.leases import Lease
from adnet.jobs.periodic import GOAL_READER_LEASE, ON_DEMAND_IN_TESTS, WATCHER_LEASE, periodic_jobs
from adnet.jobs.scheduler import Scheduler
from adnet.money import vault_events
from adnet.tasks.completion import CompletionWriter
from adnet.webhooks.delivery import Deliverer

WEBHOOK_USER_AGENT = "adnet-webhooks/1"

log = logging.getLogger(__name__)


@dataclass
class Services:
    """Everything a serving process shares between requests and jobs."""

    settings: Settings
    clock: Clock
    random: random.Random
    chain: ChainClient
    serving: Server
    tracker: Tracker
    completions: CompletionWriter
    watcher: Watcher
    jobs: Scheduler
    chain_connection: ChainConnection
    site_checks: SiteChecks
    banners: Fetcher
    previews: BannerPreviews
    health: Health
    database: DatabaseLink
    announcements: changes.Broadcast | ChangeLog
    watcher_lease: Lease
    goal_reader: GoalReader
    goal_reader_lease: Lease
    audiences: AudienceJob
    audiences_lease: Lease
    reach_lease: Lease
    webhooks: Deliverer
    drain: Drain
    sellers: SellersDirectory

    @property
    def announce(self) -> changes.Listener:
        """What hears this process's changes: its serving index at once, and every other process's through Redis
        or, without one, through the database's change log."""
        return self.announcements.announce


async def start(settings: Settings, clock: Clock, rng: random.Random, *, redis: RedisLink | None) -> Services:
    """Open the database and the chain, load the index and the client rules, start the writers and the jobs.
    ``redis``: the process's link to the Redis of ``ADNET_REDIS_URL`` (the app's, which its rate limiter shares),
    if one is named."""
    await database.open_database(settings.database_url)
    connection = await connect(settings, clock=clock)
    chain = connection.client
    link = DatabaseLink(database.ping)
    drain = Drain(settings.drain_seconds)
    health = Health(chain, clock, link, redis=redis, interval=None if settings.env == "test" else HEALTH_SECONDS,
                    drain=drain)
    await health.check_chain()
    try:
        health.require_signer(production=settings.production)
    except SignerNotAuthorized:
        await connection.close()
        await database.close_database()
        raise
    frequency = RedisFrequency(redis.url, redis) if redis is not None else FrequencyMemory()
    # Serving's draws and token nonces need no unpredictability (a token's MAC is what cannot be forged): they take
    # a fast generator seeded from the service's source, not a system call each.
    draws = random.Random(rng.getrandbits(128))  # noqa: S311
    server = Server(clock=clock, rng=draws, tracking_secret=settings.tracking_secret,
                    locator=Locator(settings.geoip_database), frequency=frequency,
                    iab_vendor_id=settings.iab_vendor_id)
    # Listening to the other processes starts before the index is read, so no change falls between the two.
    changelog: ChangeLog | None = None
    announcements: changes.Broadcast | ChangeLog
    if redis is not None:
        announcements = changes.Broadcast(redis.url, server.invalidate, redis)
    else:
        announcements = changelog = ChangeLog(server.invalidate, clock)
    await announcements.start()
    await server.rebuild()
    clients.warm_up()
    spool = (Spool(settings.data_dir / SPOOL_DIRECTORY, max_events=settings.spool_max_events,
                   max_seconds=settings.spool_max_seconds, now=clock.now) if settings.spool_max_events else None)
    tracker = Tracker(clock=clock, settings=settings, server=server, database=link, spool=spool)
    health.tracker = tracker
    completions = CompletionWriter()
    watcher = Watcher(chain, apply=lambda event: vault_events.apply(event, clock.now()))
    site_checks = SiteChecks.from_settings(settings)
    taxonomy.ad_products()  # a data file that does not map every category stops the start here
    watcher_lease = Lease(WATCHER_LEASE, clock=clock)
    goal_reader = GoalReader(chain, clock=clock, terms=Terms.of(settings))
    goal_reader_lease = Lease(GOAL_READER_LEASE, clock=clock)
    banners = banner_fetcher(settings.production)
    audiences = AudienceJob(chain, clock=clock)
    audiences_lease = Lease(AUDIENCE_LEASE, clock=clock)
    reach_lease = Lease(REACH_LEASE, clock=clock)
    webhook_fetcher = Fetcher(FetchPolicy.for_environment(settings.production), user_agent=WEBHOOK_USER_AGENT)
    webhooks = Deliverer(post=webhook_fetcher.post, failure=FetchFailed)
    jobs = Scheduler(periodic_jobs(server=server, chain=chain, watcher=watcher, watcher_lease=watcher_lease,
                                   goal_reader=goal_reader, goal_reader_lease=goal_reader_lease,
                                   audiences=audiences, audiences_lease=audiences_lease, reach_lease=reach_lease,
                                   clock=clock,
                                   site_checks=site_checks, health=health,
                                   retention_days=settings.event_retention_days, webhooks=webhooks,
                                   changelog=changelog),
                     on_demand=ON_DEMAND_IN_TESTS if settings.env == "test" else (), database=link)
    tracker.start()
    completions.start()
    started = Services(settings=settings, clock=clock, random=rng, chain=chain, serving=server, tracker=tracker,
                       completions=completions, watcher=watcher, jobs=jobs, chain_connection=connection,
                       site_checks=site_checks, banners=banners, previews=BannerPreviews(banners),
                       announcements=announcements, watcher_lease=watcher_lease, goal_reader=goal_reader,
                       goal_reader_lease=goal_reader_lease, audiences=audiences, audiences_lease=audiences_lease,
                       reach_lease=reach_lease, health=health, database=link, webhooks=webhooks, drain=drain,
                       sellers=SellersDirectory(Contact.from_settings(settings),
                                                timedelta(seconds=settings.sellers_cache_seconds)))
    changes.listen(started.announce)  # before the jobs start: their tasks inherit it
    jobs.start()
    return started


async def stop(services: Services) -> None:
    """Stop the jobs and the writers, writing what they hold, then release the chain and the database; these are
    released also when writing fails (the failure is raised after)."""
    try:
        await services.jobs.stop()
        await services.webhooks.stop()
        await services.tracker.stop()
        await services.completions.stop()
        await services.serving.flush_counts()
        await services.watcher_lease.release()
        await services.goal_reader_lease.release()
        await services.audiences_lease.release()
        await services.reach_lease.release()
    finally:
        await services.announcements.stop()
        services.serving.locator.close()
        await services.serving.frequency.close()
        await services.chain_connection.close()
        await services.database.close()
        await database.close_database()
        metrics.process_ends()
