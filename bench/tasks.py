"""The task-completion phase of the benchmark: ``python -m bench.tasks`` (from the repository, with the venv's python).

It prepares the server exactly as ``bench/run.py`` does (a fresh data directory, the migrations, the demo data,
``bench/server.py`` on a free loopback port) and reuses its load generator, then measures
``POST /api/tasks/complete`` on the demo's QUIZ task: every request is a first completion by a new wallet on a new
device with the right answer, so every one is verified, recorded, paid from the task's G$ pool and answered with
its own signed EIP-712 claim (status 201). The pool is topped up before the server starts so it never runs dry.

Reported, like the other endpoints: the most completions per second 64 keep-alive connections get (closed loop,
after a warm-up), and the p50 and p99 latency at a steady offered rate (open loop, 200 per second by default).
Because the load generator, the server and whatever else runs share the machine's cores, the report adds the
server process's CPU time per completion in the closed loop, which does not move with the machine's load.
Afterwards the books are checked on the stopped server's database: one claim per completion, the pool debited by
exactly the claims' amounts, and ``adnet audit --no-chain`` clean.

``--database-url postgres://…/NAME`` runs the same on PostgreSQL; the database NAME is dropped and created again,
so give one that only the benchmark uses.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import shutil
import subprocess
import tempfile
from pathlib import Path

import uvloop
from tortoise.transactions import in_transaction

from adnet.core.clock import Clock
from adnet.db import config as db
from adnet.money import ledger
from adnet.money.models import Claim
from adnet.tasks.models import Completion, Task
from bench.run import (
    CONNECTIONS,
    MAX_REQUESTS_PER_PHASE,
    ROOT,
    Phase,
    add_database_arguments,
    adnet_command,
    client_address,
    closed_loop,
    cpu_seconds,
    fresh_database,
    open_loop,
    post,
    prepare,
    start_server,
    stop,
)

OPEN_LOOP_RATE = 200
TARGET_PER_SECOND = 300
QUIZ_ANSWER = "G$"  # one of the demo quiz's accepted answers (adnet/demo.py)


class Completions:
    """Completions of one QUIZ task, each by a wallet and a device never seen before."""

    def __init__(self, task_id: str, site_id: str, rng: random.Random) -> None:
        self.task_id, self.site_id, self.rng = task_id, site_id, rng
        self.sent = 0

    def __call__(self) -> bytes:
        self.sent += 1
        body = {"taskId": self.task_id, "wallet": f"0x{self.rng.getrandbits(160):040x}",
                "fingerprint": f"bench-task-{self.sent:08d}-{self.rng.getrandbits(32):08x}",
                "proof": {"answer": QUIZ_ANSWER}, "siteId": self.site_id}
        return post("/api/tasks/complete", body, client_address(self.rng))


async def fund_pool(database_url: str, task_id: str, amount: int) -> None:
    """Top up the task's G$ pool (from the development vault's side of the books) so every completion is paid."""
    await db.open_database(database_url)
    try:
        async with in_transaction():
            pool = ledger.task_pool(task_id)
            await ledger.book("bench_funding", task_id, [(ledger.external("G$"), -amount), (pool, amount)],
                              now=Clock().now(), memo="benchmark data: every completion is paid")
    finally:
        await db.close_database()


async def check_books(database_url: str, task_id: str, funded: int) -> list[str]:
    """What the stopped server left behind, as lines: completions, claims, and whether the pool adds up."""
    await db.open_database(database_url)
    try:
        task = await Task.get(id=task_id)
        completions = await Completion.filter(task_id=task_id).count()
        paid = await Completion.filter(task_id=task_id, claim_id__isnull=False).count()
        claimed = sum(int(amount) for amount in await Claim.filter(completion__task_id=task_id).values_list(
            "amount", flat=True))
        nonces = await Claim.all().values_list("nonce", flat=True)
        pool = await ledger.balance(ledger.task_pool(task_id))
        started = funded + 100 * int(task.reward_gs)  # the demo's own funding: 100 rewards
    finally:
        await db.close_database()
    problems = []
    if paid != completions:
        problems.append(f"{completions - paid} completions without a claim")
    if pool != started - claimed or claimed != paid * int(task.reward_gs):
        problems.append(f"pool {pool} != {started} - {claimed}")
    if len(set(nonces)) != len(nonces):
        problems.append("two claims share a nonce")
    return [f"{completions} completions, {paid} with a signed claim, nonces distinct: {len(set(nonces)) == len(nonces)}"
            f", pool debited by exactly the claims: {pool == started - claimed}", *problems]


async def measure(port: int, server_pid: int, task_id: str, site_id: str, seconds: float, rate: int
                  ) -> tuple[Phase, Phase, float]:
    """Both phases, and the server's CPU milliseconds per request over the closed loop (warm-up included): the
    figure that does not depend on what else the machine is doing."""
    completions = Completions(task_id, site_id, random.Random(2026))
    sent, cpu = completions.sent, cpu_seconds(server_pid)
    closed = await closed_loop(port, completions, seconds)
    cpu_ms = (cpu_seconds(server_pid) - cpu) * 1000 / max(completions.sent - sent, 1)
    return closed, await open_loop(port, completions, seconds, rate), cpu_ms


def report(closed: Phase, opened: Phase, rate: int, cpu_ms: float) -> str:
    statuses = ", ".join(f"{status}: {count}" for status, count in sorted((closed.statuses + opened.statuses).items()))
    return "\n".join([
        f"| endpoint | completions/s at {CONNECTIONS} connections | target | p50 at {rate}/s | p99 at {rate}/s | "
        "server CPU per completion | statuses |",
        "|---|---|---|---|---|---|---|",
        f"| POST /api/tasks/complete (QUIZ, signed claim) | {closed.rate:,.0f} | ≥ {TARGET_PER_SECOND} | "
        f"{opened.percentile(0.5):.1f} ms | {opened.percentile(0.99):.1f} ms | {cpu_ms:.2f} ms | {statuses} |",
    ])


def main() -> int:
    parser = argparse.ArgumentParser(description="Benchmark adnet's POST /api/tasks/complete on this machine.")
    parser.add_argument("--seconds", type=float, default=5.0, help="length of each measured phase (max 30)")
    parser.add_argument("--rate", type=int, default=OPEN_LOOP_RATE, help="open-loop completions per second")
    add_database_arguments(parser)
    parser.add_argument("--keep", action="store_true", help="keep the data directory and print its path")
    args = parser.parse_args()
    seconds = min(max(args.seconds, 1.0), 30.0)
    data_dir = Path(tempfile.mkdtemp(prefix="adnet-bench-tasks-"))
    server = None
    try:
        database_url, database = fresh_database(args, data_dir)
        env, demo = prepare(data_dir, database_url)
        site_id, task_id = demo["siteId"], demo["taskIds"]["QUIZ"][0]
        funded = MAX_REQUESTS_PER_PHASE * 2 * 10**18
        asyncio.run(fund_pool(database_url, task_id, funded))
        server = start_server(env)
        closed, opened, cpu_ms = uvloop.run(measure(int(env["ADNET_PORT"]), server.pid, task_id, site_id, seconds,
                                                    args.rate))
        stop(server)
        books = asyncio.run(check_books(database_url, task_id, funded))
        audit = subprocess.run(adnet_command("audit", "--no-chain"), env=env, cwd=ROOT, timeout=300,  # noqa: S603
                               capture_output=True, text=True)
    finally:
        if server is not None:
            stop(server)
        if args.keep:
            print(f"data directory: {data_dir}")
        else:
            shutil.rmtree(data_dir, ignore_errors=True)
    print(f"\nadnet task-completion benchmark: 1 worker, {database}, {os.cpu_count()} cores shared with the load "
          f"generator, {seconds:g} s per phase\n")
    print(report(closed, opened, args.rate, cpu_ms))
    print("\n" + "\n".join(books))
    print(audit.stdout.strip().splitlines()[-1] if audit.stdout.strip() else audit.stderr.strip())
    return 0 if audit.returncode == 0 and len(books) == 1 else 1


if __name__ == "__main__":
    raise SystemExit(main())
