"""A handler gets the running services (``run``) and the request's instant (``now``) from the route decorator that
calls it when, and only when, it declares them (``web.context.provider``), through the app's real request path."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from quart import Blueprint, jsonify

from adnet.core.clock import FrozenClock
from adnet.core.inputs import Command
from adnet.services import Services
from api.http import idempotent, with_body, with_query
from web.context import injected


class CountingClock(FrozenClock):
    """A frozen clock that counts its reads and moves one second after each, so every read is a new instant."""

    def __init__(self) -> None:
        super().__init__(datetime(2026, 3, 1, tzinfo=UTC))
        self.reads = 0

    def now(self) -> datetime:
        self.reads += 1
        moment = self._now
        self._now += timedelta(seconds=1)
        return moment

    def peek(self) -> datetime:
        """The instant the next read gives, without reading."""
        return self._now


class Probe(Command):
    word: str = "x"


@pytest.fixture
def clock() -> CountingClock:
    return CountingClock()


@pytest.fixture
def probed(own_app, clock: CountingClock):
    """The app with test routes whose handlers declare ``run``, ``now``, both or neither; each answers what it got
    and how many times the clock had been read when it ran."""
    probes = Blueprint("injection_probes", __name__)

    def seen(**given: Any) -> Any:
        run = given.get("run")
        now = given.get("now")
        return jsonify({"reads": clock.reads, "now": now.isoformat() if now else None,
                        "run": run is own_app.extensions["adnet"] if run else None})

    @probes.post("/api/test-probe/body")
    @with_body(Probe)
    async def body_both(data: Probe, run: Services, now: datetime) -> Any:
        return seen(run=run, now=now)

    @probes.post("/api/test-probe/body-none")
    @with_body(Probe)
    async def body_none(data: Probe) -> Any:
        return seen()

    @probes.get("/api/test-probe/query")
    @with_query(Probe)
    async def query_now(query_args: Probe, now: datetime) -> Any:
        return seen(now=now)

    @probes.post("/api/test-probe/stacked")
    @idempotent
    @with_body(Probe)
    async def stacked(data: Probe, idempotency_key: str | None, run: Services, now: datetime) -> Any:
        return seen(run=run, now=now)

    @probes.get("/api/test-probe/plain-run")
    @injected
    async def plain_run(run: Services) -> Any:
        return seen(run=run)

    @probes.get("/api/test-probe/plain-now/<item>")
    @injected
    async def plain_now(item: str, now: datetime) -> Any:
        return seen(now=now)

    @probes.get("/api/test-probe/plain-none")
    @injected
    async def plain_none() -> Any:
        return seen()

    own_app.register_blueprint(probes)
    return own_app


async def _reads_during(clock: CountingClock, send) -> tuple[int, dict[str, Any]]:
    """How many times the clock was read from the request's start until its handler ran, and the handler's answer."""
    before = clock.reads
    response = await send()
    assert response.status_code == 200, await response.get_data(as_text=True)
    body = await response.get_json()
    return body["reads"] - before, body


async def test_a_handler_that_declares_run_and_now_gets_the_services_and_one_reading_of_their_clock(probed, clock):
    client = probed.test_client()
    with_now, body = await _reads_during(clock, lambda: client.post("/api/test-probe/body", json={"word": "a"}))
    without, plain = await _reads_during(clock, lambda: client.post("/api/test-probe/body-none", json={}))
    assert body["run"] is True
    assert with_now == without + 1
    assert plain == {"reads": plain["reads"], "now": None, "run": None}


async def test_now_is_the_app_clocks_instant_at_the_request(probed, clock):
    client = probed.test_client()
    start = clock.peek()
    _, first = await _reads_during(clock, lambda: client.get("/api/test-probe/query?word=b"))
    middle = clock.peek()
    _, second = await _reads_during(clock, lambda: client.get("/api/test-probe/query"))
    assert start <= datetime.fromisoformat(first["now"]) < middle <= datetime.fromisoformat(second["now"])
    assert first["run"] is None


async def test_stacked_decorators_provide_once(probed, clock):
    client = probed.test_client()
    stacked, body = await _reads_during(clock, lambda: client.post("/api/test-probe/stacked", json={},
                                                                   headers={"Idempotency-Key": "k-1"}))
    single, _ = await _reads_during(clock, lambda: client.post("/api/test-probe/body", json={}))
    assert body["run"] is True and body["now"] is not None
    assert stacked == single


async def test_injected_gives_a_plain_handler_what_it_declares_beside_the_route_arguments(probed, clock):
    client = probed.test_client()
    run_only, ran = await _reads_during(clock, lambda: client.get("/api/test-probe/plain-run"))
    now_only, timed = await _reads_during(clock, lambda: client.get("/api/test-probe/plain-now/item-1"))
    nothing, bare = await _reads_during(clock, lambda: client.get("/api/test-probe/plain-none"))
    assert ran["run"] is True and ran["now"] is None
    assert timed["now"] is not None and timed["run"] is None
    assert bare["run"] is None and bare["now"] is None
    assert run_only == nothing and now_only == nothing + 1


def test_injected_leaves_a_handler_that_declares_neither_as_it_is():
    async def handler(item: str) -> str:
        return item

    assert injected(handler) is handler
