"""Chain calls on a budget: with a node that accepts connections and never answers (a tarpit), or answers too
slowly, every request that needs the chain answers a prompt 503 ``chain_unavailable`` (within its call's budget,
``ADNET_CHAIN_TIMEOUT_SECONDS``), the health job sees it at its next check, a check that hangs is cut by its own
timeout, and a last check older than two intervals no longer counts as ok."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import AsyncIterator, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import aiohttp
import pytest

from adnet.chain.client import ChainClient
from adnet.chain.service import LOGS_TIMEOUT_SECONDS, http_web3
from adnet.config import DEFAULT_CHAIN_TIMEOUT_SECONDS, ConfigError, load_settings
from adnet.demo import TRANSFER_TOPIC
from adnet.jobs.health import CHECK_TIMEOUT_SECONDS, HEALTH_SECONDS, Health
from adnet.tasks.models import TaskKind
from tests.api.test_tasks import complete
from tests.auth_helpers import bearer, sign_in, signed_message
from tests.chain.helpers import G, user
from tests.factories import make_publisher, make_site, make_task
from tests.ports import free_port

BUDGET = 1.0
# What a loaded test machine may add to a budget before the answer is out.
MARGIN = 2.0


@pytest.fixture
def tarpit() -> Iterator[str]:
    """A node that accepts TCP connections (the kernel completes them) and never reads or answers, as a stopped
    process does."""
    with socket.socket() as listening:
        listening.bind(("127.0.0.1", 0))
        listening.listen(64)
        yield f"http://127.0.0.1:{listening.getsockname()[1]}"


@pytest.fixture
def slow_node() -> Iterator[str]:
    """A node that reads each request and answers it only after far longer than any budget."""
    released = threading.Event()

    class Slow(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            released.wait(30)
            body = b'{"jsonrpc": "2.0", "id": 1, "result": "0x1"}'
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Slow)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    released.set()
    server.shutdown()
    server.server_close()


@pytest.fixture(params=["tarpit", "slow_node"])
def stuck_node(request: pytest.FixtureRequest) -> str:
    return request.getfixturevalue(request.param)


def client_of(url: str, services, *, timeout: float = BUDGET) -> ChainClient:
    """A client of ``url`` bound to the app's deployment, every call on a budget of ``timeout`` seconds."""
    bound = services.chain
    return ChainClient(http_web3(url, timeout), bound.deployment, signer=bound.signer,
                       claim_deadline_seconds=bound.claim_deadline_seconds, confirmations=0, rpc_url=url,
                       timeout=timeout)


@pytest.fixture
async def stuck_chain(services, stuck_node: str) -> AsyncIterator[ChainClient]:
    """The app's chain replaced, for its requests and its health job, by a node that does not answer in time."""
    chain = client_of(stuck_node, services)
    original = services.chain
    services.chain = services.health.chain = chain
    yield chain
    services.chain = services.health.chain = original
    await chain.close()


async def timed(call):
    began = time.monotonic()
    response = await call
    return response, time.monotonic() - began


async def assert_prompt_503(call) -> None:
    response, took = await timed(call)
    body = await response.get_json()
    assert response.status_code == 503 and body["error"] == "chain_unavailable", body
    assert "Retry-After" in response.headers
    assert took < BUDGET + MARGIN, took


async def test_an_onchain_task_completion_answers_503_promptly(client, stuck_chain):
    task = await make_task(kind=TaskKind.ONCHAIN_EVENT, pool=5 * G,
                           config={"contract": stuck_chain.gs_address, "eventTopic": TRANSFER_TOPIC})
    (status, body), took = await timed(complete(client, task, user(1).address, txHash="0x" + "ab" * 32))
    assert status == 503 and body["error"] == "chain_unavailable", body
    assert took < BUDGET + MARGIN, took


async def test_a_top_up_answers_503_promptly(client, stuck_chain):
    account = user(2)
    token = bearer(await sign_in(client, account))  # an ordinary account signs in without the chain
    site = await make_site(await make_publisher(account.address.lower()))
    await assert_prompt_503(client.post("/api/publishers/topup", headers=token, json={
        "wallet": account.address, "siteId": site.id, "txHash": "0x" + "cd" * 32}))
    await assert_prompt_503(client.post("/api/publishers/topup/prepare", headers=token, json={
        "wallet": account.address, "siteId": site.id, "amount": "1"}))


async def test_a_contract_wallet_sign_in_answers_503_promptly(client, stuck_chain):
    message, signature = await signed_message(client, user(1), address=user(2).address)
    await assert_prompt_503(client.post("/api/auth/verify", json={"message": message, "signature": signature}))


async def test_the_dev_rpc_relay_answers_503_promptly(client, stuck_chain):
    response, took = await timed(client.post("/dev/rpc", json={"jsonrpc": "2.0", "id": 1, "method": "eth_blockNumber",
                                                               "params": []}))
    assert response.status_code == 503 and (await response.get_json())["error"]["code"] == -32603
    assert took < BUDGET + MARGIN, took


async def test_health_sees_a_stuck_node_at_its_next_check(client, services, stuck_chain):
    await services.jobs.run("health")  # the check of a healthy-looking start is replaced by this one
    began = time.monotonic()
    await services.jobs.run("health")
    assert time.monotonic() - began < BUDGET + MARGIN
    body = await (await client.get("/healthz")).get_json()
    assert "chain_unreachable" in body["reasons"]
    assert body["chain"]["status"] == "unavailable: TimeoutError"


async def test_a_check_that_hangs_is_cut_by_its_own_timeout(services, clock, tarpit):
    patient = client_of(tarpit, services, timeout=60)  # its calls alone would wait a minute
    health = Health(patient, clock, check_timeout=0.5)
    try:
        check, took = await timed(health.check_chain())
    finally:
        await patient.close()
    assert check.reasons == ("chain_unreachable",) and check.node == {"status": "unavailable: TimeoutError"}
    assert took < 0.5 + MARGIN
    assert CHECK_TIMEOUT_SECONDS < HEALTH_SECONDS  # a check ends before the next one is due


async def test_a_check_older_than_two_intervals_is_not_ok(services, clock):
    health = Health(services.chain, clock, interval=HEALTH_SECONDS)
    checked = await health.check_chain()
    assert checked.reasons == ()
    clock.advance(seconds=2 * HEALTH_SECONDS)
    assert (await health.report()).ok
    clock.advance(seconds=1)
    report = await health.report()
    assert report.reasons == ["chain_unreachable"]
    assert report.chain.node == {"status": "unavailable: check overdue"}
    assert report.chain.checked_at == checked.checked_at
    await health.check_chain()
    assert (await health.report()).ok


async def test_each_call_returns_or_raises_within_its_budget(tarpit):
    hung, refused = http_web3(tarpit, 0.5), http_web3(f"http://127.0.0.1:{free_port()}", 0.5)
    try:
        began = time.monotonic()
        with pytest.raises(TimeoutError):
            await hung.eth.chain_id
        assert time.monotonic() - began < 0.5 + MARGIN
        began = time.monotonic()
        with pytest.raises(aiohttp.ClientConnectionError):  # refused: retried quickly, then given up
            await refused.eth.chain_id
        assert time.monotonic() - began < 0.5 + MARGIN
    finally:
        await hung.provider.disconnect()
        await refused.provider.disconnect()
    assert hung.provider.budget("eth_call") == 0.5
    assert hung.provider.budget("eth_getLogs") == LOGS_TIMEOUT_SECONDS  # the watcher's, off the request path


def test_the_budget_is_read_from_the_environment(tmp_path):
    assert load_settings({"ADNET_DATA_DIR": str(tmp_path)}).chain_timeout_seconds == DEFAULT_CHAIN_TIMEOUT_SECONDS
    assert load_settings({"ADNET_DATA_DIR": str(tmp_path),
                          "ADNET_CHAIN_TIMEOUT_SECONDS": "5"}).chain_timeout_seconds == 5
    for wrong in ("0", "61", "2.5"):
        with pytest.raises(ConfigError, match="ADNET_CHAIN_TIMEOUT_SECONDS"):
            load_settings({"ADNET_DATA_DIR": str(tmp_path), "ADNET_CHAIN_TIMEOUT_SECONDS": wrong})
