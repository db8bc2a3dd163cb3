"""What a person sees on the publisher's and the operator's pages, at a desktop's 1280 px and a phone's 390 px: the
busy state while a (held) request runs, refusals beside the field they concern with their unit and the current
value, money forms that know the wallet and the site's balance, panels that refresh after an action without a page
load, contract errors in words, no page wider than the screen, charts readable at every width, and no serious or
critical axe-core violation. Runs against the live server of ``tests/browser/conftest.py`` with its test wallet.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest
from playwright.sync_api import Page, expect
from tortoise.transactions import in_transaction
from web3 import Web3

from adnet.campaigns.models import Campaign, CampaignStatus, CreativeStatus
from adnet.core.amounts import to_decimal_string
from adnet.core.ids import new_id
from adnet.core.wallets import dev_accounts
from adnet.money import ledger
from tests.browser.conftest import (
    OPERATOR_INDEX,
    LiveServer,
    serious_violations,
    sideways_overflow,
    sign_in_to_portal,
)
from tests.browser.conftest import TestWallet as Wallet
from tests.factories import make_campaign, make_creative

# The README's picture of a site's page on a phone, rewritten only by ``make screenshots``.
SITE_SCREENSHOT = Path(__file__).resolve().parents[3] / "docs" / "screenshots" / "site-phone.png"
UPDATE_SCREENSHOTS = os.environ.get("ADNET_UPDATE_SCREENSHOTS") == "1"
NEW_PUBLISHER_INDEX = 3  # funded development accounts no other browser test signs in with
FORMS_PUBLISHER_INDEX = 9
DRAINED_INDEX = 4
DEMO_PUBLISHER_INDEX = 2
G = 10**18
WIDTHS = (1280, 390)
APPROVE = "0x095ea7b3"
TRANSFER = "0xa9059cbb"
BALANCE_OF = "0x70a08231"


class Held:
    """Requests matching ``pattern`` held until ``release``: the page is seen while they run."""

    def __init__(self, page: Page, pattern: str) -> None:
        self.page, self.pattern, self.routes = page, pattern, []
        page.route(pattern, lambda route: self.routes.append(route))

    def release(self) -> None:
        for route in self.routes:
            route.continue_()
        self.page.unroute(self.pattern)


class RecordingWallet(Wallet):
    """A test wallet that keeps every transaction a page asked it to send."""

    asked: ClassVar[list[dict[str, Any]]] = []

    def _send(self, request: dict[str, Any]) -> str:
        RecordingWallet.asked.append(request)
        return super()._send(request)


class DrainingWallet(Wallet):
    """A wallet that moves all its G$ away between the approval and the deposit, so the deposit reverts with the
    token's ``ERC20InsufficientBalance``, as when the balance changes after the form was filled."""

    token = ""

    def _send(self, request: dict[str, Any]) -> str:
        if not request.get("data", "").startswith(APPROVE):
            owner = self.address[2:].rjust(64, "0")
            token = Web3.to_checksum_address(self.token)
            held = int(self.w3.eth.call({"to": token, "data": BALANCE_OF + owner}).hex() or "0", 16)
            away = dev_accounts()[0].address.lower()[2:].rjust(64, "0")
            super()._send({"to": self.token, "data": f"{TRANSFER}{away}{held:064x}"})
        return super()._send(request)


def opened(open_portal, index: int, width: int, wallet: type[Wallet] = Wallet) -> tuple[Page, Any]:
    page, console = open_portal(index, wallet, viewport={"width": width, "height": 900})
    sign_in_to_portal(page)
    return page, console


def looks_right(page: Page, width: int) -> None:
    """The page fits the screen and axe-core finds nothing serious or critical on it."""
    assert sideways_overflow(page) == 0, f"{page.url} is wider than {width} px"
    assert serious_violations(page) == [], page.url


def wallet_gs(server: LiveServer, index: int) -> int:
    return server.call(lambda: server.chain.token_balance("G$", dev_accounts()[index].address))


@pytest.fixture
def demo_earnings(server: LiveServer) -> Iterator[None]:
    """A day of ad revenue for the demo site and the platform, so their charts have a bar."""
    async def book() -> None:
        async with in_transaction():
            await ledger.book("ad_billing", new_id("ltx"), [
                (ledger.campaign(server.demo["campaignIds"][0]), -3 * G), (ledger.site(server.demo["siteId"]), 2 * G),
                (ledger.platform("G$"), G)], now=server.clock.now())

    server.call(book)
    yield


@pytest.mark.parametrize("width", WIDTHS)
def test_sign_in_dashboard_site_and_operator_pages_fit_and_pass_axe(open_portal, server, demo_earnings, width,
                                                                     tmp_path):
    page, console = open_portal(NEW_PUBLISHER_INDEX, viewport={"width": width, "height": 900})
    looks_right(page, width)
    hold = Held(page, "**/portal/signin/message")
    page.get_by_role("button", name="Connect wallet and sign in").click()
    expect(page.get_by_role("button", name="Connect wallet and sign in")).to_be_disabled()
    expect(page.locator("#signin")).to_have_attribute("aria-busy", "true")
    expect(page.locator("[data-wallet-status]")).to_have_text("Preparing the sign-in message…")
    hold.release()
    expect(page.get_by_role("heading", name="Dashboard")).to_be_visible()
    # A new publisher's chart says so in words, with no axis of smallest units.
    expect(page.locator(".chart-empty")).to_contain_text("Nothing earned in these days yet")
    expect(page.locator("#earnings figure")).not_to_contain_text("0.000000000000000001")
    looks_right(page, width)

    page, console = opened(open_portal, DEMO_PUBLISHER_INDEX, width)
    table = page.locator(".table-scroll:has(table.sites)")
    expect(table).to_have_attribute("tabindex", "0")
    expect(table).to_have_attribute("role", "region")
    if width == 1280:  # the sites table fits beside nothing else: it does not scroll sideways on a desktop
        assert table.evaluate("box => box.scrollWidth <= box.clientWidth")
    # Chart labels are readable (about 10 px or more) at every width; a day's value shows on focus.
    tick = page.locator("svg.chart .chart-tick").first
    assert tick.evaluate("label => label.getBoundingClientRect().height") >= 10
    today = page.locator("svg.chart .chart-day").last
    tip = today.locator(".chart-tip")
    expect(tip).to_be_hidden()
    today.focus()
    expect(tip).to_be_visible()
    expect(tip).to_contain_text("G$")
    assert tip.evaluate("label => label.getBoundingClientRect().height") >= 10
    page.keyboard.press("Tab")  # focus moves on, and the value goes with it
    expect(tip).to_be_hidden()
    first = page.locator("svg.chart .chart-day").first
    first.locator(".chart-hit").hover()
    expect(first.locator(".chart-tip")).to_be_visible()
    expect(page.locator("figcaption.chart-caption")).to_contain_text("(UTC days): total")
    looks_right(page, width)

    page.goto(f"{server.url}/portal/sites/{server.demo['siteId']}/embed")
    snippet = page.locator("pre:has(#snippet-script)")
    expect(snippet).to_have_attribute("tabindex", "0")
    if width == 390:  # the snippet scrolls inside its box, not the page
        assert snippet.evaluate("box => box.scrollWidth > box.clientWidth")
        screenshot = SITE_SCREENSHOT if UPDATE_SCREENSHOTS else tmp_path / SITE_SCREENSHOT.name
        page.screenshot(path=str(screenshot), full_page=True)
        assert screenshot.stat().st_size > 10_000
    looks_right(page, width)

    operator, operator_console = opened(open_portal, OPERATOR_INDEX, width)
    operator.goto(f"{server.url}/portal/operator")
    operator.get_by_label("New rate (G$ per SOV)").fill("2.5")
    operator.get_by_role("button", name="Set rate").click()
    expect(operator.locator("#rate-done pre.transaction")).to_be_visible()
    rate_card = operator.locator("section.card:has(#rate-form)").bounding_box()
    revenue_card = operator.locator("section.card:has(#revenue-balance)").bounding_box()
    assert rate_card and revenue_card
    side_by_side = rate_card["x"] + rate_card["width"] <= revenue_card["x"] + 1
    stacked = rate_card["y"] + rate_card["height"] <= revenue_card["y"] + 1
    assert side_by_side or stacked, "the rate form overlaps the revenue card"
    looks_right(operator, width)
    for watched in (console, operator_console):
        assert watched.page_errors == [] and watched.script_errors() == []


@pytest.mark.parametrize("width", WIDTHS)
def test_money_forms_show_progress_refuse_beside_the_field_and_refresh_their_panels(open_portal, server, width):
    RecordingWallet.asked.clear()
    page, console = opened(open_portal, FORMS_PUBLISHER_INDEX, width, RecordingWallet)
    page.get_by_label("Domain").fill(f"feedback-{width}.example")
    page.get_by_role("button", name="Register").click()
    page.locator("#site-rows a", has_text=f"feedback-{width}.example").click()
    expect(page.get_by_role("heading", name=f"feedback-{width}.example", level=1)).to_be_visible()
    page.get_by_role("link", name="Money").click()
    expect(page.locator("#topup-form")).to_be_visible()
    page.evaluate("window.__sameDocument = true")

    # Top-up: the wallet's G$ beside the amount; more than that is refused before anything is sent or asked.
    held = to_decimal_string(wallet_gs(server, FORMS_PUBLISHER_INDEX))
    topup = page.locator("#topup-form")
    expect(topup.locator(".available")).to_contain_text(f"In your wallet: {held} G$")
    prepared: list[str] = []
    page.on("request", lambda request: prepared.append(request.url) if "/topup/prepare" in request.url else None)
    topup.get_by_label("Amount (G$)").fill("10000000")
    topup.get_by_role("button", name="Top up").click()
    expect(page.locator("#topup-error")).to_have_text(f"Your wallet holds {held} G$; the amount is more than that.")
    expect(topup.get_by_label("Amount (G$)")).to_have_attribute("aria-invalid", "true")
    assert prepared == [] and RecordingWallet.asked == []
    topup.get_by_role("button", name="Max").click()
    expect(topup.get_by_label("Amount (G$)")).to_have_value(held)

    # While the server prepares it, the form is busy and its button disabled; then the wallet approves exactly
    # the amount, and the balance, the recent movements and the wallet's figure refresh without a page load.
    topup.get_by_label("Amount (G$)").fill("5")
    hold = Held(page, "**/topup/prepare")
    topup.get_by_role("button", name="Top up").click()
    expect(topup.get_by_role("button", name="Top up")).to_be_disabled()
    expect(topup).to_have_attribute("aria-busy", "true")
    expect(topup.locator(".busy")).to_be_visible()
    hold.release()
    expect(page.locator("#topup-status")).to_have_attribute("data-state", "credited")
    approve = RecordingWallet.asked[0]
    assert approve["data"].startswith(APPROVE) and int(approve["data"][-64:], 16) == 5 * G
    expect(page.locator("#balance-claimable")).to_have_text("5 G$")
    expect(page.locator("#site-activity caption")).to_have_text("Top-ups")
    expect(page.locator("#site-activity")).not_to_contain_text("No money has moved yet.")
    after = to_decimal_string(wallet_gs(server, FORMS_PUBLISHER_INDEX))
    expect(page.locator("#topup-available")).to_contain_text(f"In your wallet: {after} G$")

    # Withdraw: the claimable balance of the chosen token beside the amount; refusals name it with its unit.
    withdraw = page.locator("#withdraw-form")
    expect(withdraw.locator(".available [data-token='G$']")).to_contain_text("Claimable: 5 G$")
    withdraw.get_by_label("Amount", exact=True).fill("100")
    withdraw.get_by_role("button", name="Withdraw").click()
    expect(page.locator("#withdraw-error")).to_have_text(
        "The amount is more than the site's claimable balance, which is 5 G$.")
    withdraw.get_by_label("Token").select_option("SOV")
    expect(withdraw.locator(".available [data-token='SOV']")).to_be_visible()
    expect(withdraw.locator(".available [data-token='G$']")).to_be_hidden()
    withdraw.get_by_label("Token").select_option("G$")
    withdraw.get_by_label("Amount", exact=True).fill("0.5")  # the server's refusal (a 400), swapped beside the field
    withdraw.get_by_role("button", name="Withdraw").click()
    expect(page.locator("#withdraw-error")).to_have_text("A withdrawal is at least 1 G$.")
    expect(page.locator("#withdraw-amount")).to_have_attribute("aria-invalid", "true")

    # Exchange: the preview promises nothing the site does not hold; a held exchange shows its progress.
    exchange = page.locator("#exchange-form")
    exchange.get_by_label("Direction").select_option("SOV")
    exchange.get_by_label("Amount", exact=True).fill("5")
    expect(page.locator("#exchange-preview")).to_contain_text(
        "The amount is more than the site's claimable balance, which is 0 SOV.")
    expect(page.locator("#exchange-preview")).not_to_contain_text("You will receive")
    exchange.get_by_label("Direction").select_option("G$")
    exchange.get_by_role("button", name="Max").click()
    expect(exchange.get_by_label("Amount", exact=True)).to_have_value("5")
    exchange.get_by_label("Amount", exact=True).fill("2")
    expect(page.locator("#exchange-preview-text")).to_contain_text("You will receive")
    hold = Held(page, "**/exchange")
    exchange.get_by_role("button", name="Exchange").click()
    expect(exchange.get_by_role("button", name="Exchange")).to_be_disabled()
    expect(exchange).to_have_attribute("aria-busy", "true")
    expect(exchange.locator(".busy")).to_have_text("Exchanging…")
    hold.release()
    expect(page.locator("#exchange-done")).to_contain_text("Exchanged 2 G$ for")
    expect(page.locator("#balance-claimable")).to_have_text("3 G$")
    expect(page.locator("#balance-sov")).not_to_have_text("0 SOV")
    expect(page.locator("#site-activity")).to_contain_text("Exchanges")
    expect(page.locator("#withdraw-available [data-token='G$']")).to_contain_text("Claimable: 3 G$")

    assert page.evaluate("window.__sameDocument") is True
    looks_right(page, width)
    assert console.page_errors == [] and console.script_errors() == []


def test_a_deposit_the_chain_would_refuse_is_explained_in_words(open_portal, server):
    DrainingWallet.token = server.chain.gs_address
    page, console = opened(open_portal, DRAINED_INDEX, 390, DrainingWallet)
    page.get_by_label("Domain").fill("drained.example")
    page.get_by_role("button", name="Register").click()
    page.locator("#site-rows a", has_text="drained.example").click()
    page.get_by_role("link", name="Money").click()
    page.locator("#topup-form").get_by_label("Amount (G$)").fill("2")
    page.locator("#topup-form").get_by_role("button", name="Top up").click()
    expect(page.locator("[data-wallet-topup] [data-wallet-status]")).to_have_text(
        "The transaction would fail: Your wallet holds 0 G$, less than the 2 G$ this transaction moves.")
    expect(page.locator("[data-wallet-retry]")).to_be_visible()
    assert console.page_errors == []


@pytest.fixture
def leaderboard_in_review(server: LiveServer) -> Iterator[str]:
    """A campaign in review with a 728x90 banner (wider than a phone), rejected afterwards."""
    async def create() -> Campaign:
        campaign = await make_campaign(status=CampaignStatus.REVIEW, name="Leaderboard sale", now=server.clock.now())
        await make_creative(campaign, width=728, height=90, status=CreativeStatus.REVIEW, now=server.clock.now(),
                            banner_url=f"{server.url}/static/demo/banner-1-728x90.svg")
        return campaign

    campaign = server.call(create)
    yield campaign.name
    server.call(lambda: Campaign.filter(id=campaign.id).update(status=CampaignStatus.REJECTED))


@pytest.mark.parametrize("width", WIDTHS)
def test_the_review_queue_fits_the_screen_and_names_what_was_decided(open_portal, server, leaderboard_in_review,
                                                                     width):
    page, console = opened(open_portal, OPERATOR_INDEX, width)
    page.goto(f"{server.url}/portal/operator")
    review = page.locator("article.review", has_text=leaderboard_in_review)
    expect(review.locator(".creative-frame img")).to_be_visible()
    looks_right(page, width)  # the banner scrolls inside its focusable frame on a phone
    if width == 390:
        whole = review.locator("form", has=page.get_by_role("button", name="Reject campaign"))
        whole.get_by_label("Reason for rejecting").fill("Not on phones")
        whole.get_by_role("button", name="Reject campaign").click()
        expect(page.locator("#review-done")).to_have_text(f"Rejected {leaderboard_in_review}.")
    assert console.page_errors == [] and console.script_errors() == []


@pytest.mark.parametrize("width", WIDTHS)
def test_the_operator_sets_the_rate_and_the_rate_panel_follows(open_portal, server, width):
    before = server.call(lambda: server.chain.read_rate())
    page, console = opened(open_portal, OPERATOR_INDEX, width)
    page.goto(f"{server.url}/portal/operator")
    new = before + G // 4
    try:
        page.get_by_label("New rate (G$ per SOV)").fill(to_decimal_string(new))
        page.get_by_label("Send it now with the development deployer's key").check()
        hold = Held(page, "**/portal/operator/rate")
        page.get_by_role("button", name="Set rate").click()
        expect(page.get_by_role("button", name="Set rate")).to_be_disabled()
        expect(page.locator("#rate-form")).to_have_attribute("aria-busy", "true")
        hold.release()
        expect(page.locator("#rate-done")).to_contain_text(f"Rate set to {to_decimal_string(new)} G$ per SOV")
        expect(page.locator("#rate-now")).to_have_text(f"1 SOV = {to_decimal_string(new)} G$")
        looks_right(page, width)
    finally:
        server.call(lambda: _set_rate(server, before))
    assert console.page_errors == [] and console.script_errors() == []


async def _set_rate(server: LiveServer, rate: int) -> None:
    await server.chain.send(dev_accounts()[0], server.chain.build_set_rate_tx(dev_accounts()[0].address, rate))

