"""The periodic work of a serving process, as jobs for its scheduler:

- ``serving-index``: bring the serving index up to date at once when a change is announced, read the campaigns'
  budgets every ``BUDGET_SECONDS`` and rebuild the whole index every ``REBUILD_SECONDS``
  (``adnet.delivery.serving.Server.update``);
- ``changes``, without Redis: write this process's announced changes to the change log and read the other
  processes' every ``POLL_SECONDS`` (``adnet.jobs.changelog``);
- ``fill-counts``: add the serve decisions counted in memory to the per-site daily counters;
- ``settle-campaigns``: end campaigns whose end date has passed or whose budget is spent, and return what is left
  of ended campaigns' budgets and task pools (no request does this: reading an account never writes);
- ``expired-claims``: release claims whose deadline the confirmed chain time has passed (a withdrawal back to its
  holder, a reward back to its pool);
- ``chain-watcher``: follow the vault's events (deposits credited, claims redeemed), in the one process of all
  workers and hosts that holds the watcher's lease (``adnet.jobs.leases``); the others stand by. A pass takes
  the block ranges that begin within ``WATCH_BUDGET_SECONDS`` and leaves the rest to the next, so catching up
  after a stop shares the event loop with requests instead of holding it;
- ``conversion-goals``: read the on-chain goals' events from confirmed blocks and record the conversions of wallets
  proven for clicks (``adnet.conversions.onchain``), in the one process that holds its lease, as the watcher does;
- ``wallet-audiences``: evaluate the proven wallets that are due against the live campaigns' wallet audience rules
  (``adnet.audiences.evaluation``), in the one process that holds its lease, and announce them to every serving
  process; a newly proven wallet is due at once;
- ``reach``: count the billed impressions recorded since its cursor into the per-viewer reach rows
  (``adnet.delivery.reach``), in the one process that holds its lease; off the tracking path, so reach figures are
  at most ``COUNT_SECONDS`` and ``SETTLE`` behind;
- ``site-checks``: re-check the proofs of verified sites that are due, lapsing those that lost them;
- ``health``: check the chain's node, the vault's signer and its cover of what adnet owes (``adnet.jobs.health``);
- ``webhooks``: deliver the outbox's due webhook deliveries, endpoints at once with one attempt in flight each,
  retrying failed ones with backoff and pausing an endpoint that keeps failing (``adnet.webhooks.delivery``);
- ``retention``: delete raw tracking events older than ``ADNET_EVENT_RETENTION_DAYS``, deduplication keys past
  their hour and billing windows that ended (``adnet.delivery.retention``);
- ``rate-limits``: delete the database's rate limit keys whose limit has recovered (``adnet.accounts.limits``).

Every job is safe to run in several processes at once (each write is a conditional update or a unique key). In
tests only the index and the counters run by themselves; the others run when a test asks (``Scheduler.run``), so
a test decides when time has passed.
"""

from __future__ import annotations

from adnet.accounts import limits
from adnet.accounts.ownership import SiteChecks
from adnet.audiences.evaluation import AUDIENCE_LEASE, EVALUATE_SECONDS, AudienceJob
from adnet.campaigns.lifecycle import settle_due
from adnet.chain.client import ChainClient
from adnet.chain.watcher import Watcher
from adnet.conversions.onchain import GoalReader
from adnet.core.clock import Clock
from adnet.delivery import reach, retention
from adnet.delivery.index import BUDGET_SECONDS
from adnet.delivery.serving import Server
from adnet.jobs.changelog import POLL_SECONDS, ChangeLog
from adnet.jobs.health import HEALTH_SECONDS, Health
from adnet.jobs.leases import Lease
from adnet.jobs.scheduler import Job
from adnet.money import claims
from adnet.webhooks.delivery import Deliverer

FILL_COUNT_SECONDS = 3.0
SETTLE_SECONDS = 30.0
EXPIRY_SECONDS = 60.0
WATCH_SECONDS = 2.0
WATCH_BUDGET_SECONDS = 0.2
WATCHER_LEASE = "chain-watcher"
GOAL_READ_SECONDS = 5.0
GOAL_READER_LEASE = "conversion-goals"
SITE_CHECK_SECONDS = 600.0
RETENTION_SECONDS = 3600.0
WEBHOOK_SECONDS = 5.0
RATE_LIMIT_SWEEP_SECONDS = 300.0
# Jobs a test runs itself rather than on a timer.
ON_DEMAND_IN_TESTS = frozenset({"settle-campaigns", "expired-claims", "chain-watcher", "conversion-goals",
                                "wallet-audiences", reach.REACH_LEASE,
                                "site-checks", "retention",
                                "health", "webhooks", "rate-limits", "changes"})


def periodic_jobs(*, server: Server, chain: ChainClient, watcher: Watcher, watcher_lease: Lease,
                  goal_reader: GoalReader, goal_reader_lease: Lease, audiences: AudienceJob, audiences_lease: Lease,
                  reach_lease: Lease, clock: Clock, site_checks: SiteChecks,
                  health: Health, retention_days: int, webhooks: Deliverer,
                  changelog: ChangeLog | None) -> list[Job]:
    """Every periodic job of a serving process (``changes`` only with a change log, that is without Redis)."""
    exchange = [Job("changes", changelog.exchange, every=POLL_SECONDS, wake=changelog.due)] if changelog else []
    return [
        Job("serving-index", server.update, every=BUDGET_SECONDS, wake=server.stale),
        *exchange,
        Job("fill-counts", server.flush_counts, every=FILL_COUNT_SECONDS),
        Job("settle-campaigns", lambda: settle_due(clock.now()), every=SETTLE_SECONDS),
        Job("expired-claims", lambda: claims.release_expired(chain), every=EXPIRY_SECONDS),
        Job("chain-watcher", lambda: watcher_lease.run(lambda: watcher.run_once(WATCH_BUDGET_SECONDS)),
            every=WATCH_SECONDS),
        Job("conversion-goals", lambda: goal_reader_lease.run(lambda: goal_reader.run_once(WATCH_BUDGET_SECONDS)),
            every=GOAL_READ_SECONDS),
        Job(AUDIENCE_LEASE, lambda: audiences_lease.run(audiences.run_once), every=EVALUATE_SECONDS),
        Job(reach.REACH_LEASE, lambda: reach_lease.run(lambda: reach.count_new(clock.now())),
            every=reach.COUNT_SECONDS),
        Job("site-checks", lambda: site_checks.recheck_due(clock.now()), every=SITE_CHECK_SECONDS),
        Job("health", health.check_chain, every=HEALTH_SECONDS),
        Job("retention", lambda: retention.prune(clock.now(), retention_days), every=RETENTION_SECONDS),
        Job("webhooks", lambda: webhooks.deliver_due(clock.now()), every=WEBHOOK_SECONDS),
        Job("rate-limits", lambda: limits.sweep(limits.now()), every=RATE_LIMIT_SWEEP_SECONDS),
    ]
