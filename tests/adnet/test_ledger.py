"""Ledger rules: balanced, booked once, never overdrawn, exact under concurrency and for large amounts."""

import asyncio

import pytest
from tortoise.transactions import in_transaction

from adnet import ledger
from adnet.ledger import AlreadyBooked, InsufficientFunds, LedgerError
from adnet.models import LedgerPosting, LedgerTransaction

G = 10**18


async def fund_site(site_id: str, amount: int, now, reference: str = "dep-1") -> None:
    async with in_transaction():
        await ledger.book("topup", reference, [(ledger.external("G$"), -amount), (ledger.site(site_id), amount)],
                          now=now)


async def test_balanced_transaction_moves_exact_amounts(app, clock):
    await fund_site("site_a", 10**30 + 7, clock.now())
    assert await ledger.balance(ledger.site("site_a")) == 10**30 + 7
    assert await ledger.balance(ledger.external("G$")) == -(10**30 + 7)


async def test_unbalanced_or_float_postings_are_refused(app, clock):
    with pytest.raises(LedgerError):
        await ledger.book("x", "1", [(ledger.external("G$"), -5), (ledger.site("s"), 4)], now=clock.now())
    with pytest.raises(LedgerError):
        await ledger.book("x", "2", [(ledger.external("G$"), -0.5), (ledger.site("s"), 0.5)], now=clock.now())
    with pytest.raises(LedgerError):
        await ledger.book("x", "3", [(ledger.external("G$"), -5), (ledger.site("s", "SOV"), 5)], now=clock.now())
    assert await LedgerTransaction.all().count() == 0


async def test_same_reference_books_once(app, clock):
    await fund_site("site_a", 5 * G, clock.now())
    with pytest.raises(AlreadyBooked):
        await fund_site("site_a", 5 * G, clock.now())
    assert await ledger.balance(ledger.site("site_a")) == 5 * G


async def test_overdraft_is_refused_and_changes_nothing(app, clock):
    await fund_site("site_a", 3 * G, clock.now())
    with pytest.raises(InsufficientFunds):
        async with in_transaction():
            await ledger.book("withdrawal", "w1",
                              [(ledger.site("site_a"), -4 * G), (ledger.outstanding_claims("G$"), 4 * G)],
                              now=clock.now())
    assert await ledger.balance(ledger.site("site_a")) == 3 * G
    assert await ledger.balance(ledger.outstanding_claims("G$")) == 0
    assert not await ledger.is_booked("withdrawal", "w1")


async def test_concurrent_debits_never_overdraw(app, clock):
    await fund_site("site_a", 10 * G, clock.now())

    async def withdraw(n: int) -> bool:
        try:
            async with in_transaction():
                await ledger.book("withdrawal", f"w{n}",
                                  [(ledger.site("site_a"), -G), (ledger.outstanding_claims("G$"), G)],
                                  now=clock.now())
            return True
        except InsufficientFunds:
            return False

    results = await asyncio.gather(*(withdraw(n) for n in range(25)))
    assert sum(results) == 10
    assert await ledger.balance(ledger.site("site_a")) == 0
    assert await ledger.balance(ledger.outstanding_claims("G$")) == 10 * G
    postings = await LedgerPosting.filter(account__kind="site").values_list("amount", flat=True)
    assert sum(int(p) for p in postings) == 0


async def test_balances_by_kind(app, clock):
    await fund_site("site_a", 2, clock.now(), "d1")
    await fund_site("site_b", 3, clock.now(), "d2")
    assert await ledger.balances("site") == {"site_a": 2, "site_b": 3}
