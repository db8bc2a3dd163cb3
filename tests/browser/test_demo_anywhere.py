"""The demo wherever adnet is served: ``adnet demo`` loaded for one address (``ADNET_PORT``), then ``adnet serve
--host --port`` on another, without ``ADNET_PUBLIC_URL``. The banners on ``/demo`` load in Chromium under the page's
CSP, and sign-in names the address served. ``adnet demo`` run twice loads its history once, and the books pass
``adnet audit``.

The server is the ``adnet`` command itself, in processes of its own (development settings, its own data directory
and development chain), as ``make run`` starts it.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from playwright.sync_api import Browser, ConsoleMessage, expect

from adnet.core.wallets import dev_accounts
from tests.browser.conftest import PROVIDER_SCRIPT
from tests.browser.conftest import TestWallet as Wallet
from tests.ports import free_port

HOST = "127.0.0.1"
COMMAND_TIMEOUT = 300
START_TIMEOUT = 90
BANNER_SLOTS = ("slot-leaderboard", "slot-tasks", "slot-mobile")
ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Served:
    """adnet served by ``adnet serve`` at ``url``, with the demo loaded for another address."""

    url: str
    loaded_for: str
    outputs: list[str]  # of adnet migrate, demo --json, audit, demo --json, audit


def _adnet(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(Path(sys.executable).with_name("adnet")), *args], env=env, cwd=ROOT,  # noqa: S603
                          capture_output=True, text=True, timeout=COMMAND_TIMEOUT, check=False)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    data_dir = tmp_path_factory.mktemp("demo-anywhere")
    loaded_port, served_port = free_port(), free_port()
    env = {**{name: value for name, value in os.environ.items() if not name.startswith("ADNET_")},
           "ADNET_ENV": "development", "ADNET_DATA_DIR": str(data_dir), "ADNET_HOST": HOST,
           "ADNET_PORT": str(loaded_port)}
    outputs = []
    for args in (("migrate",), ("demo", "--json"), ("audit",), ("demo", "--json"), ("audit",)):
        result = _adnet(env, *args)
        assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
        outputs.append(result.stdout)
    log = open(data_dir / "serve.log", "wb")  # closed below, after the server
    server = subprocess.Popen([str(Path(sys.executable).with_name("adnet")), "serve", "--host", HOST,  # noqa: S603
                               "--port", str(served_port)], env=env, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
                              start_new_session=True)
    url = f"http://{HOST}:{served_port}"
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            assert server.poll() is None, (data_dir / "serve.log").read_text()[-3000:]
            with contextlib.suppress(OSError):
                with urllib.request.urlopen(f"{url}/healthz", timeout=2) as answer:  # noqa: S310 - our own server
                    if answer.status == 200:
                        break
            assert time.monotonic() < deadline, "adnet serve did not answer /healthz"
            time.sleep(0.2)
        yield Served(url=url, loaded_for=f"http://{HOST}:{loaded_port}", outputs=outputs)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(server.pid, signal.SIGINT)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait(timeout=10)
        log.close()


def _get_json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as answer:  # noqa: S310 - our own server
        return json.loads(answer.read())


def test_serve_names_the_address_it_serves_in_sign_in_without_a_public_url(served: Served) -> None:
    grant = _get_json(f"{served.url}/api/auth/nonce")
    assert (grant["domain"], grant["uri"]) == (served.url.removeprefix("http://"), served.url)


def test_the_demo_shows_its_banners_where_it_is_served_and_signs_in_for_that_address(
        browser: Browser, served: Served) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 900}, user_agent=(
        f"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/{browser.version} "
        "Safari/537.36"))
    try:
        page = context.new_page()
        messages: list[ConsoleMessage] = []
        page.on("console", lambda message: messages.append(message))
        page.goto(f"{served.url}/demo")
        for slot in BANNER_SLOTS:
            page.locator(f"#{slot}").scroll_into_view_if_needed()
            page.wait_for_function("""(id) => {
                const media = document.getElementById(id).shadowRoot?.querySelector("img.media");
                return media !== null && media !== undefined && media.complete && media.naturalWidth > 0;
            }""", arg=slot)
            source = page.locator(f"#{slot}").evaluate("host => host.shadowRoot.querySelector('img.media').src")
            assert source.startswith(f"{served.url}/static/demo/banner-"), source
        page.wait_for_load_state("networkidle")
        assert [message.text for message in messages] == []  # no CSP refusal, no failed load

        # Sign-in: the portal's message names this address, and the wallet's signature of it opens the session.
        wallet = Wallet(SimpleNamespace(url=served.url), dev_accounts()[2])  # type: ignore[arg-type]
        signed: list[str] = []
        handle = wallet.handle

        def sign_and_keep(method: str, params_json: str) -> str:
            if method == "personal_sign":
                signed.append(bytes.fromhex(json.loads(params_json)[0].removeprefix("0x")).decode())
            return handle(method, params_json)

        context.expose_function("__adnetTestWallet", sign_and_keep)
        context.add_init_script(PROVIDER_SCRIPT)
        portal = context.new_page()
        portal.goto(f"{served.url}/portal/signin")
        portal.get_by_role("button", name="Connect wallet and sign in").click()
        expect(portal.get_by_role("heading", name="Dashboard")).to_be_visible()
        assert signed and signed[0].startswith(f"{served.url} wants you to sign in"), signed
        assert f"\nURI: {served.url}/" in signed[0]
        assert served.loaded_for.removeprefix("http://") not in signed[0]
    finally:
        context.close()


def test_the_demo_loads_its_history_once_and_the_books_pass_the_audit(served: Served) -> None:
    _, first, audited, again, audited_again = served.outputs
    assert json.loads(again) == json.loads(first) and len(json.loads(first)["siteIds"]) == 2
    # The second load booked nothing: the same transactions, and the books still balance against the vault.
    books = audited.splitlines()[0]
    assert int(books.split()[0]) > 100 and audited_again.splitlines()[0] == books
    assert audited.rstrip().endswith("audit passed") and audited_again.rstrip().endswith("audit passed")
