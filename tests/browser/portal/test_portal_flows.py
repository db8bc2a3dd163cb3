"""The publisher portal in headless Chromium, against the live server of ``tests/browser/conftest.py``, with the
injected EIP-1193 test wallet: sign-in (and what the page says without a wallet, on a refusal, on another chain),
registering a site, top-up, withdrawal and its redeem, exchange, and the dashboard screenshot for the README.

Fixtures live in this module rather than a conftest of its own, so the harness's ``conftest`` stays the only one
of its name in this package tree.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from playwright.sync_api import expect
from quart import current_app

from adnet.core.amounts import to_decimal_string
from adnet.core.wallets import dev_accounts
from adnet.demo.history import load_history
from adnet.money import ledger
from tests.browser.conftest import LiveServer, sign_in_to_portal
from tests.browser.conftest import TestWallet as Wallet
from tests.conftest import rebuild_index

# The README's picture, rewritten only by ``make screenshots``, so that a test run leaves the tree as it was.
SCREENSHOT = Path(__file__).resolve().parents[3] / "docs" / "screenshots" / "dashboard.png"
UPDATE_SCREENSHOTS = os.environ.get("ADNET_UPDATE_SCREENSHOTS") == "1"
PUBLISHER_INDEX = 6  # a funded development account no other browser test signs in with
DEMO_PUBLISHER_INDEX = 2  # the demo data's publisher
G = 10**18


class RefusingWallet(Wallet):
    """A wallet whose user declines to sign."""

    def _answer(self, method: str, params: list[Any]) -> Any:
        if method == "personal_sign":
            raise PermissionError("User rejected the request.")
        return super()._answer(method, params)


class OtherChainWallet(Wallet):
    """A wallet on chain 1 until the page asks it to switch to adnet's chain."""

    switched = False

    def _answer(self, method: str, params: list[Any]) -> Any:
        if method == "eth_chainId" and not self.switched:
            return "0x1"
        if method == "wallet_switchEthereumChain":
            super()._answer(method, params)
            self.switched = True
            return None
        return super()._answer(method, params)


def test_sign_in_says_what_is_wrong_and_offers_to_switch_chains(open_portal, server):
    page, _ = open_portal(PUBLISHER_INDEX, None)
    page.get_by_role("button", name="Connect wallet and sign in").click()
    expect(page.locator("[data-wallet-status]")).to_contain_text("No browser wallet found")

    page, _ = open_portal(PUBLISHER_INDEX, RefusingWallet)
    page.get_by_role("button", name="Connect wallet and sign in").click()
    expect(page.locator("[data-wallet-status]")).to_have_text("You declined the request in your wallet.")
    assert page.url.endswith("/portal/signin")

    page, console = open_portal(PUBLISHER_INDEX, OtherChainWallet)
    page.get_by_role("button", name="Connect wallet and sign in").click()
    expect(page.locator("[data-wallet-status]")).to_contain_text("Your wallet is on chain 1; adnet uses chain")
    page.get_by_role("button", name=re.compile("Switch the wallet to chain")).click()
    expect(page.get_by_role("heading", name="Dashboard")).to_be_visible()
    expect(page.locator(".portal-nav .wallet")).to_have_text(dev_accounts()[PUBLISHER_INDEX].address)  # EIP-55
    assert console.page_errors == []


def test_a_publisher_registers_a_site_tops_up_withdraws_and_exchanges(open_portal, server):
    page, console = open_portal(PUBLISHER_INDEX)
    sign_in_to_portal(page)

    # Register: a wrong domain is explained while typing, the new row appears without a page load.
    page.evaluate("window.__sameDocument = true")
    page.get_by_label("Domain").fill("not a domain")
    expect(page.locator("#domain-hint")).to_contain_text("Domain: a site's DNS name")
    page.get_by_label("Domain").fill("https://www.Portal-Flow.example/blog")
    expect(page.locator("#domain-hint")).to_have_text("Will be registered as portal-flow.example.")
    page.get_by_role("button", name="Register").click()
    row = page.locator("#site-rows tr", has_text="portal-flow.example")
    expect(row).to_be_visible()
    assert page.evaluate("window.__sameDocument") is True
    expect(page.get_by_label("Domain")).to_have_value("")

    # The site page's Embed and units section: embed snippets with a copy button.
    row.get_by_role("link", name="portal-flow.example").click()
    expect(page.get_by_role("heading", name="portal-flow.example", level=1)).to_be_visible()
    site_id = page.url.rsplit("/", 1)[1]
    tabs = page.get_by_role("navigation", name="Sections of portal-flow.example")
    tabs.get_by_role("link", name="Embed and units").click()
    expect(page).to_have_url(f"{server.url}/portal/sites/{site_id}/embed")
    expect(page.locator("#snippet-script")).to_contain_text(f'data-site-id="{site_id}"')
    copy = page.locator('[data-copy="snippet-banner"]')
    copy.click()
    expect(copy).to_have_text("Copied")

    # Top up (the Money section): the server prepares, the wallet sends approve and deposit, the status partial
    # reaches credited.
    tabs.get_by_role("link", name="Money").click()
    expect(tabs.get_by_role("link", name="Money")).to_have_attribute("aria-current", "page")
    page.get_by_label("Amount (G$)").fill("25")
    page.get_by_role("button", name="Top up").click()
    expect(page.locator("#topup-status")).to_have_attribute("data-state", "credited")
    expect(page.locator("#topup-status")).to_contain_text("Credited: 25 G$ added to this site's balance.")
    expect(page.locator("#balance-claimable")).to_have_text("25 G$")

    # Withdraw: debited at once; the wallet redeems the claim; the watcher confirms it from the chain.
    page.get_by_label("Amount", exact=True).first.fill("abc")
    page.locator("#withdraw-form").get_by_role("button", name="Withdraw").click()
    expect(page.locator("#withdraw-error")).to_contain_text("Amount: enter an amount such as 2.5")
    page.locator("#withdraw-amount").fill("10.5")
    page.locator("#withdraw-form").get_by_role("button", name="Withdraw").click()
    withdrawal = page.locator("#withdraw-progress .progress")
    expect(withdrawal).to_contain_text("redeem sent")
    expect(page.locator("#balance-claimable")).to_have_text("14.5 G$")
    expect(page.locator("#balance-pending")).to_have_text("10.5 G$")
    server.call(lambda: server.services.jobs.run("chain-watcher"))
    expect(withdrawal).to_have_attribute("data-state", "redeemed")
    expect(page.locator("#balance-pending")).to_have_text("0 G$")

    # Exchange: the preview names what will be received, at the vault's rate, before anything is booked.
    rate = server.call(lambda: server.chain.rate())
    page.locator("#exchange-from").select_option("G$")
    page.locator("#exchange-amount").fill("4")
    expected_sov = 4 * G * G // rate
    received = to_decimal_string(expected_sov)
    expect(page.locator("#exchange-preview-text")).to_contain_text(f"You will receive {received} SOV")
    page.locator("#exchange-form").get_by_role("button", name="Exchange").click()
    expect(page.locator("#exchange-done")).to_contain_text(f"for {to_decimal_string(expected_sov)} SOV")
    expect(page.locator("#balance-claimable")).to_have_text("10.5 G$")
    expect(page.locator("#balance-sov")).to_contain_text(f"{to_decimal_string(expected_sov)} SOV")

    balance = server.call(lambda: _balances(site_id))
    assert balance == (10 * G + G // 2, expected_sov)
    assert console.page_errors == [] and console.script_errors() == []


async def _balances(site_id: str) -> tuple[int, int]:
    return await ledger.balance(ledger.site(site_id)), await ledger.balance(ledger.site(site_id, "SOV"))


def test_the_dashboard_with_demo_data_on_a_phone_and_for_the_readme(open_portal, server, tmp_path):
    server.call(lambda: _the_demo_history(server))
    page, console = open_portal(DEMO_PUBLISHER_INDEX, viewport={"width": 1100, "height": 900})
    sign_in_to_portal(page)
    expect(page.locator("#site-rows tr")).to_have_count(2)  # the demo site and the history's news site
    expect(page.locator("svg.chart rect.chart-bar")).to_have_count(30)
    expect(page.locator("#earned-lifetime")).not_to_have_text("0 G$")
    screenshot = SCREENSHOT if UPDATE_SCREENSHOTS else tmp_path / SCREENSHOT.name
    page.screenshot(path=str(screenshot), full_page=True)
    assert screenshot.stat().st_size > 10_000  # a rendered page, not a blank one

    page.set_viewport_size({"width": 375, "height": 740})
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 375, f"the dashboard scrolls sideways on a phone ({width}px)"
    assert console.page_errors == []


async def _the_demo_history(server: LiveServer) -> None:
    """The demo's month of traffic (``adnet.demo.history``), as ``adnet demo`` plays it, on the live server."""
    services = server.services
    await load_history(services.settings, services.chain, server.demo["advertiserWallet"],
                       server.demo["publisherWallet"], now=server.clock.now(), minter=dev_accounts()[0],
                       advertiser_key=dev_accounts()[1])
    await rebuild_index(current_app)
