"""Statements in the portal: the publisher's printable page and CSV for a month, chosen with the month picker; a
month that is not one explained beside the picker; the dashboard's card with the month's earnings and the last
withdrawal, linking to the statement; the advertiser's statement linked from its home; a page only of the signed-in
wallet's own account."""

from __future__ import annotations

import csv
import io
import re
from datetime import timedelta

from tortoise.transactions import in_transaction

from adnet.core.amounts import Token
from adnet.core.ids import new_id
from adnet.core.wallets import dev_accounts
from adnet.money import ledger, withdrawals
from adnet.money.holders import Holder
from adnet.reporting.statements import Month, StatementKind, statement_number
from tests.factories import G, make_advertiser, make_campaign, make_publisher, make_site
from tests.portal.conftest import portal_sign_in


async def earn(site_id: str, amount: int, now) -> None:
    async with in_transaction():
        await ledger.book("ad_billing", new_id("ltx"), [(ledger.external(Token.GS), -amount),
                                                        (ledger.site(site_id), amount)], now=now)


async def test_the_dashboard_card_and_the_printable_statement_of_a_month(app, clock):
    account = dev_accounts()[2]
    publisher_record = await make_publisher(account.address.lower())
    site = await make_site(publisher_record, domain="news.example")
    await earn(site.id, 7 * G, clock.now())  # January
    clock.advance(days=40)  # 2026-02-10
    await earn(site.id, 3 * G, clock.now() - timedelta(days=2))
    await withdrawals.withdraw(Holder("site", site.id, account.address.lower()), 2 * G, Token.GS,
                                            minimum=G, chain=app.extensions["adnet"].chain, now=clock.now())
    publisher = await portal_sign_in(app.test_client(), account)

    dashboard = await (await publisher.get("/portal")).get_data(as_text=True)
    assert re.search(r'id="month-earned">3 G\$<', dashboard)
    assert re.search(r'id="last-withdrawal">2 G\$ on 2026-02-10 00:00 UTC, issued<', dashboard)
    assert 'href="/portal/statement?month=2026-02" id="statement-card-link" hx-boost="false"' in dashboard

    page = await publisher.get("/portal/statement?month=2026-02")
    html = await page.get_data(as_text=True)
    assert page.status_code == 200
    number = statement_number(StatementKind.PUBLISHER, publisher_record.id, Month(2026, 2))
    assert f'id="statement-number">{number}<' in html and "To date: the month has not ended" in html
    assert 'href="/static/statement.css"' in html and "style=" not in html and "<script>" not in html
    balances = re.search(r'<table class="report statement-table" id="statement-balances">.*?</table>', html, re.S)
    cells = re.findall(r"<td>([^<]*)</td>", balances.group(0))
    assert cells == ["G$", "7", "1", "8"]  # opening 7, earned 3, withdrew 2: closing 8
    assert re.search(r'<td>2 G\$</td><td>issued</td>\s*<td class="hash">\u2013</td>', html)
    assert re.search(r"<th scope=\"row\">news.example</th><td>0</td><td>0</td><td>0</td><td>3</td>", html)

    january = await (await publisher.get("/portal/statement?month=2026-01")).get_data(as_text=True)
    assert "Complete" in january and re.search(r"<td>G\$</td><td>0</td><td>7</td><td>7</td>", january)
    exported = await publisher.get("/portal/statement.csv?month=2026-01")
    assert exported.status_code == 200 and exported.mimetype == "text/csv"
    rows = list(csv.DictReader(io.StringIO(await exported.get_data(as_text=True))))
    assert rows[0]["item"] == statement_number(StatementKind.PUBLISHER, publisher_record.id, Month(2026, 1))
    assert [(row["item"], row["amount"]) for row in rows if row["section"] == "balance"] == [
        ("opening balance", "0"), ("closing balance", "7"), ("opening total", "0"), ("closing total", "7")]


async def test_a_month_that_is_not_one_is_explained_beside_the_picker(app, clock):
    account = dev_accounts()[2]
    await make_site(await make_publisher(account.address.lower()))
    publisher = await portal_sign_in(app.test_client(), account)
    for month, says in (("2026-02", "has not begun"), ("2025-12", "opened in 2026-01"), ("soon", "YYYY-MM")):
        page = await publisher.get(f"/portal/statement?month={month}")
        html = await page.get_data(as_text=True)
        assert page.status_code == 400, month
        assert re.search(rf'id="statement-error" class="error" role="alert">[^<]*{says}', html), month
        assert 'aria-invalid="true" aria-describedby="statement-error"' in html
        assert "Statement 2026-01" in html  # the current month meanwhile
    refused = await publisher.get("/portal/statement.csv?month=2026-02")
    assert refused.status_code == 400


async def test_each_wallet_sees_only_its_own_statement(app, clock):
    mine, theirs = dev_accounts()[2], dev_accounts()[3]
    site = await make_site(await make_publisher(theirs.address.lower()), domain="theirs.example")
    await earn(site.id, 5 * G, clock.now())
    other = await portal_sign_in(app.test_client(), theirs)
    assert "theirs.example" in await (await other.get("/portal/statement")).get_data(as_text=True)
    publisher = await portal_sign_in(app.test_client(), mine)
    assert 'id="statement-card"' not in await (await publisher.get("/portal")).get_data(as_text=True)
    page = await publisher.get("/portal/statement")
    assert page.status_code == 404 and "theirs.example" not in await page.get_data(as_text=True)
    anonymous = await app.test_client().get("/portal/statement")
    assert anonymous.status_code in (302, 303) and "/portal/signin" in anonymous.headers["Location"]


async def test_the_advertiser_statement_is_linked_from_its_home(app, clock):
    account = dev_accounts()[1]
    advertiser = await make_advertiser(account.address.lower())
    campaign = await make_campaign(advertiser, name="Spring sale", budget=10 * G)
    async with in_transaction():
        await ledger.book("ad_billing", new_id("ltx"), [(ledger.campaign(campaign.id), -G),
                                                        (ledger.external(Token.GS), G)], now=clock.now())
    signed = await portal_sign_in(app.test_client(), account)
    home = await (await signed.get("/portal/advertise")).get_data(as_text=True)
    assert 'href="/portal/advertise/statement" id="statement-link" hx-boost="false"' in home
    html = await (await signed.get("/portal/advertise/statement")).get_data(as_text=True)
    assert re.search(r"<th scope=\"row\">Spring sale</th><td>0</td><td>0</td><td>0</td><td>1</td>", html)
    assert re.search(r"<th scope=\"row\">Total</th><td>G\$</td><td>0</td><td>9</td><td>9</td>", html)
    exported = await signed.get("/portal/advertise/statement.csv")
    assert exported.status_code == 200 and "Spring sale" in await exported.get_data(as_text=True)
