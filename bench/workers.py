"""How adnet scales with worker processes: ``python -m bench.workers --workers 1,2,4,8 [--database-url …]``.

For each worker count it makes a fresh database with the demo data, starts ``bench/server.py`` with that many
workers, and measures the closed-loop rate (``bench.run``'s, best of its rounds) of the trivial route, ``GET
/api/serve`` and ``POST /api/track`` with the usual mix of served tokens; then it reads from the database how many
of the tracked events were billed, so the table shows billed tracking: every billed batch books the same campaign
and site ledger accounts, the hot spot that could stop tracking from scaling. It also audits the books of each run
(``adnet.money.audit`` without the chain): several workers writing at once must leave every transaction balanced
and every balance equal to its postings; the command fails when an audit does not pass. The figures that matter are the
ratios between rows of one run, on one machine; the header says how many cores the workers share with the load
generator.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import shutil
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import uvloop

from adnet.db import config as db
from adnet.delivery.models import TrackingEvent
from adnet.money.audit import audit
from bench import run as bench

DEFAULT_WORKERS = (1, 2, 4, 8)


@dataclass(frozen=True)
class Scaled:
    """One worker count's closed-loop rates, the tracked events of its run (billed and recorded) and the problems
    the audit of its books found."""

    workers: int
    rates: dict[str, float]
    billed: int
    recorded: int
    problems: list[str]


async def rates(port: int, site_id: str, seconds: float) -> dict[str, float]:
    """The best closed-loop round of each endpoint, taken in turn."""
    rng = random.Random(2026)
    ads = await bench.prepare_tokens(port, site_id, bench.TOKENS_TO_PREPARE, rng)
    await asyncio.sleep(1.2)  # every prepared ad has now been "in view" for more than a second
    makers = {
        "ceiling": lambda: bench.get("/bench/ceiling", bench.client_address(rng)),
        "serve": lambda: bench.get(f"/api/serve?siteId={site_id}&size={rng.choice(bench.SIZES)}&placement=bench",
                                   bench.client_address(rng)),
        "track": bench.TrackMix(site_id, ads, rng),
    }
    best: Counter[str] = Counter()
    for _ in range(bench.ROUNDS):
        for name, make in makers.items():
            best[name] = max(best[name], (await bench.closed_loop(port, make, seconds / bench.ROUNDS)).rate)
    return dict(best)


async def tracked(database_url: str) -> tuple[int, int, list[str]]:
    """How many tracked events the run billed, how many it recorded, and what the audit of the books found."""
    await db.open_database(database_url)
    try:
        return (await TrackingEvent.filter(billable=True).count(), await TrackingEvent.all().count(),
                (await audit(None)).problems)
    finally:
        await db.close_database()


def measure(workers: int, args: argparse.Namespace, seconds: float) -> Scaled:
    data_dir = Path(tempfile.mkdtemp(prefix="adnet-bench-workers-"))
    server = None
    try:
        database_url, _ = bench.fresh_database(args, data_dir)
        env, demo = bench.prepare(data_dir, database_url)
        server = bench.start_server(env, workers)
        measured = uvloop.run(rates(int(env["ADNET_PORT"]), demo["siteId"], seconds))
        bench.stop(server)
        server = None
        return Scaled(workers, measured, *asyncio.run(tracked(database_url)))
    finally:
        if server is not None:
            bench.stop(server)
        shutil.rmtree(data_dir, ignore_errors=True)


def report(rows: list[Scaled]) -> str:
    lines = ["| workers | GET /bench/ceiling | GET /api/serve | POST /api/track | tracked events billed | audit |",
             "|---|---|---|---|---|---|"]
    first = rows[0]
    for row in rows:
        cells = [f"{row.rates[name]:,.0f} req/s ({row.rates[name] / first.rates[name]:.1f} times)"
                 for name in ("ceiling", "serve", "track")]
        audited = "passed" if not row.problems else f"{len(row.problems)} problem(s): {row.problems[0]}"
        lines.append(f"| {row.workers} | {' | '.join(cells)} | {row.billed:,} of {row.recorded:,} | {audited} |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description="Benchmark adnet's serve and billed tracking across workers.")
    parser.add_argument("--workers", default=",".join(map(str, DEFAULT_WORKERS)),
                        help="comma-separated worker counts (each 1-32)")
    parser.add_argument("--seconds", type=float, default=6.0,
                        help="the closed-loop rounds of each endpoint together, per worker count (max 30)")
    bench.add_database_arguments(parser)
    args = parser.parse_args()
    counts = [min(max(int(count), 1), 32) for count in args.workers.split(",")]
    seconds = min(max(args.seconds, 1.0), 30.0)
    rows = [measure(count, args, seconds) for count in counts]
    database = "PostgreSQL" if args.database_url.startswith(("postgres://", "postgresql://")) else (
        f"SQLite file database (synchronous={args.synchronous})")
    print(f"\nadnet across workers: {database}, {os.cpu_count()} cores shared with the load generator, "
          f"{seconds:g} s of closed loop per endpoint and worker count (in brackets: times the rate of "
          f"{counts[0]} worker{'s' if counts[0] > 1 else ''})\n")
    print(report(rows))
    return 1 if any(row.problems for row in rows) else 0


if __name__ == "__main__":
    raise SystemExit(main())
