"""A rolling restart under load cuts no request: two hosts (two ``adnet serve --workers 2`` on one database) behind a
small round-robin balancer that takes a host out of rotation while its readiness fails, steady serve and track
traffic on keep-alive connections, and one host stopped with SIGTERM and started again.

Proven: no request failed (no reset or dropped connection, no timeout, nothing but 200 and 201), the stopped host
failed readiness with ``draining`` before it went away, answered ``Connection: close`` while it drained, and served
again once back; every event answered 201 is stored exactly once; ``adnet audit`` passes. Without the drain,
uvicorn closes idle keep-alive connections at once on SIGTERM, and the requests a client was writing on them are
lost (``adnet.core.drain``).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import signal
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field

import httpx
import pytest

from adnet.delivery.models import TrackingEvent
from tests.ports import free_port
from tests.reliability.conftest import (
    STOP_TIMEOUT,
    AdnetServer,
    books,
    browser_headers,
    http_client,
    impression,
    running_server,
    scaled,
)

READINESS = "/readyz"  # what the balancer probes
DRAIN_SECONDS = 3
PROBE_SECONDS = 0.25  # well inside the drain, as a balancer's interval times its threshold must be
PROBE_TIMEOUT = 3.0  # a balancer's: a busy machine may answer a probe late, not fail it
UNHEALTHY_THRESHOLD = 2  # failed probes in a row that take a host out of rotation, as a balancer counts them
STEADY_SECONDS = scaled(ci=3, full=20)  # of load before the restart, and again once the host is back
USERS = scaled(ci=6, full=16)
PAUSE_SECONDS = 0.02  # between one user's requests: a steady load, not the machine's most
BACK_TIMEOUT = 120.0
SIGNAL_PASSED_SECONDS = 2.0  # an answer is stamped when the busy test loop reads it, maybe late


@dataclass
class Host:
    """One host as the balancer sees it: its server, the keep-alive connections to it, and whether it is in
    rotation."""

    name: str
    server: AdnetServer
    client: httpx.AsyncClient
    in_rotation: bool = True
    probes: list[tuple[float, int | None, tuple[str, ...]]] = field(default_factory=list)


@dataclass
class Balancer:
    """Round robin over the hosts in rotation; each host's readiness is probed every ``PROBE_SECONDS`` on a
    connection of its own. A probe answered 200 puts a host in rotation; ``UNHEALTHY_THRESHOLD`` failed in a row
    take it out, so one probe slowed past its timeout on a busy machine does not."""

    hosts: list[Host]
    turns: Iterator[int] = field(default_factory=itertools.count)

    def pick(self) -> Host:
        ready = [host for host in self.hosts if host.in_rotation]
        assert ready, f"no host in rotation; last probes {[(host.name, host.probes[-3:]) for host in self.hosts]}"
        return ready[next(self.turns) % len(ready)]

    async def probe_forever(self) -> None:
        while True:
            await asyncio.gather(*(self.probe(host) for host in self.hosts))
            await asyncio.sleep(PROBE_SECONDS)

    async def probe(self, host: Host) -> None:
        status: int | None = None
        reasons: tuple[str, ...] = ()
        with contextlib.suppress(httpx.HTTPError):
            async with httpx.AsyncClient(timeout=PROBE_TIMEOUT) as prober:
                response = await prober.get(f"{host.server.url}{READINESS}")
                status, reasons = response.status_code, tuple(response.json().get("reasons", ()))
        host.probes.append((time.monotonic(), status, reasons))
        recent = [probe_status for _at, probe_status, _reasons in host.probes[-UNHEALTHY_THRESHOLD:]]
        if status == 200:
            host.in_rotation = True
        elif len(recent) == UNHEALTHY_THRESHOLD and 200 not in recent:
            host.in_rotation = False


@dataclass
class Traffic:
    """What the users saw: each answer as (host, request, status, Connection header, when), each failure, and the
    event ids answered 201 with their fingerprints."""

    answers: list[tuple[str, str, int, str | None, float]] = field(default_factory=list)
    failures: list[tuple[str, str, str]] = field(default_factory=list)
    recorded: dict[str, str] = field(default_factory=dict)

    def note(self, host: Host, request: str, response: httpx.Response) -> None:
        self.answers.append((host.name, request, response.status_code, response.headers.get("Connection"),
                             time.monotonic()))


async def user(number: int, balancer: Balancer, site_id: str, traffic: Traffic, stop: asyncio.Event) -> None:
    """A browser's traffic: a banner served, then its impression tracked, each request to the host the balancer
    picks, again and again until ``stop``."""
    client_ip = f"127.{100 + number}.0.1"
    for turn in itertools.count():
        if stop.is_set():
            return
        host = balancer.pick()
        try:
            served = await host.client.get("/api/serve", params={"siteId": site_id, "size": "300x250"},
                                           headers=browser_headers(client_ip))
            traffic.note(host, "serve", served)
            if served.status_code == 200 and served.json()["kind"] == "BANNER":
                body = impression(site_id, served.json()["ad"], f"fp-rolling-{number}-{turn}")
                host = balancer.pick()
                tracked = await host.client.post("/api/track", json=body, headers=browser_headers(client_ip))
                traffic.note(host, "track", tracked)
                if tracked.status_code == 201:
                    traffic.recorded[tracked.json()["eventId"]] = body["fingerprint"]
        except httpx.HTTPError as exc:
            traffic.failures.append((host.name, type(exc).__name__, str(exc)))
        await asyncio.sleep(PAUSE_SECONDS)


@pytest.fixture(scope="module")
def hosts(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[AdnetServer, AdnetServer]]:
    """Two servers on one database and one data directory (one development chain, one set of secrets), each
    draining ``DRAIN_SECONDS`` on SIGTERM. The first started the chain; the second is the one restarted, so the
    chain stays up throughout."""
    drain = {"ADNET_DRAIN_SECONDS": str(DRAIN_SECONDS)}
    data_dir = tmp_path_factory.mktemp("adnet-rolling")
    with running_server(data_dir, "rolling", extra_env=drain) as first:
        second = AdnetServer(data_dir=data_dir, port=free_port(), database_url=first.database_url,
                             extra_env=drain, log_name="server-b.log", demo=first.demo)
        try:
            second.start()
            yield first, second
        finally:
            second.stop()


def stop_with_sigterm(server: AdnetServer) -> float:
    """SIGTERM to the server's main process, as a service manager sends it; when it had exited."""
    assert server.process is not None
    server.process.send_signal(signal.SIGTERM)
    server.process.wait(timeout=STOP_TIMEOUT + DRAIN_SECONDS)
    stopped_at = time.monotonic()
    server.kill()  # the group is gone already; this reaps it
    return stopped_at


async def test_a_rolling_restart_of_one_of_two_hosts_under_load_cuts_no_request(
        hosts: tuple[AdnetServer, AdnetServer]):
    first, second = hosts
    traffic = Traffic()
    stop = asyncio.Event()
    async with http_client(first) as to_first, http_client(second) as to_second:
        balancer = Balancer([Host("a", first, to_first), Host("b", second, to_second)])
        probing = asyncio.create_task(balancer.probe_forever())
        users = [asyncio.create_task(user(number, balancer, first.site_id, traffic, stop)) for number in range(USERS)]
        try:
            await asyncio.sleep(STEADY_SECONDS)
            sigterm_at = time.monotonic()
            stopped_at = await asyncio.to_thread(stop_with_sigterm, second)
            await asyncio.to_thread(second.start)
            back_at = await wait_in_rotation(balancer.hosts[1])
            await asyncio.sleep(STEADY_SECONDS)
        finally:
            stop.set()
            await asyncio.wait_for(asyncio.gather(*users), timeout=60)
            probing.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await probing

    b = balancer.hosts[1]
    statuses = Counter((request, status) for _host, request, status, _connection, _at in traffic.answers)
    print(f"\nrolling restart: {statuses}; host b stopped {stopped_at - sigterm_at:.1f} s after SIGTERM, back in "
          f"rotation {back_at - sigterm_at:.1f} s after it; {len(traffic.recorded)} events recorded")
    assert traffic.failures == []
    assert set(statuses) <= {("serve", 200), ("track", 201)}, statuses
    assert stopped_at - sigterm_at >= DRAIN_SECONDS
    failed = [probe[1:] for probe in b.probes if sigterm_at <= probe[0] < back_at and probe[1] not in (200, None)]
    assert failed[0] == (503, ("draining",)), failed[:3]  # readiness failed first (not timed out), naming the drain
    during = [(connection, at) for host, _request, _status, connection, at in traffic.answers
              if host == "b" and sigterm_at <= at <= stopped_at]
    assert ("close", ) in {(connection,) for connection, _at in during}  # clients were told to go elsewhere
    # uvicorn's supervisor passes SIGTERM on to its workers within half a second; from then on, every answer closes
    assert all(connection == "close" for connection, at in during if at > sigterm_at + SIGNAL_PASSED_SECONDS)
    assert any(host == "b" and at > back_at for host, *_answer, at in traffic.answers)  # serving again
    assert any(host == "a" and sigterm_at <= at < back_at for host, *_answer, at in traffic.answers)

    async with books(first):  # every event answered 201 stored, and none twice (each has a fingerprint of its own)
        stored = await TrackingEvent.filter(fingerprint__in=list(traffic.recorded.values())).values_list(
            "id", "fingerprint")
    assert sorted(stored) == sorted(traffic.recorded.items())
    first.audit()


async def wait_in_rotation(host: Host) -> float:
    """When the balancer put ``host`` back in rotation."""
    deadline = time.monotonic() + BACK_TIMEOUT
    while not host.in_rotation:
        assert time.monotonic() < deadline, f"host {host.name} not back in rotation within {BACK_TIMEOUT:.0f} s"
        await asyncio.sleep(0.05)
    return time.monotonic()
