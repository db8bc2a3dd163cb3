"""The monthly statement in headless Chromium, at a desktop's 1280 px and a phone's 390 px: the dashboard's card
shows the month's earnings and the last withdrawal and leads to the statement; the month picker shows last month's;
the page fits the screen, axe-core finds nothing serious, and printed (print media) it leaves out the navigation
and the forms."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from playwright.sync_api import expect
from tortoise.transactions import in_transaction

from adnet.core.amounts import Token
from adnet.core.ids import new_id
from adnet.core.wallets import dev_accounts
from adnet.money import ledger, withdrawals
from adnet.money.holders import Holder
from adnet.reporting.statements import Month
from tests.browser.conftest import LiveServer, serious_violations, sideways_overflow, sign_in_to_portal
from tests.factories import make_publisher, make_site

# The deployer of the development contracts: no other browser test signs in with it, so its publisher account and
# its statements are this test's alone.
STATEMENT_PUBLISHER_INDEX = 0
G = 10**18


@pytest.fixture(scope="module")
def statement_months(server: LiveServer) -> tuple[Month, Month]:
    """A publisher account opened last month, whose site earned 4 G$ then and 3 G$ this month, and withdrew 2 G$
    this month: (last month, this month)."""
    now = server.clock.now()
    this_month = Month.of(now)
    last_month = this_month.previous
    wallet = dev_accounts()[STATEMENT_PUBLISHER_INDEX].address.lower()

    async def prepare() -> None:
        publisher = await make_publisher(wallet, now=last_month.start)
        site = await make_site(publisher, domain=f"statement-{uuid.uuid4().hex[:8]}.example", now=last_month.start)
        for amount, at in ((4 * G, last_month.start + timedelta(days=2)), (3 * G, this_month.start)):
            async with in_transaction():
                await ledger.book("ad_billing", new_id("ltx"), [(ledger.external(Token.GS), -amount),
                                                                (ledger.site(site.id), amount)], now=at)
        await withdrawals.withdraw(Holder("site", site.id, wallet), 2 * G, Token.GS, minimum=G,
                                   chain=server.chain, now=now)

    server.call(prepare)
    return last_month, this_month


@pytest.mark.parametrize("width", (1280, 390))
def test_the_statement_page_shows_picks_prints_and_fits(open_portal, server: LiveServer, statement_months,
                                                        width: int) -> None:
    last_month, this_month = statement_months
    page, console = open_portal(STATEMENT_PUBLISHER_INDEX, viewport={"width": width, "height": 900})
    sign_in_to_portal(page)
    card = page.locator("#statement-card")
    expect(card.locator("#month-earned")).to_have_text("3 G$")
    expect(card.locator("#last-withdrawal")).to_contain_text("2 G$")
    assert sideways_overflow(page) == 0, f"the dashboard is wider than {width} px"
    card.get_by_role("link", name=f"Statement for {this_month}").click()

    expect(page.get_by_role("heading", name=f"Statement {this_month}")).to_be_visible()
    expect(page.locator("#statement-state")).to_contain_text("To date")
    expect(page.locator("#statement-balances tbody tr").first).to_contain_text("4")  # opening
    expect(page.locator("#statement-balances tbody tr").first.locator("td").last).to_have_text("5")  # 4 + 3 - 2
    expect(page.locator("#statement-withdrawals")).to_contain_text("issued")
    expect(page.get_by_role("button", name="Print")).to_be_visible()
    assert sideways_overflow(page) == 0, f"the statement is wider than {width} px"
    assert serious_violations(page) == []

    page.get_by_label("Month").fill(str(last_month))
    page.get_by_role("button", name="Show").click()
    expect(page.get_by_role("heading", name=f"Statement {last_month}")).to_be_visible()
    expect(page.locator("#statement-state")).to_have_text("Complete")
    expect(page.locator("#statement-balances tbody tr").first.locator("td").last).to_have_text("4")
    assert f"month={last_month}" in page.url
    expect(page.locator("#statement-csv")).to_have_attribute("href", f"/portal/statement.csv?month={last_month}")
    assert sideways_overflow(page) == 0, f"last month's statement is wider than {width} px"
    assert serious_violations(page) == []

    page.emulate_media(media="print")
    expect(page.locator(".portal-nav")).to_be_hidden()
    expect(page.locator("#statement-form")).to_be_hidden()
    expect(page.get_by_role("heading", name=f"Statement {last_month}")).to_be_visible()
    expect(page.locator("#statement-balances")).to_be_visible()
    assert sideways_overflow(page) == 0, f"the printed statement is wider than {width} px"
    assert console.script_errors() == []
