"""Monthly statements through HTTP: the JSON and the CSV say the same figures, closing = opening + movements per
token, the number is stable, a month not begun or before the account is refused, and a statement is only ever the
caller's own (a session, or a key with ``reports:read``)."""

from __future__ import annotations

import csv
import io
from datetime import timedelta
from decimal import Decimal

import pytest
from eth_account import Account
from tortoise.transactions import in_transaction

from adnet.core.amounts import UNIT, Token
from adnet.core.ids import new_id
from adnet.money import ledger
from tests.api.test_api_keys import issue
from tests.auth_helpers import bearer, sign_in
from tests.factories import G, make_advertiser, make_campaign, make_publisher, make_site


async def book(kind: str, legs: list, now) -> None:
    async with in_transaction():
        await ledger.book(kind, new_id("ltx"), legs, now=now)


@pytest.fixture
async def accounts(client, clock):
    """Two publishers (each signed in, each with a site that earned this month) and an advertiser (signed in) that
    deposited and spent: {name: (token, site or campaign id)}."""
    clock.advance(days=40)  # 2026-02-10: January is over, February is to date
    external = ledger.external(Token.GS)
    found = {}
    for name, earned in (("alice", 5 * G + 1), ("bob", 2 * G)):
        account = Account.create()
        site = await make_site(await make_publisher(account.address.lower()))
        await book("ad_billing", [(external, -earned), (ledger.site(site.id), earned)], clock.now())
        found[name] = (await sign_in(client, account), site.id)
    await book("claim_issue", [(ledger.site(found["alice"][1]), -G),
                               (ledger.outstanding_claims(Token.GS), G)], clock.now() + timedelta(hours=1))
    account = Account.create()
    advertiser = await make_advertiser(account.address.lower())
    campaign = await make_campaign(advertiser, budget=10 * G, name=FORMULA)
    await book("deposit", [(external, -3 * G), (ledger.advertiser(advertiser.id), 3 * G)], clock.now())
    await book("ad_billing", [(ledger.campaign(campaign.id), -G), (external, G)], clock.now())
    found["carol"] = (await sign_in(client, account), campaign.id)
    return found


FORMULA = "=HYPERLINK(\"https://evil.example\")"


def rows_of(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


async def test_a_publisher_reads_its_statement_as_json_and_csv_with_the_same_figures(client, accounts):
    token, site_id = accounts["alice"]
    response = await client.get("/api/publishers/statement?month=2026-02", headers=bearer(token))
    assert response.status_code == 200, await response.get_json()
    statement = await response.get_json()
    assert statement["month"] == "2026-02" and statement["complete"] is False
    assert statement["number"].startswith("ST-2026-02-P")
    [gs] = statement["balances"]
    assert (gs["token"], gs["opening"], gs["movements"], gs["closing"]) == ("G$", "0", "4.000000000000000001",
                                                                            "4.000000000000000001")
    assert Decimal(gs["opening"]) + sum(Decimal(m["amount"]) for m in statement["movements"]) == \
        Decimal(gs["closing"]) == Decimal(await ledger.balance(ledger.site(site_id))) / UNIT
    assert [(s["id"], s["amount"]) for s in statement["subjects"]] == [(site_id, "5.000000000000000001")]
    assert {m["category"]: m["amount"] for m in statement["movements"]} == {
        "earnings": "5.000000000000000001", "withdrawal": "-1"}
    # The default month is the current one, and the number is the same each time.
    again = await (await client.get("/api/publishers/statement", headers=bearer(token))).get_json()
    assert again["number"] == statement["number"]

    exported = await client.get("/api/publishers/statement.csv?month=2026-02", headers=bearer(token))
    assert exported.status_code == 200 and exported.mimetype == "text/csv"
    assert exported.headers["Content-Disposition"] == f'attachment; filename="statement-{statement["number"]}.csv"'
    assert exported.headers["Cache-Control"] == "no-store"
    rows = rows_of(await exported.get_data(as_text=True))
    assert rows[0]["section"] == "statement" and rows[0]["item"] == statement["number"]
    balances = {row["item"]: row["amount"] for row in rows if row["section"] == "balance"}
    assert (balances["opening balance"], balances["closing balance"]) == (gs["opening"], gs["closing"])
    assert [(row["subject"], row["amount"], row["impressions"]) for row in rows if row["section"] == "site"] == [
        (site_id, "5.000000000000000001", "0")]
    assert sum(Decimal(row["amount"]) for row in rows if row["section"] == "movement") == Decimal(gs["movements"])


async def test_a_publisher_reads_only_its_own_statement(client, accounts):
    alice = await (await client.get("/api/publishers/statement", headers=bearer(accounts["alice"][0]))).get_json()
    bob = await (await client.get("/api/publishers/statement", headers=bearer(accounts["bob"][0]))).get_json()
    assert alice["number"] != bob["number"] and alice["ownerId"] != bob["ownerId"]
    assert [s["id"] for s in bob["subjects"]] == [accounts["bob"][1]] and bob["balances"][0]["closing"] == "2"
    # The query names no account: a wallet or an owner in it changes nothing.
    named = await client.get(f"/api/publishers/statement?wallet=0x{'1' * 40}&ownerId={alice['ownerId']}",
                             headers=bearer(accounts["bob"][0]))
    assert named.status_code == 200 and (await named.get_json())["number"] == bob["number"]
    # An advertiser without sites has no publisher statement, a publisher no advertiser statement.
    carol = await client.get("/api/publishers/statement", headers=bearer(accounts["carol"][0]))
    assert (carol.status_code, (await carol.get_json())["error"]) == (404, "not_found")
    missing = await client.get("/api/advertisers/statement.csv", headers=bearer(accounts["alice"][0]))
    assert missing.status_code == 404


async def test_without_a_session_or_the_reports_scope_nothing_is_read(client, accounts):
    token = accounts["alice"][0]
    for path in ("/api/publishers/statement", "/api/publishers/statement.csv", "/api/advertisers/statement",
                 "/api/advertisers/statement.csv"):
        refused = await client.get(path)
        assert (refused.status_code, (await refused.get_json())["error"]) == (401, "auth_required"), path
    reader = await issue(client, token, "reports:read")
    read = await client.get("/api/publishers/statement.csv", headers=bearer(reader["token"]))
    assert read.status_code == 200 and read.mimetype == "text/csv"
    manager = await issue(client, token, "sites:manage", name="manager")
    denied = await client.get("/api/publishers/statement", headers=bearer(manager["token"]))
    assert (denied.status_code, (await denied.get_json())["scope"]) == (403, "reports:read")


@pytest.mark.parametrize(("month", "says"), [
    ("2026-3", "YYYY-MM"), ("2026-13", "YYYY-MM"), ("2026-03", "has not begun"),
    ("2025-12", "opened in 2026-01")])
async def test_a_month_that_is_not_one_not_begun_or_before_the_account_is_refused(client, accounts, month, says):
    refused = await client.get(f"/api/publishers/statement?month={month}", headers=bearer(accounts["alice"][0]))
    body = await refused.get_json()
    assert (refused.status_code, body["error"], body["field"]) == (400, "invalid_month", "month")
    assert says in body["message"]


async def test_an_advertiser_reads_deposits_and_spend_per_campaign(client, accounts):
    token, campaign_id = accounts["carol"]
    january = await (await client.get("/api/advertisers/statement?month=2026-01", headers=bearer(token))).get_json()
    assert january["complete"] is True and january["number"].startswith("ST-2026-01-A")
    # The campaign's budget was funded (from outside the books) on January 1st and spent in February.
    assert [(b["part"], b["opening"], b["closing"]) for b in january["balances"]] == [
        ("balance", "0", "0"), ("budgets", "0", "10")]
    february = await (await client.get("/api/advertisers/statement?month=2026-02", headers=bearer(token))).get_json()
    assert [(b["part"], b["opening"], b["closing"]) for b in february["balances"]] == [
        ("balance", "0", "3"), ("budgets", "10", "9")]
    assert [(t["token"], t["opening"], t["closing"]) for t in february["totals"]] == [("G$", "10", "12")]
    assert [(s["id"], s["amount"]) for s in february["subjects"]] == [(campaign_id, "1")]
    assert {m["category"]: m["amount"] for m in february["movements"]} == {"deposit": "3", "spend": "-1"}
    rows = rows_of(await (await client.get("/api/advertisers/statement.csv?month=2026-02",
                                           headers=bearer(token))).get_data(as_text=True))
    # Amounts are signed numbers; the advertiser's own text (a campaign's name) is never a formula.
    assert [(row["subject"], row["name"], row["amount"]) for row in rows if row["section"] == "campaign"] == [
        (campaign_id, "'" + FORMULA, "1")]
    assert [row["amount"] for row in rows if row["section"] == "movement"] == ["3", "-1"]
