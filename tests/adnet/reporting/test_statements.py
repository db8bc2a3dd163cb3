"""Monthly statements: months and numbers, every posting in one movement, and opening + movements = closing, to the
smallest unit, against the ledger; on postings of every kind, and on a month of the demo's history."""

from __future__ import annotations

import csv
import io
import itertools
from collections import defaultdict
from datetime import UTC, datetime, timedelta

import pytest
from tortoise.transactions import in_transaction

from adnet.campaigns.models import Campaign
from adnet.conversions.models import Conversion
from adnet.core.amounts import Token
from adnet.core.errors import Invalid, NotFound
from adnet.core.wallets import dev_accounts
from adnet.delivery.models import TrafficDaily
from adnet.money import ledger
from adnet.money.models import Deposit, DepositStatus, LedgerAccount, LedgerPosting, Withdrawal
from adnet.reporting.statements import (
    Balance,
    DepositLine,
    ExchangeLine,
    Month,
    Movement,
    Posting,
    Statement,
    StatementKind,
    Subject,
    WithdrawalLine,
    advertiser_statement,
    category_of,
    check_month,
    publisher_overview,
    publisher_statement,
    statement_csv,
    statement_number,
    summarise,
)
from adnet.reporting.statements import (
    MovementCategory as Category,
)
from adnet.tasks.models import Task
from tests.adnet.test_demo import load_full_demo
from tests.factories import G, make_advertiser, make_campaign, make_site, wallet_address

NOV = Month(2026, 11)


def test_a_month_is_written_yyyy_mm_and_knows_its_bounds():
    assert Month.parse("2026-11") == NOV and str(NOV) == "2026-11"
    assert (NOV.start, NOV.end) == (datetime(2026, 11, 1, tzinfo=UTC), datetime(2026, 12, 1, tzinfo=UTC))
    assert (Month(2026, 12).next, Month(2026, 1).previous) == (Month(2027, 1), Month(2025, 12))
    assert (Month(2024, 2).first_day.isoformat(), Month(2024, 2).last_day.isoformat()) == ("2024-02-01", "2024-02-29")
    assert Month.of(datetime(2026, 11, 30, 23, 59)) == NOV
    for text in ("2026-13", "2026-1", "26-11", "2026-11-01", "", None, 202611, "0999-01"):
        with pytest.raises(Invalid) as refused:
            Month.parse(text)
        assert (refused.value.code, refused.value.field) == ("invalid_month", "month")


def test_the_statement_number_is_the_same_each_time_and_differs_by_owner_month_and_kind():
    number = statement_number(StatementKind.PUBLISHER, "pub_abc", NOV)
    assert number == statement_number(StatementKind.PUBLISHER, "pub_abc", Month.parse("2026-11"))
    assert number.startswith("ST-2026-11-P") and len(number) == len("ST-2026-11-P") + 10
    assert len({number, statement_number(StatementKind.PUBLISHER, "pub_abd", NOV),
                statement_number(StatementKind.PUBLISHER, "pub_abc", NOV.next),
                statement_number(StatementKind.ADVERTISER, "pub_abc", NOV)}) == 4


def test_a_month_in_the_future_or_before_the_account_is_refused():
    opened, now = datetime(2026, 3, 15, tzinfo=UTC), datetime(2026, 11, 2, tzinfo=UTC)
    check_month(Month(2026, 3), opened, now)
    check_month(NOV, opened, now)
    for month, key, value in ((Month(2026, 12), "latest", "2026-11"), (Month(2026, 2), "earliest", "2026-03")):
        with pytest.raises(Invalid) as refused:
            check_month(month, opened, now)
        assert (refused.value.code, refused.value.details[key]) == ("invalid_month", value)


def test_every_kind_of_posting_has_its_movement():
    assert [category_of("site", kind) for kind in (
        "ad_billing", "conversion_billing", "deposit", "claim_issue", "claim_expire", "claim_redeem", "exchange",
        "test_funding")] == [Category.EARNINGS, Category.EARNINGS, Category.DEPOSIT, Category.WITHDRAWAL,
                             Category.RELEASED, Category.WITHDRAWAL, Category.EXCHANGE, Category.OTHER]
    assert [category_of("campaign", kind) for kind in (
        "ad_billing", "conversion_billing", "claim_issue", "claim_expire", "campaign_allocation", "budget_return",
        "demo_funding")] == [Category.SPEND] * 4 + [Category.ALLOCATION, Category.REFUND, Category.FUNDING]
    assert [category_of("advertiser", kind) for kind in (
        "deposit", "campaign_allocation", "task_allocation", "budget_return", "claim_issue")] == [
        Category.DEPOSIT, Category.ALLOCATION, Category.ALLOCATION, Category.REFUND, Category.WITHDRAWAL]


def test_summarise_puts_every_posting_in_one_movement_and_closes_each_part_exactly():
    site_a, site_b = ledger.site("site_a"), ledger.site("site_b")
    sov = ledger.site("site_a", Token.SOV)
    odd = 10**18 + 7  # amounts no float would keep
    postings = [Posting(site_a, "ad_billing", odd), Posting(site_a, "ad_billing", 3), Posting(site_b, "ad_billing", 5),
                Posting(site_a, "claim_issue", -odd), Posting(site_a, "claim_expire", odd),
                Posting(site_a, "exchange", -2), Posting(sov, "exchange", 9), Posting(site_b, "deposit", 11),
                Posting(site_b, "mystery", 1)]
    balances, movements = summarise({site_a: 100, site_b: 0, sov: 0}, postings,
                                    {site_a: "site_a", site_b: "site_b", sov: "site_a"})
    assert balances == [Balance("balance", Token.GS, 100, odd + 3 + 5 - odd + odd - 2 + 11 + 1),
                        Balance("balance", Token.SOV, 0, 9)]
    assert sum(movement.amount for movement in movements) == sum(posting.amount for posting in postings)
    earned = {movement.subject: movement.amount for movement in movements if movement.category == Category.EARNINGS}
    assert earned == {"site_a": odd + 3, "site_b": 5}
    assert {movement.category for movement in movements} == {
        Category.EARNINGS, Category.WITHDRAWAL, Category.RELEASED, Category.EXCHANGE, Category.DEPOSIT,
        Category.OTHER}
    # A part with nothing in it still shows its G$ balance, at zero.
    assert summarise({}, [], {}, ("balance", "budgets")) == (
        [Balance("balance", Token.GS, 0, 0), Balance("budgets", Token.GS, 0, 0)], [])


def test_the_csv_lists_every_part_with_signed_amounts_and_hashes():
    at = datetime(2026, 11, 3, 12, tzinfo=UTC)
    statement = Statement(
        number="ST-2026-11-P0123456789", kind=StatementKind.PUBLISHER, owner_id="pub_x", wallet="0xabc", month=NOV,
        complete=True, balances=[Balance("balance", Token.GS, 5 * G, -G), Balance("balance", Token.SOV, 0, 2 * G)],
        movements=[Movement(Category.WITHDRAWAL, "site_a", "balance", Token.GS, -3 * G),
                   Movement(Category.EXCHANGE, "site_a", "balance", Token.SOV, 2 * G)],
        subjects=[Subject("site_a", "=evil.example", 10, 2, 1, 2 * G)],
        withdrawals=[WithdrawalLine("wd_1", at, "site_a", "G$", 3 * G, "redeemed", "0x" + "ab" * 32)],
        deposits=[DepositLine(at, "site_a", "G$", 4, "0x" + "cd" * 32)],
        exchanges=[ExchangeLine("ex_1", at, "site_a", "G$", "SOV", G, 2 * G)])
    rows = list(csv.DictReader(io.StringIO(statement_csv(statement))))
    assert [(row["section"], row["item"], row["token"], row["amount"]) for row in rows if row["section"] in (
        "balance", "movement", "exchange")] == [
        ("balance", "opening balance", "G$", "5"), ("balance", "closing balance", "G$", "4"),
        ("balance", "opening balance", "SOV", "0"), ("balance", "closing balance", "SOV", "2"),
        ("balance", "opening total", "G$", "5"), ("balance", "closing total", "G$", "4"),
        ("balance", "opening total", "SOV", "0"), ("balance", "closing total", "SOV", "2"),
        ("movement", "withdrawal", "G$", "-3"), ("movement", "exchange", "SOV", "2"),
        ("exchange", "ex_1", "G$", "-1"), ("exchange", "ex_1", "SOV", "2")]
    [site] = [row for row in rows if row["section"] == "site"]
    assert (site["name"], site["impressions"], site["clicks"], site["conversions"], site["amount"]) == (
        "'=evil.example", "10", "2", "1", "2")
    [withdrawal] = [row for row in rows if row["section"] == "withdrawal"]
    assert (withdrawal["amount"], withdrawal["status"], withdrawal["tx_hash"], withdrawal["at"]) == (
        "-3", "redeemed", "0x" + "ab" * 32, "2026-11-03T12:00:00Z")
    [deposit] = [row for row in rows if row["section"] == "deposit"]
    assert (deposit["amount"], deposit["tx_hash"]) == ("0.000000000000000004", "0x" + "cd" * 32)


async def _book(kind: str, legs: list, at: datetime) -> None:
    async with in_transaction():
        await ledger.book(kind, f"ref_{kind}_{at.timestamp()}_{legs[0][1]}", legs, now=at)


async def _ledger_sum(account: ledger.AccountKey, before: datetime) -> int:
    found = await LedgerAccount.get_or_none(kind=account.kind, owner=account.owner, token=account.token)
    if found is None:
        return 0
    amounts = await LedgerPosting.filter(account_id=found.id, created_at__lt=before).values_list("amount", flat=True)
    return sum(int(amount) for amount in amounts)


async def test_a_publisher_statement_reconciles_with_the_ledger_month_after_month(app, clock):
    opened = datetime(2026, 1, 10, tzinfo=UTC)
    site = await make_site(now=opened)
    other = await make_site(await site.publisher, now=opened)
    wallet = (await site.publisher).wallet
    gs, sov, external = ledger.site(site.id), ledger.site(site.id, Token.SOV), ledger.external(Token.GS)
    claims = ledger.outstanding_claims(Token.GS)
    jan, feb = datetime(2026, 1, 20, tzinfo=UTC), datetime(2026, 2, 3, tzinfo=UTC)
    await _book("ad_billing", [(external, -7 * G), (gs, 5 * G), (ledger.site(other.id), G), (ledger.platform(), G)],
                jan)
    await _book("deposit", [(external, -3 * G), (gs, 3 * G)], jan)
    await _book("claim_issue", [(gs, -4 * G), (claims, 4 * G)], jan + timedelta(days=1))
    await _book("claim_expire", [(gs, 4 * G), (claims, -4 * G)], feb)
    await _book("exchange", [(gs, -G), (external, G), (sov, 2 * G), (ledger.external(Token.SOV), -2 * G)], feb)
    await _book("ad_billing", [(external, -G - 1), (gs, G + 1)], datetime(2026, 2, 28, 23, 59, 59, tzinfo=UTC))
    clock.advance(days=60)  # 2026-03-02

    statements = [await publisher_statement(wallet, Month(2026, month), clock.now()) for month in (1, 2, 3)]
    for statement, following in itertools.pairwise(statements):
        assert [(b.token, b.closing) for b in statement.balances] == [(b.token, b.opening) for b in following.balances]
    for statement in statements:
        for balance in statement.balances:
            accounts = [ledger.site(site.id, balance.token), ledger.site(other.id, balance.token)]
            assert balance.opening == sum([await _ledger_sum(key, statement.month.start) for key in accounts])
            assert balance.closing == sum([await _ledger_sum(key, statement.month.end) for key in accounts])
    january, february, march = statements
    assert january.complete and not march.complete
    assert [(b.token, b.opening, b.closing) for b in january.balances] == [(Token.GS, 0, 5 * G), (Token.SOV, 0, 0)]
    assert {s.id: s.amount for s in january.subjects} == {site.id: 5 * G, other.id: G}
    assert (january.movement_total(Category.DEPOSIT), january.movement_total(Category.WITHDRAWAL)) == (3 * G, -4 * G)
    assert february.movement_total(Category.RELEASED) == 4 * G
    assert (february.movement_total(Category.EXCHANGE), february.movement_total(Category.EXCHANGE, Token.SOV)) == (
        -G, 2 * G)
    assert {s.id: s.amount for s in february.subjects} == {site.id: G + 1, other.id: 0}
    assert [(b.token, b.closing) for b in march.balances] == [
        (Token.GS, await ledger.balance(gs) + await ledger.balance(ledger.site(other.id))),
        (Token.SOV, await ledger.balance(sov))]
    assert march.number == (await publisher_statement(wallet, Month(2026, 3), clock.now())).number

    with pytest.raises(Invalid):
        await publisher_statement(wallet, Month(2025, 12), clock.now())
    with pytest.raises(Invalid):
        await publisher_statement(wallet, Month(2026, 4), clock.now())
    with pytest.raises(NotFound):
        await publisher_statement(wallet_address(), Month(2026, 3), clock.now())


async def test_an_advertiser_statement_shows_deposits_spend_per_campaign_and_refunds(app, clock):
    advertiser = await make_advertiser()
    campaign = await make_campaign(advertiser, budget=50 * G)
    unallocated, budget = ledger.advertiser(advertiser.id), ledger.campaign(campaign.id)
    external, now = ledger.external(Token.GS), datetime(2026, 1, 5, tzinfo=UTC)
    await _book("deposit", [(external, -20 * G), (unallocated, 20 * G)], now)
    await _book("campaign_allocation", [(unallocated, -15 * G), (budget, 15 * G)], now)
    await _book("ad_billing", [(budget, -4 * G), (ledger.site("site_x"), 3 * G), (ledger.platform(), G)], now)
    await _book("budget_return", [(budget, -11 * G), (unallocated, 11 * G)], now + timedelta(days=1))
    statement = await advertiser_statement(advertiser.wallet, Month(2026, 1), now + timedelta(days=2))
    # make_campaign funds its budget (50) from outside the books on January 1st: "other" money, in the sums too.
    assert statement.movement_total(Category.OTHER) == 50 * G
    assert [(b.part, b.opening, b.closing) for b in statement.balances] == [
        ("balance", 0, 16 * G), ("budgets", 0, 50 * G)]
    assert statement.totals[0].closing == await ledger.balance(unallocated) + await ledger.balance(budget)
    assert [(s.id, s.name, s.amount) for s in statement.subjects] == [(campaign.id, campaign.name, 4 * G)]
    assert (statement.movement_total(Category.DEPOSIT), statement.movement_total(Category.REFUND)) == (20 * G, 0)
    assert [(m.part, m.amount) for m in statement.movements if m.category == Category.REFUND] == [
        ("balance", 11 * G), ("budgets", -11 * G)]


async def test_a_deleted_drafts_budget_stays_in_the_months_it_held_money(app, clock):
    advertiser = await make_advertiser()
    draft = await make_campaign(advertiser, budget=10 * G, funded=0)
    unallocated, budget = ledger.advertiser(advertiser.id), ledger.campaign(draft.id)
    await _book("deposit", [(ledger.external(Token.GS), -10 * G), (unallocated, 10 * G)],
                datetime(2026, 1, 5, tzinfo=UTC))
    await _book("campaign_allocation", [(unallocated, -6 * G), (budget, 6 * G)], datetime(2026, 1, 6, tzinfo=UTC))
    await _book("budget_return", [(budget, -6 * G), (unallocated, 6 * G)], datetime(2026, 2, 2, tzinfo=UTC))
    await Campaign.filter(id=draft.id).delete()  # as adnet.tasks.drafts deletes a draft, its money returned
    now = datetime(2026, 2, 3, tzinfo=UTC)
    january, february = [await advertiser_statement(advertiser.wallet, Month(2026, month), now) for month in (1, 2)]
    assert [(b.part, b.opening, b.closing) for b in january.balances] == [("balance", 0, 4 * G), ("budgets", 0, 6 * G)]
    assert [(b.part, b.opening, b.closing) for b in february.balances] == [
        ("balance", 4 * G, 10 * G), ("budgets", 6 * G, 0)]
    assert [(s.id, s.name) for s in january.subjects] == []
    assert {m.subject for m in january.movements if m.part == "budgets"} == {draft.id}


async def test_a_month_of_the_demo_history_reconciles_for_publisher_and_advertiser(app, settings, clock):
    clock.advance(days=12, hours=15)  # 2026-01-13: the history runs from mid-December into January
    summary = await load_full_demo(app, settings, clock)
    publisher_wallet = dev_accounts()[2].address.lower()
    advertiser_wallet = dev_accounts()[1].address.lower()
    months = [Month(2025, 12), Month(2026, 1)]
    sites, accounts = summary["siteIds"], []
    for site_id in sites:
        accounts += [ledger.site(site_id, token) for token in Token]

    december, january = [await publisher_statement(publisher_wallet, month, clock.now()) for month in months]
    for statement in (december, january):
        for balance in statement.balances:
            keys = [key for key in accounts if key.token == balance.token]
            assert balance.opening == sum([await _ledger_sum(key, statement.month.start) for key in keys])
            assert balance.closing == sum([await _ledger_sum(key, statement.month.end) for key in keys])
            assert balance.opening + sum(m.amount for m in statement.movements if m.token == balance.token) == \
                balance.closing
        # Earnings by site are what the traffic of the month earned (ads) plus its paid conversions.
        earned: dict[str, int] = defaultdict(int)
        for site_id, amount in await TrafficDaily.filter(
                site_id__in=sites, reason="", day__gte=statement.month.first_day,
                day__lte=statement.month.last_day).values_list("site_id", "publisher_amount"):
            earned[site_id] += int(amount)
        for site_id, amount in await Conversion.filter(site_id__in=sites, paid=True,
                                                       received_at__gte=statement.month.start,
                                                       received_at__lt=statement.month.end).values_list(
                "site_id", "publisher_amount"):
            earned[site_id] += int(amount)
        assert {s.id: s.amount for s in statement.subjects} == {site_id: earned[site_id] for site_id in sites}
        assert sum(s.impressions for s in statement.subjects) > 0
    assert december.balances[0].opening == 0 and december.movement_total(Category.EARNINGS) > 0
    assert [(b.token, b.closing) for b in december.balances] == [(b.token, b.opening) for b in january.balances]
    assert january.balances[0].closing == sum([await ledger.balance(ledger.site(site_id)) for site_id in sites])
    withdrawn = await Withdrawal.filter(site_id__in=sites).select_related("claim")
    assert [(w.id, int(w.amount)) for w in withdrawn] == [(w.id, w.amount) for w in january.withdrawals]
    assert january.movement_total(Category.WITHDRAWAL) == -sum(int(w.amount) for w in withdrawn)

    statements = [await advertiser_statement(advertiser_wallet, month, clock.now()) for month in months]
    for statement in statements:
        assert all(b.opening + b.movements == b.closing for b in statement.balances)
        assert sum(b.movements for b in statement.totals) == sum(m.amount for m in statement.movements)
    december_ad, january_ad = statements
    assert [(b.part, b.closing) for b in december_ad.balances] == [(b.part, b.opening) for b in january_ad.balances]
    keys = [ledger.advertiser(summary["advertiserId"]), *[ledger.campaign(c) for c in summary["campaignIds"]],
            *[ledger.task_pool(t) for t in await _task_ids(summary["advertiserId"])]]
    assert january_ad.totals[0].closing == sum([await ledger.balance(key) for key in keys])
    spent = {s.id: s.amount for s in january_ad.subjects if s.id in summary["campaignIds"]}
    assert all(amount > 0 for amount in spent.values()) and len(spent) == 3
    deposits = await Deposit.filter(advertiser_id=summary["advertiserId"], status=DepositStatus.CREDITED)
    assert january_ad.movement_total(Category.DEPOSIT) == sum(int(d.amount) for d in deposits) > 0
    assert [d.tx_hash for d in january_ad.deposits] == [d.tx_hash for d in deposits]

    overview = await publisher_overview(publisher_wallet, clock.now())
    assert overview is not None and overview.month == Month(2026, 1)
    assert overview.earned == january.movement_total(Category.EARNINGS)
    assert overview.last_withdrawal is not None and overview.last_withdrawal.id == withdrawn[-1].id


async def _task_ids(advertiser_id: str) -> list[str]:
    return [str(task_id) for task_id in await Task.filter(advertiser_id=advertiser_id).values_list("id", flat=True)]
