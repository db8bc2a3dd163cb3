"""adnet's Prometheus metrics, declared once per process as prometheus-client expects (like loggers), and their
exposition for ``/metrics``.

One process keeps its figures in memory. Several workers (``adnet serve --workers N``) each write theirs to files
in one directory (prometheus-client's multiprocess mode, ``PROMETHEUS_MULTIPROC_DIR``), which ``adnet serve`` empties
and names before the workers start; whichever worker answers ``/metrics`` then adds up every worker's files, so a
scrape sees the whole server however the load balancer spreads it. Gauges say how they combine: a queue's depth is
the sum over the workers alive, a figure read from the database or the chain is the most recent any worker read.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from pathlib import Path

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
    multiprocess,
)

SHARED_DIRECTORY = "PROMETHEUS_MULTIPROC_DIR"
_LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)
_BATCH_BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)

REQUESTS = Counter("adnet_http_requests", "Requests answered, by method, route rule and status.",
                   ["method", "route", "status"])
REQUEST_SECONDS = Histogram("adnet_http_request_duration_seconds", "Time to answer a request, by method and route "
                            "rule.", ["method", "route"], buckets=_LATENCY_BUCKETS)
BATCH_SIZE = Histogram("adnet_batch_size", "Items committed together by a group-commit writer.", ["writer"],
                       buckets=_BATCH_BUCKETS)
BATCH_WAIT_SECONDS = Histogram("adnet_batch_wait_seconds", "How long a batch's oldest item waited in its writer's "
                               "queue before the batch's commit began.", ["writer"], buckets=_LATENCY_BUCKETS)
BATCH_COMMIT_SECONDS = Histogram("adnet_batch_commit_seconds", "How long a batch's database transaction took.",
                                 ["writer"], buckets=_LATENCY_BUCKETS)
QUEUE_DEPTH = Gauge("adnet_batch_queue_depth", "Items waiting for a group-commit writer.", ["writer"],
                    multiprocess_mode="livesum")
JOB_SECONDS = Histogram("adnet_job_duration_seconds", "How long a run of a periodic job took, by job: the time it "
                        "shares the event loop with requests.", ["job"], buckets=_LATENCY_BUCKETS)
SPOOL_EVENTS = Gauge("adnet_tracking_spool_events", "Tracking events kept in the host's spool while the database "
                     "could not take them, not yet written to it.", multiprocess_mode="livesum")
SPOOLED_EVENTS = Counter("adnet_tracking_spooled_events", "Tracking events through the spool, by outcome: spooled "
                         "(kept while the database was away), written (to the database, later), duplicate "
                         "(found a duplicate when written, so not stored).", ["outcome"])
FILTERED_EVENTS = Counter("adnet_tracking_filtered_events", "Tracking events recorded but not billed, by reason.",
                          ["reason"])
CLAIMS_OUTSTANDING = Gauge("adnet_claims_outstanding_tokens", "Claims signed and not yet redeemed or expired, in "
                           "tokens.", ["token"], multiprocess_mode="mostrecent")
OWED = Gauge("adnet_owed_tokens", "What adnet owes per token (every ledger account but external), in tokens.",
             ["token"], multiprocess_mode="mostrecent")
VAULT_HOLDINGS = Gauge("adnet_vault_holdings_tokens", "What the vault holds on the chain, in tokens.", ["token"],
                       multiprocess_mode="mostrecent")
VAULT_COVER = Gauge("adnet_vault_cover_tokens", "What the vault holds beyond what adnet owes (negative: short), "
                    "in tokens.", ["token"], multiprocess_mode="mostrecent")
SIGNER_AUTHORIZED = Gauge("adnet_signer_authorized", "1 when the vault accepts adnet's claim signer, else 0.",
                          ["signer"], multiprocess_mode="mostrecent")


def count_filtered(reasons: Mapping[str, int]) -> None:
    """Add a batch's not-billed events, by reason."""
    for reason, count in reasons.items():
        FILTERED_EVENTS.labels(reason=reason).inc(count)


def share_between_processes(directory: Path) -> None:
    """Have the worker processes started after this call write their figures into ``directory``, emptied first: a
    previous run's files would otherwise add its counts to this one's."""
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir(parents=True)
    os.environ[SHARED_DIRECTORY] = str(directory)


def process_ends() -> None:
    """Drop this process's share of the gauges that sum over live workers (its queues are gone with it)."""
    if SHARED_DIRECTORY in os.environ:
        multiprocess.mark_process_dead(os.getpid())  # type: ignore[no-untyped-call]


def exposition() -> tuple[bytes, str]:
    """The metrics in Prometheus's text format, of every worker when they share a directory, and its media type."""
    if SHARED_DIRECTORY not in os.environ:
        return generate_latest(REGISTRY), CONTENT_TYPE_LATEST
    registry = CollectorRegistry()
    multiprocess.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
    return generate_latest(registry), CONTENT_TYPE_LATEST
