"""The adnet benchmark, in one command: ``python -m bench.run`` (from the repository, with the venv's python).

It makes a fresh data directory with a file (SQLite) database, applies the migrations, loads the demo data
(``adnet demo --bare``: no history), starts the server (``bench/server.py``: ``adnet serve`` plus a trivial
route) on a free loopback port, and measures three endpoints of that one server:

- ``GET /bench/ceiling``: a trivial JSON answer through the same middleware, the most the stack can do;
- ``GET /api/serve`` for the demo site, in the demo's banner sizes;
- ``POST /api/track`` with a realistic mix: 70 % first impressions (each with its own served token, reported
  more than a second after it was served), 10 % clicks on impressed ads, 20 % duplicates of earlier impressions.

Serve and track requests carry the consent signals of a page with a consent platform (a TC string, a GPP string;
a fifth of them refusing storage on the device, so consent-limited), unless ``--without-consent``.

For each: the most requests per second 64 keep-alive connections get (closed loop, after a warm-up; the best of
three rounds that take the endpoints in turn, so that a passing slowdown of a shared machine does not decide the
ratio), its ratio to the ceiling and the server's CPU time per request over the rounds (all its workers); then the
p50 and p99 latency at a steady 500 requests per second (open loop: requests start on a fixed schedule whatever
the server does, and latency counts from the scheduled time, so queueing shows), and the tail at half the
endpoint's own maximum: its p99 beside the ceiling's p99 at the same rate, whose ratio says what the endpoint's
own work (and the server's periodic work) adds to the tail. The header gives this machine's time for a fixed
pure-Python loop, so that runs on machines of different speed can be compared.

``--wallet-audience`` gives one demo campaign a wallet audience and has half the serve requests carry a proven
wallet's audience pass (``bench.audiences``). ``--workers N`` runs ``adnet serve`` with N worker processes;
``--database-url postgres://…`` measures PostgreSQL (the database named is dropped and created again) instead of a
SQLite file.
Requests carry ``X-Forwarded-For`` with loopback addresses (the server trusts one proxy here) so the per-client
rate limits and billing rules see many clients, as in production. Traffic goes to 127.0.0.1 only, every phase is
bounded in time and count, and the server is stopped at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlencode

import uvloop

from adnet.db import config as db
from bench.audiences import add_wallet_audience

HOST = "127.0.0.1"
CONNECTIONS = 64
OPEN_LOOP_RATE = 500
WARMUP_SECONDS = 1.0
MAX_REQUESTS_PER_PHASE = 200_000
TOKENS_TO_PREPARE = 8_000
SIZES = ("300x250", "728x90", "320x50")
BROWSER = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36"
# The page every request comes from: one of the demo site's, whose domain is the server's host.
PAGE_ORIGIN = f"http://{HOST}"
ROOT = Path(__file__).resolve().parent.parent
TARGETS = {"serve": 0.70, "track": 0.50}
P99_TARGET_MS = 10.0
TAIL_RATIO_TARGET = 2.0
REFERENCE_LOOP = 2_000_000
# What pages with a consent platform send (adnet.delivery.consent): a real CMP's TC string that gives purpose 1, and
# a GPP string with the US national section (nothing opted out); CONSENT_REFUSED of the requests carry a TC string
# that refuses it (consent-limited events). --without-consent sends none, as pages without a CMP.
TC_GIVEN = (
    "COxR03kOxR1CqBcABCENAgCMAP_AAH_AAAqIF3EXySoGY2thI2YVFxBEIYwfJxyigMgChgQIsSwNQIeFLBoGLiAAHBGYJAQAGBAEEACBAQIkHGBM"
    "CQAAgAgBiRCMQEGMCzNIBIBAggEbY0FACCVmHkHSmZCY7064O__QLuIJEFQMAkSBAIACLECIQwAQDiAAAYAlAAABAhIaAAgIWBQEeAAAACAwAA"
    "gAAABBAAACAAQAAICIAAABAAAgAiAQAAAAGgIQAACBABACRIAAAEANCAAgiCEAQg4EAo4AAA")
TC_REFUSED = "CPSG_8APSG_8AAAAAAENAAFgAAAAAAAAAAAAFpQAwAAgCtAWkAAAAAAA.IFpQBQAAwAKAAsADoArQFpAA.YAAAAAAAAAAA"
GPP_USNAT = "DBABLA~CAAAAAAAAABA.QA"
CONSENT_REFUSED = 0.2
ROUNDS = 3


class Connection:
    """One HTTP/1.1 keep-alive connection speaking just enough HTTP for JSON answers with Content-Length."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    @classmethod
    async def open(cls, port: int) -> Connection:
        reader, writer = await asyncio.open_connection(HOST, port)
        return cls(reader, writer)

    async def exchange(self, request: bytes) -> tuple[int, bytes]:
        self.writer.write(request)
        head = await self.reader.readuntil(b"\r\n\r\n")
        status = int(head[9:12])
        length = 0
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        return status, await self.reader.readexactly(length) if length else b""

    def close(self) -> None:
        self.writer.close()


def get(path: str, client: str) -> bytes:
    return (f"GET {path} HTTP/1.1\r\nHost: {HOST}\r\nUser-Agent: {BROWSER}\r\nOrigin: {PAGE_ORIGIN}\r\n"
            f"X-Forwarded-For: {client}\r\n\r\n").encode()


def post(path: str, body: dict, client: str) -> bytes:
    payload = json.dumps(body).encode()
    return (f"POST {path} HTTP/1.1\r\nHost: {HOST}\r\nContent-Type: application/json\r\nUser-Agent: {BROWSER}\r\n"
            f"Origin: {PAGE_ORIGIN}\r\nContent-Length: {len(payload)}\r\nX-Forwarded-For: {client}\r\n\r\n"
            ).encode() + payload


def client_address(rng: random.Random) -> str:
    """A loopback address standing for one of 60,000 clients (a header value only; nothing is sent there)."""
    return f"127.{rng.randrange(1, 250)}.{rng.randrange(0, 250)}.{rng.randrange(1, 250)}"


@dataclass
class Phase:
    """What one measurement saw: ``completed`` answers counted (after any warm-up), ``sent`` every request sent."""

    completed: int = 0
    sent: int = 0
    seconds: float = 0.0
    statuses: Counter[int] = field(default_factory=Counter)
    latencies_ms: list[float] = field(default_factory=list)

    @property
    def rate(self) -> float:
        return self.completed / self.seconds if self.seconds else 0.0

    def percentile(self, fraction: float) -> float:
        ordered = sorted(self.latencies_ms)
        return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] if ordered else float("nan")


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time the process and its descendants (the server's workers and their SQLite writer
    processes), all their threads, have used so far (Linux ``/proc``)."""
    parents, ticks = {}, {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # the process ended meanwhile
            continue
        parents[int(stat.parent.name)] = int(fields[1])
        ticks[int(stat.parent.name)] = int(fields[11]) + int(fields[12])

    def descends(process: int) -> bool:
        while process > 1:
            if process == pid:
                return True
            process = parents.get(process, 0)
        return False

    return sum(used for process, used in ticks.items() if descends(process)) / os.sysconf("SC_CLK_TCK")


def reference_loop_ms() -> float:
    """The fastest of three timings of a fixed pure-Python loop on this machine, in milliseconds: how fast the
    machine runs Python, which bounds everything else here."""
    timings = []
    for _ in range(3):
        start = time.perf_counter()
        total = 0
        for number in range(REFERENCE_LOOP):
            total += number
        timings.append((time.perf_counter() - start) * 1000)
    return min(timings)


@dataclass
class Measured:
    """One endpoint's figures: its best closed-loop round, the server's CPU per request over the rounds, the open
    loop at the set rate, and at half the endpoint's maximum, with the ceiling's open loop at that same rate (none
    for the ceiling itself)."""

    closed: Phase
    cpu_ms: float
    opened: Phase
    half: Phase
    ceiling_at_half: Phase | None


async def closed_loop(port: int, next_request: Callable[[], bytes], seconds: float) -> Phase:
    """``CONNECTIONS`` clients each sending as fast as answers come; counts only after the warm-up."""
    phase = Phase()
    connections = [await Connection.open(port) for _ in range(CONNECTIONS)]
    start = time.perf_counter()
    measure_from, end = start + WARMUP_SECONDS, start + WARMUP_SECONDS + seconds
    sent = 0

    async def client(connection: Connection) -> None:
        nonlocal sent
        while time.perf_counter() < end and sent < MAX_REQUESTS_PER_PHASE:
            sent += 1
            status, _ = await connection.exchange(next_request())
            if time.perf_counter() >= measure_from:
                phase.completed += 1
                phase.statuses[status] += 1

    await asyncio.gather(*(client(connection) for connection in connections))
    phase.seconds = min(time.perf_counter(), end) - measure_from
    phase.sent = sent
    for connection in connections:
        connection.close()
    return phase


async def open_loop(port: int, next_request: Callable[[], bytes], seconds: float, rate: int) -> Phase:
    """Requests scheduled at ``rate`` per second for ``seconds``; latency from each one's scheduled time."""
    phase = Phase(seconds=seconds)
    connections = [await Connection.open(port) for _ in range(CONNECTIONS)]
    queue: asyncio.Queue[float | None] = asyncio.Queue()
    total = min(int(rate * seconds), MAX_REQUESTS_PER_PHASE)
    start = time.perf_counter() + 0.05

    async def schedule() -> None:
        for number in range(total):
            due = start + number / rate
            delay = due - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            queue.put_nowait(due)
        for _ in connections:
            queue.put_nowait(None)

    async def client(connection: Connection) -> None:
        while (due := await queue.get()) is not None:
            status, _ = await connection.exchange(next_request())
            phase.latencies_ms.append((time.perf_counter() - due) * 1000)
            phase.completed += 1
            phase.statuses[status] += 1

    await asyncio.gather(schedule(), *(client(connection) for connection in connections))
    for connection in connections:
        connection.close()
    return phase


# Distinct viewer ids the served tokens carry (the embed sends one unless Do-Not-Track), so tracking writes
# reach and frequency counts as in real traffic.
VIEWERS = 5000


def consent_signals(rng: random.Random) -> dict[str, str]:
    """The consent parameters a page with a consent platform sends with serve and track."""
    tc_string = TC_REFUSED if rng.random() < CONSENT_REFUSED else TC_GIVEN
    return {"gdpr": "1", "gdprConsent": tc_string, "gpp": GPP_USNAT, "gppSid": "7"}


class TrackMix:
    """Tracking requests in the proportions of real traffic, from tokens the server really issued."""

    def __init__(self, site_id: str, ads: list[dict], rng: random.Random, consent: bool = True) -> None:
        self.site_id, self.ads, self.rng, self.consent = site_id, ads, rng, consent
        self.used = 0
        self.impressed: list[dict] = []

    def __call__(self) -> bytes:
        roll = self.rng.random()
        if self.impressed and roll < 0.10:
            return self._send(self.rng.choice(self.impressed), "CLICK")
        if self.impressed and roll < 0.30:
            return self._send(self.rng.choice(self.impressed), "IMPRESSION")
        ad = self.ads[self.used % len(self.ads)]
        self.used += 1
        event = {"ad": ad, "fingerprint": f"bench-{self.used:08d}-{self.rng.getrandbits(32):08x}"}
        self.impressed.append(event)
        return self._send(event, "IMPRESSION")

    def _send(self, event: dict, kind: str) -> bytes:
        ad = event["ad"]
        body = {"type": kind, "campaignId": ad["campaignId"], "adId": ad["id"], "siteId": self.site_id,
                "fingerprint": event["fingerprint"], "rendered": True, "viewportVisible": True, "renderTime": 42,
                "timestamp": int(time.time() * 1000), "pageUrl": "http://127.0.0.1/article",
                "trackingToken": ad["trackingToken"]}
        if self.consent:
            body.update(consent_signals(self.rng), gdpr=1)
        return post("/api/track", body, ad["client"])  # from the client the ad was served to


async def prepare_tokens(port: int, site_id: str, count: int, rng: random.Random) -> list[dict]:
    """Ads served for the tracking phase (as pages would have received them), each with the client it went to."""
    ads: list[dict] = []
    connections = [await Connection.open(port) for _ in range(16)]

    async def client(connection: Connection) -> None:
        while len(ads) < count:
            size, address = rng.choice(SIZES), client_address(rng)
            status, body = await connection.exchange(
                get(f"/api/serve?siteId={site_id}&size={size}&placement=bench"
                    f"&viewer=bench-{rng.randrange(VIEWERS)}", address))
            answer = json.loads(body)
            if status != 200 or answer.get("kind") != "BANNER":
                raise RuntimeError(f"serve answered {status} {answer}")
            ads.append({**answer["ad"], "client": address})

    await asyncio.gather(*(client(connection) for connection in connections))
    for connection in connections:
        connection.close()
    return ads


async def measure(port: int, server_pid: int, site_id: str, seconds: float, rate: int,
                  passes: list[str] | None = None, consent: bool = True) -> dict[str, Measured]:
    rng = random.Random(2026)
    signals = [urlencode(consent_signals(rng)) for _ in range(64)] if consent else [""]

    def ceiling() -> bytes:
        return get("/bench/ceiling", client_address(rng))

    def serve() -> bytes:
        audience = f"&audience={rng.choice(passes)}" if passes and rng.random() < 0.5 else ""
        page = rng.choice(signals)
        return get(f"/api/serve?siteId={site_id}&size={rng.choice(SIZES)}&placement=bench{audience}"
                   f"{'&' if page else ''}{page}", client_address(rng))

    ads = await prepare_tokens(port, site_id, TOKENS_TO_PREPARE, rng)
    await asyncio.sleep(1.2)  # every prepared ad has now been "in view" for more than a second
    makers = {"ceiling": ceiling, "serve": serve, "track": TrackMix(site_id, ads, rng, consent)}
    best: dict[str, Phase] = {}
    cpu_used, sent = Counter[str](), Counter[str]()
    for _ in range(ROUNDS):
        for name, make in makers.items():
            cpu = cpu_seconds(server_pid)
            phase = await closed_loop(port, make, seconds / ROUNDS)
            cpu_used[name] += cpu_seconds(server_pid) - cpu
            sent[name] += phase.sent
            if name not in best or phase.rate > best[name].rate:
                best[name] = phase
    results = {}
    for name, make in makers.items():
        half_rate = max(1, int(best[name].rate / 2))
        results[name] = Measured(
            best[name], cpu_used[name] * 1000 / max(sent[name], 1), await open_loop(port, make, seconds, rate),
            await open_loop(port, make, seconds, half_rate),
            None if name == "ceiling" else await open_loop(port, ceiling, seconds, half_rate))
    return results


def report(results: dict[str, Measured], rate: int) -> str:
    ceiling = results["ceiling"].closed.rate
    labels = {"ceiling": "GET /bench/ceiling", "serve": "GET /api/serve", "track": "POST /api/track"}
    lines = [f"| endpoint | req/s at {CONNECTIONS} connections | vs ceiling | server CPU per request | "
             f"p50 / p99 at {rate} req/s (target p99 < {P99_TARGET_MS:g} ms) | at half its maximum: p99, the "
             f"ceiling's p99 at that rate, ratio (target ≤ {TAIL_RATIO_TARGET:g} times and < {P99_TARGET_MS:g} ms) | "
             "statuses |", "|---|---|---|---|---|---|---|"]
    for name, measured in results.items():
        closed, opened, half, beside = measured.closed, measured.opened, measured.half, measured.ceiling_at_half
        ratio = closed.rate / ceiling if ceiling else 0.0
        target = f" (target {TARGETS[name]:.0%})" if name in TARGETS else ""
        tail = f"{half.percentile(0.99):.1f} ms at {half.rate:,.0f} req/s"
        if beside is not None:
            tail += f", {beside.percentile(0.99):.1f} ms, {half.percentile(0.99) / beside.percentile(0.99):.1f} times"
        statuses = ", ".join(f"{status}: {count}" for status, count in
                             sorted((closed.statuses + opened.statuses + half.statuses).items()))
        lines.append(f"| {labels[name]} | {closed.rate:,.0f} | {ratio:.0%}{target} | {measured.cpu_ms:.2f} ms | "
                     f"{opened.percentile(0.5):.1f} / {opened.percentile(0.99):.1f} ms | {tail} | {statuses} |")
    return "\n".join(lines)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind((HOST, 0))
        return probe.getsockname()[1]


def adnet_command(*args: str) -> list[str]:
    return [str(Path(sys.executable).with_name("adnet")), *args]


async def wait_ready(port: int, server: subprocess.Popen, within: float = 90.0) -> None:
    deadline = time.perf_counter() + within
    while time.perf_counter() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"the server exited with status {server.returncode}")
        with contextlib.suppress(OSError, asyncio.IncompleteReadError):
            connection = await Connection.open(port)
            status, _ = await connection.exchange(get("/bench/ceiling", "127.0.0.1"))
            connection.close()
            if status == 200:
                return
        await asyncio.sleep(0.25)
    raise RuntimeError("the server did not answer in time")


def prepare(data_dir: Path, database_url: str) -> tuple[dict[str, str], dict]:
    """The environment ``adnet serve`` runs with on ``data_dir`` and a free loopback port (development secrets and
    chain, one trusted proxy, the public rate limit far above the load), with the migrations applied and the demo
    data loaded; and what ``adnet demo --json`` described."""
    port = free_port()
    env = {**os.environ, "ADNET_ENV": "development", "ADNET_DATA_DIR": str(data_dir),
           "ADNET_DATABASE_URL": database_url, "ADNET_HOST": HOST, "ADNET_PORT": str(port),
           "ADNET_PUBLIC_URL": f"http://{HOST}:{port}", "ADNET_TRUSTED_PROXIES": "1",
           "ADNET_RATE_LIMIT_PUBLIC": "100000000/60", "ADNET_DRAIN_SECONDS": "0"}  # no balancer to wait for
    env.pop("ADNET_CHAIN_RPC_URL", None)
    subprocess.run(adnet_command("migrate"), env=env, cwd=ROOT, check=True, timeout=120,  # noqa: S603
                   stdout=subprocess.DEVNULL)
    demo = subprocess.run(adnet_command("demo", "--bare", "--json"),  # noqa: S603
                          env=env, cwd=ROOT, check=True, timeout=300, capture_output=True, text=True)
    return env, json.loads(demo.stdout)


def start_server(env: dict[str, str], workers: int = 1) -> subprocess.Popen:
    """``bench/server.py`` with ``workers`` worker processes in the environment of ``prepare``, once it answers."""
    server = subprocess.Popen(  # noqa: S603 - our own module, fixed arguments
        [sys.executable, "-m", "bench.server", "--port", env["ADNET_PORT"], "--workers", str(workers)], env=env,
        cwd=ROOT)
    try:
        uvloop.run(wait_ready(int(env["ADNET_PORT"]), server))
    except BaseException:
        stop(server)
        raise
    return server


def stop(server: subprocess.Popen) -> None:
    if server.poll() is None:
        server.send_signal(signal.SIGINT)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def add_database_arguments(parser: argparse.ArgumentParser) -> None:
    """The options that choose the benchmark's database (shared by ``bench.tasks``)."""
    parser.add_argument("--synchronous", choices=("FULL", "NORMAL"), default="FULL",
                        help="SQLite synchronous mode: FULL syncs every commit to disk (the default, durable "
                             "against power loss); NORMAL syncs at WAL checkpoints (durable against process crashes)")
    parser.add_argument("--database-url", default="",
                        help="postgres://user:password@127.0.0.1:5432/NAME to bench PostgreSQL instead of a SQLite "
                             "file; NAME is dropped and created again")


def fresh_database(args: argparse.Namespace, data_dir: Path) -> tuple[str, str]:
    """The database URL the options name, made empty, and how the header describes it."""
    if args.database_url.startswith(("postgres://", "postgresql://")):
        asyncio.run(db.recreate_postgres(args.database_url))
        return args.database_url, "PostgreSQL"
    return (f"sqlite://{data_dir / 'bench.sqlite3'}?synchronous={args.synchronous}",
            f"SQLite file database (synchronous={args.synchronous})")


def main() -> int:
    parser = argparse.ArgumentParser(description="Benchmark adnet's serve and track endpoints on this machine.")
    parser.add_argument("--seconds", type=float, default=5.0,
                        help="length of each open-loop phase and of the closed-loop rounds together (max 30)")
    parser.add_argument("--rate", type=int, default=OPEN_LOOP_RATE, help="open-loop requests per second")
    parser.add_argument("--workers", type=int, default=1, help="worker processes of adnet serve (1-32)")
    parser.add_argument("--wallet-audience", action="store_true",
                        help="give a demo campaign a wallet audience; half the serves carry a proven wallet's pass")
    parser.add_argument("--without-consent", action="store_true",
                        help="send no consent signals (TC and GPP strings), as pages without a consent platform")
    add_database_arguments(parser)
    parser.add_argument("--keep", action="store_true", help="keep the data directory and print its path")
    args = parser.parse_args()
    seconds = min(max(args.seconds, 1.0), 30.0)
    workers = min(max(args.workers, 1), 32)
    data_dir = Path(tempfile.mkdtemp(prefix="adnet-bench-"))
    server = None
    try:
        database_url, database = fresh_database(args, data_dir)
        env, demo = prepare(data_dir, database_url)
        passes = asyncio.run(add_wallet_audience(env, demo["campaignIds"][-1])) if args.wallet_audience else None
        server = start_server(env, workers)
        results = uvloop.run(measure(int(env["ADNET_PORT"]), server.pid, demo["siteId"], seconds, args.rate,
                                     passes, consent=not args.without_consent))
    finally:
        if server is not None:
            stop(server)
        if args.keep:
            print(f"data directory: {data_dir}")
        else:
            shutil.rmtree(data_dir, ignore_errors=True)
    print(f"\nadnet benchmark: {workers} worker{'s' if workers > 1 else ''}, {database}, {os.cpu_count()} "
          f"cores shared with the load generator, {seconds:g} s per phase; this machine runs the reference loop "
          f"({REFERENCE_LOOP:,} additions in Python) in {reference_loop_ms():.0f} ms\n")
    print(report(results, args.rate))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
