"""Ledger rules: balanced, booked once, never overdrawn, exact under concurrency and for large amounts."""

import asyncio

import pytest
from tortoise.transactions import in_transaction

from adnet.money import ledger
from adnet.money.ledger import AlreadyBooked, InsufficientFunds, LedgerError
from adnet.money.models import LedgerPosting, LedgerTransaction

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


async def test_many_bookings_at_once_are_booked_each_as_alone(app, clock):
    await fund_site("site_a", 5 * G, clock.now())
    claims = ledger.outstanding_claims("G$")
    async with in_transaction():
        ids = await ledger.book_many([
            ledger.Booking("withdrawal", f"w{n}", [(ledger.site("site_a"), -G), (claims, G)], clock.now(), memo=f"{n}")
            for n in range(3)])
    assert len(set(ids)) == 3
    assert await ledger.balance(ledger.site("site_a")) == 2 * G and await ledger.balance(claims) == 3 * G
    booked = await LedgerTransaction.filter(kind="withdrawal").order_by("reference").values_list("id", "memo")
    assert sorted(booked) == sorted(zip(ids, ["0", "1", "2"], strict=True))
    for transaction_id in ids:
        postings = await LedgerPosting.filter(transaction_id=transaction_id).values_list("account__kind", "amount")
        assert sorted((kind, int(amount)) for kind, amount in postings) == [("claims", G), ("site", -G)]


async def test_a_debit_among_many_is_refused_as_it_would_be_in_turn(app, clock):
    """The first booking overdraws the site, which the second would make good again: their sum fits, but in turn
    the first is refused, so all of them are."""
    await fund_site("site_a", G, clock.now())
    claims = ledger.outstanding_claims("G$")
    with pytest.raises(InsufficientFunds):
        async with in_transaction():
            await ledger.book_many([
                ledger.Booking("withdrawal", "w1", [(ledger.site("site_a"), -2 * G), (claims, 2 * G)], clock.now()),
                ledger.Booking("topup", "d2", [(ledger.external("G$"), -2 * G), (ledger.site("site_a"), 2 * G)],
                               clock.now())])
    assert await ledger.balance(ledger.site("site_a")) == G
    assert not await ledger.is_booked("withdrawal", "w1") and not await ledger.is_booked("topup", "d2")


async def test_many_bookings_with_one_booked_before_book_none(app, clock):
    await fund_site("site_a", 5 * G, clock.now(), "d1")
    with pytest.raises(AlreadyBooked):
        async with in_transaction():
            await ledger.book_many([
                ledger.Booking("topup", reference, [(ledger.external("G$"), -G), (ledger.site("site_a"), G)],
                               clock.now()) for reference in ("d2", "d1")])
    assert await ledger.balance(ledger.site("site_a")) == 5 * G and not await ledger.is_booked("topup", "d2")


async def test_balances_of_several_accounts_in_one_read(app, clock):
    await fund_site("site_a", 2, clock.now(), "d1")
    assert await ledger.balances_of([ledger.site("site_a"), ledger.site("site_b")]) == {
        ledger.site("site_a"): 2, ledger.site("site_b"): 0}
    assert await ledger.balances_of([]) == {}
