"""Browser tests: headless Chromium (Debian's, driven by Playwright's sync API) against a real adnet server.

The server is the app ``adnet serve`` runs, under uvicorn, on a free port of 127.0.0.1, in a thread of the test
process with its own event loop, on a fresh SQLite file with the demo data loaded. It runs in test mode: the chain
is the in-memory development chain (the vault and tokens deployed, the development accounts funded), reached by
the browser through the app's ``/dev/rpc`` like any wallet would, and its blocks follow the server's clock. Being
in-process, a test can run a coroutine on the server's loop (``server.call``) to read the database or the chain, or
to change what is servable, and move the server's clock (``server.clock.advance``) instead of sleeping.

Test wallet: an EIP-1193 provider injected into every page (``add_init_script``) hands each request to Python
(``expose_function``), which signs with a development account's key (eth-account) and sends transactions to the
chain through ``/dev/rpc``.

These fixtures are synchronous and live in this directory only, so they stay out of the async tests' way; the
server lives for this package's tests and is stopped before the next package runs.
"""

from __future__ import annotations

import asyncio
import json
import random
import socket
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, TypeVar

import pytest
import uvicorn
from eth_account.messages import encode_defunct
from eth_account.signers.local import LocalAccount
from playwright.sync_api import Browser, BrowserContext, ConsoleMessage, Page, Playwright, expect, sync_playwright
from quart import current_app
from web3 import HTTPProvider, Web3

from adnet.accounts.models import Site
from adnet.app import create_app
from adnet.campaigns.models import Campaign, CampaignStatus
from adnet.chain.client import ChainClient
from adnet.core.clock import Clock
from adnet.core.ids import new_id
from adnet.core.wallets import dev_accounts
from adnet.demo import create_demo
from adnet.services import Services
from tests.conftest import make_settings, migrated_sqlite, rebuild_index
from tests.factories import make_site

T = TypeVar("T")
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run", "--disable-quic"]
CALL_TIMEOUT = 30
START_TIMEOUT = 60
# The wallet the browser uses: a funded development account that is neither the deployer, the demo advertiser
# nor the demo publisher.
WALLET_INDEX = 5
OPERATOR_INDEX = 8  # the live server's one operator, a funded development account no other test signs in with
ADVERTISER_ORIGIN = "https://example.com"


class ShiftedClock(Clock):
    """The wall clock plus an offset that tests move forward, so the server sees time pass without sleeping."""

    def __init__(self) -> None:
        self.offset = timedelta()

    def now(self) -> datetime:
        return datetime.now(UTC) + self.offset

    def advance(self, **delta: float) -> None:
        self.offset += timedelta(**delta)


@dataclass
class LiveServer:
    """A running adnet: its URL, the app, its loop (for ``call``), its clock and the demo data's ids."""

    url: str
    app: Any
    loop: asyncio.AbstractEventLoop
    clock: ShiftedClock
    demo: dict[str, Any] = field(default_factory=dict)

    def call(self, make: Callable[[], Awaitable[T]]) -> T:
        """Run ``make()`` on the server's loop inside the app's context and return its result."""
        async def in_app() -> T:
            async with self.app.app_context():
                return await make()

        return asyncio.run_coroutine_threadsafe(in_app(), self.loop).result(CALL_TIMEOUT)

    @property
    def services(self) -> Services:
        return self.app.extensions["adnet"]

    @property
    def chain(self) -> ChainClient:
        return self.services.chain


def free_socket() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    return sock


@pytest.fixture(scope="package")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """adnet serving on 127.0.0.1 with the demo data, for this package's tests."""
    data_dir: Path = tmp_path_factory.mktemp("browser-adnet")
    sock = free_socket()
    port = sock.getsockname()[1]
    database_url = migrated_sqlite(data_dir / "adnet.sqlite3")
    settings = make_settings(database_url, data_dir, ADNET_PUBLIC_URL=f"http://127.0.0.1:{port}",
                             ADNET_RATE_LIMIT_PUBLIC="100000/60", ADNET_RATE_LIMIT_ACCOUNT="100000/60",
                             ADNET_OPERATORS=dev_accounts()[OPERATOR_INDEX].address)
    clock = ShiftedClock()
    app = create_app(settings, clock=clock, rng=random.Random(10))
    loop = asyncio.new_event_loop()
    uvicorn_server = uvicorn.Server(uvicorn.Config(app, lifespan="on", log_level="warning", access_log=False))
    failure: list[BaseException] = []

    async def serve() -> None:
        await uvicorn_server.serve(sockets=[sock])

    def run() -> None:
        asyncio.set_event_loop(loop)
        try:
            loop.run_until_complete(serve())
        except BaseException as exc:  # reported to the fixture, which fails the tests that need it
            failure.append(exc)
        finally:
            loop.close()

    thread = threading.Thread(target=run, name="adnet-live-server", daemon=True)
    thread.start()
    deadline = time.monotonic() + START_TIMEOUT
    while not uvicorn_server.started and thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.02)
    if not uvicorn_server.started:
        raise RuntimeError(f"the adnet server did not start: {failure!r}")
    live = LiveServer(url=f"http://127.0.0.1:{port}", app=app, loop=loop, clock=clock)

    async def prepare() -> dict[str, Any]:
        summary = await create_demo(settings, live.services.chain.deployment, now=clock.now())
        # The publisher's pages (``PublisherSite``) are on ``localhost``: a verified site of its own publisher.
        summary["pageSiteId"] = (await make_site(domain="localhost", now=clock.now())).id
        await rebuild_index(app)
        return summary

    live.demo = live.call(prepare)
    try:
        yield live
    finally:
        uvicorn_server.should_exit = True
        thread.join(30)
        sock.close()


@pytest.fixture
def live_campaigns(server: LiveServer) -> Iterator[Callable[..., list[str]]]:
    """``live_campaigns(0, 2)`` leaves only those demo campaigns (by index) servable; all come back afterwards."""
    ids = server.demo["campaignIds"]

    def choose(*indexes: int) -> list[str]:
        chosen = [ids[index] for index in indexes]
        server.call(lambda: _set_statuses({cid: CampaignStatus.APPROVED if cid in chosen else CampaignStatus.PAUSED
                                           for cid in ids}))
        return chosen

    yield choose
    server.call(lambda: _set_statuses(dict.fromkeys(ids, CampaignStatus.APPROVED)))


async def retire_site(site_id: str) -> None:
    """Take a site a test made off the shared server as its owner's deletion does: its rows stay (the server may
    still write what it counted for it) and it leaves the serving index."""
    await Site.filter(id=site_id).update(deleted_at=datetime.now(UTC), active=False)
    await rebuild_index(current_app)


async def _set_statuses(statuses: dict[str, CampaignStatus]) -> None:
    for campaign_id, status in statuses.items():
        await Campaign.filter(id=campaign_id).update(status=status)
    await rebuild_index(current_app)


@pytest.fixture(scope="package")
def playwright() -> Iterator[Playwright]:
    with sync_playwright() as driver:
        yield driver


@pytest.fixture(scope="package")
def browser(playwright: Playwright) -> Iterator[Browser]:
    chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
    yield chromium
    chromium.close()


class TestWallet:
    """The Python half of the injected EIP-1193 provider: a development account that signs and sends."""

    def __init__(self, server: LiveServer, account: LocalAccount) -> None:
        self.account = account
        self.address = account.address.lower()
        self.w3 = Web3(HTTPProvider(f"{server.url}/dev/rpc"))
        self.requests: list[str] = []
        self.sent: list[str] = []

    def handle(self, method: str, params_json: str) -> str:
        self.requests.append(method)
        params = json.loads(params_json or "[]")
        try:
            return json.dumps({"result": self._answer(method, params)})
        except Exception as exc:  # the page sees a wallet error, as with a real wallet
            return json.dumps({"error": {"code": 4001 if isinstance(exc, PermissionError) else -32603,
                                         "message": str(exc)}})

    def _answer(self, method: str, params: list[Any]) -> Any:
        if method in ("eth_requestAccounts", "eth_accounts"):
            return [self.address]
        if method == "personal_sign":
            message, signer = params
            if signer.lower() != self.address:
                raise PermissionError("unknown account")
            return self.account.sign_message(encode_defunct(hexstr=message)).signature.to_0x_hex()
        if method == "wallet_switchEthereumChain":
            if int(params[0]["chainId"], 16) != self.w3.eth.chain_id:
                raise PermissionError("unknown chain")
            return None
        if method == "eth_sendTransaction":
            return self._send(params[0])
        return self.w3.provider.make_request(method, params).get("result")  # type: ignore[arg-type]

    def _send(self, request: dict[str, Any]) -> str:
        transaction = {
            "from": self.account.address, "to": Web3.to_checksum_address(request["to"]),
            "data": request.get("data", "0x"), "value": int(request.get("value", "0x0"), 16),
            "nonce": self.w3.eth.get_transaction_count(self.account.address, "pending"),
            "chainId": self.w3.eth.chain_id, "gasPrice": self.w3.eth.gas_price,
        }
        transaction["gas"] = self.w3.eth.estimate_gas(transaction)  # type: ignore[arg-type]
        signed = self.account.sign_transaction(transaction)
        tx_hash = self.w3.eth.send_raw_transaction(signed.raw_transaction).to_0x_hex()
        self.sent.append(tx_hash)
        return tx_hash


PROVIDER_SCRIPT = """
(() => {
  const request = ({ method, params }) => window.__adnetTestWallet(method, JSON.stringify(params || []))
    .then((text) => {
      const answer = JSON.parse(text);
      if (answer.error) { const error = new Error(answer.error.message); error.code = answer.error.code; throw error; }
      return answer.result;
    });
  window.ethereum = { isAdnetTestWallet: true, request, on() {}, removeListener() {} };
})();
"""
# Uses the SDK's command queue, as a publisher's inline code would, to keep what it reports.
EVENTS_SCRIPT = """
window.__adnetEvents = [];
window.adnet = window.adnet || [];
window.adnet.push((adnet) => {
  const names = ["serve", "empty", "render", "impression", "click", "complete", "claim", "redeem", "interaction"];
  for (const name of names) {
    adnet.on(name, (detail) => window.__adnetEvents.push({ name, detail: JSON.parse(JSON.stringify(
      detail, (key, value) => key === "slot" ? (value && value.id) : value)) }));
  }
});
"""


@dataclass
class Console:
    """What a page wrote to its console, and the exceptions it did not catch."""

    messages: list[ConsoleMessage] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)

    def errors(self) -> list[str]:
        return [message.text for message in self.messages if message.type in ("error", "warning")]

    def script_errors(self) -> list[str]:
        """Errors other than the browser's own note of a failed request (which any fetch of a 4xx or of an
        unreachable host produces, whatever the script does with the answer)."""
        return [text for text in self.errors() if not text.startswith("Failed to load resource")]


def watch_console(page: Page) -> Console:
    """Record what ``page`` writes to its console and the exceptions it does not catch."""
    console = Console()
    page.on("console", lambda message: console.messages.append(message))
    page.on("pageerror", lambda error: console.page_errors.append(str(error)))
    return console


@dataclass
class Visitor:
    """A fresh browser profile (its own storage, so its own fingerprint) with the test wallet injected."""

    context: BrowserContext
    page: Page
    wallet: TestWallet
    console: Console

    def events(self, name: str) -> list[dict[str, Any]]:
        return [event["detail"] for event in self.page.evaluate("window.__adnetEvents || []")
                if event["name"] == name]


@pytest.fixture
def visitor(browser: Browser, server: LiveServer) -> Iterator[Visitor]:
    # adnet refuses to bill headless browsers (a bot user agent): the visitor presents as the Chrome it is.
    context = browser.new_context(viewport={"width": 1280, "height": 720},
                                  user_agent=f"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
                                             f"Chrome/{browser.version} Safari/537.36")
    wallet = TestWallet(server, dev_accounts()[WALLET_INDEX])
    context.expose_function("__adnetTestWallet", wallet.handle)
    context.add_init_script(PROVIDER_SCRIPT)
    context.add_init_script(EVENTS_SCRIPT)
    # The advertisers' landing pages of the demo data: answered here, never fetched from the internet.
    context.route(f"{ADVERTISER_ORIGIN}/**", lambda route: route.fulfill(
        status=200, content_type="text/html", body="<!doctype html><title>Advertiser</title><p>Landing page</p>"))
    page = context.new_page()
    yield Visitor(context=context, page=page, wallet=wallet, console=watch_console(page))
    context.close()


@pytest.fixture
def open_portal(browser: Browser, server: LiveServer) -> Iterator[Callable[..., tuple[Page, Console]]]:
    """``open_portal(index, wallet_class=TestWallet, viewport=None)``: a fresh browser profile on the portal's
    sign-in page, whose wallet (an instance of ``wallet_class``; None: no wallet at all) is development account
    ``index``."""
    contexts: list[BrowserContext] = []

    def open_page(index: int, wallet_class: type[TestWallet] | None = TestWallet,
                  viewport: dict[str, int] | None = None) -> tuple[Page, Console]:
        context = browser.new_context(viewport=viewport or {"width": 1280, "height": 900})
        contexts.append(context)
        if wallet_class is not None:
            context.expose_function("__adnetTestWallet", wallet_class(server, dev_accounts()[index]).handle)
            context.add_init_script(PROVIDER_SCRIPT)
        page = context.new_page()
        page.set_default_timeout(15_000)
        console = watch_console(page)
        page.goto(f"{server.url}/portal/signin")
        return page, console

    yield open_page
    for context in contexts:
        context.close()


# axe-core 4.14.1 from the npm registry (``npm pack axe-core@4.14.1``, its dist/axe.min.js), for the tests only.
AXE_SCRIPT = Path(__file__).resolve().parent / "fixtures" / "axe-4.14.1.min.js"


def axe_violations(page: Page, context: str | None = None, rules: list[str] | None = None) -> list[dict[str, Any]]:
    """axe-core's violations on ``page`` as it is now, within the element ``context`` selects (the whole document
    without one) and of ``rules`` only when given: each ``{"id", "impact", "targets"}``, a target an element's
    selector. axe runs through the DevTools protocol, which the page's CSP does not govern."""
    page.evaluate(AXE_SCRIPT.read_text())
    return page.evaluate("""([context, rules]) => axe.run(context ? document.querySelector(context) : document,
        rules ? { resultTypes: ["violations"], runOnly: rules } : { resultTypes: ["violations"] })
        .then((result) => result.violations.map((violation) => ({ id: violation.id, impact: violation.impact,
          targets: violation.nodes.map((node) => node.target.join(" ")) })))""", [context, rules])


def serious_violations(page: Page, context: str | None = None) -> list[str]:
    """axe-core's serious and critical violations on ``page`` (within ``context``, a selector, when given) as
    "rule: element" lines."""
    return [f"{violation['id']}: {target}" for violation in axe_violations(page, context)
            if violation["impact"] in ("serious", "critical") for target in violation["targets"]]


def sideways_overflow(page: Page) -> int:
    """How many CSS pixels the page is wider than its viewport (0 when it does not scroll sideways)."""
    return page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")


def sign_in_to_portal(page: Page) -> None:
    """On the portal's sign-in page, sign in with the page's wallet and wait for the dashboard."""
    page.get_by_role("button", name="Connect wallet and sign in").click()
    expect(page.get_by_role("heading", name="Dashboard")).to_be_visible()


# What the publisher's server answers a path ending in these with; pages otherwise.
CONTENT_TYPES = {".js": "text/javascript; charset=utf-8", ".json": "application/json"}


class PublisherSite:
    """A publisher's web server on another origin than adnet (``localhost`` on its own port, where adnet is on
    ``127.0.0.1``): it serves the pages (scripts, JSON) tests put up, as a real site would (a page answered by
    Playwright's routing has no address, and Chromium then refuses its requests to the loopback address as from
    the web)."""

    def __init__(self) -> None:
        self.pages: dict[str, bytes] = {}
        pages = self.pages

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                body = pages.get(self.path)
                self.send_response(200 if body is not None else 404)
                self.send_header("Content-Type", CONTENT_TYPES.get(Path(self.path).suffix, "text/html; charset=utf-8"))
                self.end_headers()
                self.wfile.write(body or b"not found")

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.origin = f"http://localhost:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, name="publisher-site", daemon=True)
        self.thread.start()

    def put(self, path: str, html: str) -> str:
        self.pages[path] = html.encode()
        return self.origin + path

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


# Longer than the client network's billing cap windows (``adnet.delivery.caps``): every browser visitor is 127.0.0.1.
CAP_WINDOW_SECONDS = 301


@pytest.fixture
def fresh_billing_windows(server: LiveServer) -> Iterator[None]:
    """For tests whose impressions are billed: start in fresh cap windows and leave the other tests fresh ones."""
    server.clock.advance(seconds=CAP_WINDOW_SECONDS)
    yield
    server.clock.advance(seconds=CAP_WINDOW_SECONDS)


@pytest.fixture(scope="package")
def publisher_site() -> Iterator[PublisherSite]:
    site = PublisherSite()
    yield site
    site.close()


def publisher_page(visitor: Visitor, server: LiveServer, site: PublisherSite, slots: str, *,
                   site_id: str | None = None, api: str | None = None) -> Page:
    """Open a publisher's article with the snippet and ``slots`` placed after a screen and a half of text, so
    they start out of view."""
    site_attribute = site_id if site_id is not None else server.demo["pageSiteId"]
    api_attribute = f' data-api="{api}"' if api else ""
    filler = "<p>" + "Publisher text. " * 1200 + "</p>"
    html = (f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Publisher</title>'
            f'<link rel="icon" href="data:,">'
            f'<script async src="{server.url}/static/sdk.js" data-site-id="{site_attribute}"{api_attribute}></script>'
            f'</head><body><h1>An article</h1>{filler}{slots}{filler}</body></html>')
    visitor.page.goto(site.put(f"/article/{new_id('ev')}", html))
    return visitor.page
