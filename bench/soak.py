"""The soak run: the benchmark's traffic at a bounded, steady rate for a long time, with the server's memory sampled,
so a leak (a cache, a queue or a counter that only grows) shows before production finds it.

``python -m bench.soak`` (``make soak``) runs 10 minutes; ``--seconds 40`` is the reduced size CI runs
(``tests/reliability/test_soak.py``). Like ``bench/run.py``, whose request generator it uses, it makes a fresh
data directory with the demo data, starts ``bench/server.py`` (``adnet serve``) on a free loopback port, and sends:

- half the requests ``GET /api/serve`` for the demo site in the demo's banner sizes;
- half ``POST /api/track`` in the benchmark's mix (``bench.run.TrackMix``: first impressions of served ads, clicks,
  duplicates).

Requests start on a fixed schedule (open loop) at ``--rate`` per second over 16 keep-alive connections. Every
``--interval`` seconds it reads the resident memory (RSS, ``/proc``) of the server and every process under it
(uvicorn, the development chain). The bound: after ``--warmup`` seconds (imports done, caches and pools filled),
the total RSS may grow by at most ``--max-growth-mib``. It prints the figures and exits 1 beyond the bound, or if
any request got a 5xx or no answer. Traffic goes to 127.0.0.1 only; time and request count are bounded.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import shutil
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import uvloop

from bench.run import (
    SIZES,
    Connection,
    TrackMix,
    client_address,
    get,
    prepare,
    prepare_tokens,
    start_server,
    stop,
)

CONNECTIONS = 16
MAX_SECONDS = 3600
MAX_RATE = 1000
TOKENS_TO_PREPARE = 2_000
MIB = 1024 * 1024


@dataclass
class Soak:
    """What the run saw: answers by status, and the server's memory over time."""

    completed: int = 0
    failed: int = 0
    seconds: float = 0.0
    statuses: Counter[int] = field(default_factory=Counter)
    samples: list[tuple[float, int]] = field(default_factory=list)  # (seconds since start, total RSS in bytes)

    @property
    def rate(self) -> float:
        return self.completed / self.seconds if self.seconds else 0.0

    def rss_at(self, after: float) -> int:
        """The first sample taken at or after ``after`` seconds (the last one if none is)."""
        return next((rss for at, rss in self.samples if at >= after), self.samples[-1][1])

    @property
    def peak(self) -> int:
        return max(rss for _, rss in self.samples)

    @property
    def end(self) -> int:
        return self.samples[-1][1]


def process_tree(root: int) -> list[int]:
    """``root`` and every process under it, from ``/proc``."""
    parents: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        parent = int(stat.rpartition(")")[2].split()[1])
        parents.setdefault(parent, []).append(int(entry.name))
    tree, pending = [], [root]
    while pending:
        pid = pending.pop()
        tree.append(pid)
        pending.extend(parents.get(pid, []))
    return tree


def resident_bytes(root: int) -> int:
    """The summed RSS of ``root`` and every process under it."""
    total = 0
    for pid in process_tree(root):
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            continue
        for line in status.splitlines():
            if line.startswith("VmRSS:"):
                total += int(line.split()[1]) * 1024
    return total


async def soak(port: int, server_pid: int, site_id: str, seconds: float, rate: int, interval: float) -> Soak:
    """Open-loop traffic at ``rate`` for ``seconds``, RSS sampled every ``interval`` seconds."""
    result = Soak()
    rng = random.Random(2026)
    ads = await prepare_tokens(port, site_id, TOKENS_TO_PREPARE, rng)
    await asyncio.sleep(1.2)  # every prepared ad has been "in view" for more than a second
    mix = TrackMix(site_id, ads, rng)

    def next_request() -> bytes:
        if rng.random() < 0.5:
            return get(f"/api/serve?siteId={site_id}&size={rng.choice(SIZES)}&placement=soak", client_address(rng))
        return mix()

    connections = [await Connection.open(port) for _ in range(CONNECTIONS)]
    queue: asyncio.Queue[float | None] = asyncio.Queue()
    total = int(rate * seconds)
    start = time.perf_counter()

    async def schedule() -> None:
        for number in range(total):
            delay = start + number / rate - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            queue.put_nowait(number)
        for _ in connections:
            queue.put_nowait(None)

    async def client(connection: Connection) -> None:
        while await queue.get() is not None:
            try:
                status, _ = await asyncio.wait_for(connection.exchange(next_request()), timeout=30)
            except (OSError, asyncio.IncompleteReadError, TimeoutError):
                result.failed += 1
                connection.close()
                connection = await Connection.open(port)
                continue
            result.completed += 1
            result.statuses[status] += 1

    async def sample() -> None:
        while True:
            result.samples.append((time.perf_counter() - start, resident_bytes(server_pid)))
            await asyncio.sleep(interval)

    sampler = asyncio.create_task(sample())
    await asyncio.gather(schedule(), *(client(connection) for connection in connections))
    result.seconds = time.perf_counter() - start
    sampler.cancel()
    result.samples.append((result.seconds, resident_bytes(server_pid)))
    for connection in connections:
        connection.close()
    return result


def report(result: Soak, warmup: float, max_growth: int) -> tuple[str, bool]:
    """The figures as a person reads them, and whether the run is within its bounds."""
    at_warmup = result.rss_at(warmup)
    growth = result.end - at_warmup
    server_errors = sum(count for status, count in result.statuses.items() if status >= 500)
    statuses = ", ".join(f"{status}: {count}" for status, count in sorted(result.statuses.items()))
    lines = [
        f"requests: {result.completed:,} answered in {result.seconds:.0f} s ({result.rate:,.0f} req/s), "
        f"{result.failed} unanswered; statuses {statuses}",
        f"server RSS: start {result.samples[0][1] / MIB:.1f} MiB, after the {warmup:g} s warm-up "
        f"{at_warmup / MIB:.1f} MiB, end {result.end / MIB:.1f} MiB, peak {result.peak / MIB:.1f} MiB; "
        f"growth after the warm-up {growth / MIB:+.1f} MiB (bound {max_growth / MIB:g} MiB)",
        "samples (s: MiB): " + ", ".join(f"{at:.0f}: {rss / MIB:.1f}" for at, rss in result.samples),
    ]
    ok = growth <= max_growth and server_errors == 0 and result.failed == 0
    lines.append("soak passed" if ok else "soak FAILED: " + "; ".join(
        problem for problem, failed in ((f"RSS grew {growth / MIB:.1f} MiB", growth > max_growth),
                                        (f"{server_errors} 5xx answers", server_errors > 0),
                                        (f"{result.failed} requests unanswered", result.failed > 0)) if failed))
    return "\n".join(lines), ok


def main() -> int:
    parser = argparse.ArgumentParser(description="Soak adnet's serve and track endpoints and watch its memory.")
    parser.add_argument("--seconds", type=float, default=600.0, help=f"length of the run (max {MAX_SECONDS})")
    parser.add_argument("--rate", type=int, default=100, help=f"requests per second (max {MAX_RATE})")
    parser.add_argument("--warmup", type=float, default=60.0, help="seconds before the memory baseline is taken")
    parser.add_argument("--interval", type=float, default=5.0, help="seconds between memory samples")
    parser.add_argument("--max-growth-mib", type=float, default=8.0,
                        help="how much the server's total RSS may grow after the warm-up")
    parser.add_argument("--database-url", help="the database to use (emptied by the caller); default: a fresh "
                                               "SQLite file in the data directory")
    args = parser.parse_args()
    seconds = min(max(args.seconds, 10.0), MAX_SECONDS)
    rate = min(max(args.rate, 1), MAX_RATE)
    warmup = min(args.warmup, seconds / 2)
    data_dir = Path(tempfile.mkdtemp(prefix="adnet-soak-"))
    database_url = args.database_url or f"sqlite://{data_dir / 'soak.sqlite3'}"
    server = None
    try:
        env, demo = prepare(data_dir, database_url)
        server = start_server(env)
        result = uvloop.run(soak(int(env["ADNET_PORT"]), server.pid, demo["siteId"], seconds, rate, args.interval))
    finally:
        if server is not None:
            stop(server)
        shutil.rmtree(data_dir, ignore_errors=True)
    text, ok = report(result, warmup, int(args.max_growth_mib * MIB))
    print(f"\nadnet soak: 1 worker, {database_url.split('://', 1)[0]} database, {seconds:g} s at {rate} req/s, "
          f"{os.cpu_count()} cores shared with the load generator\n")
    print(text)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
