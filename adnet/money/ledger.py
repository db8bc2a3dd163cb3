"""Double-entry bookkeeping: every money movement is one balanced transaction, booked once.

Amounts are Python ints in the smallest token unit. ``book`` must run inside a database transaction together
with whatever the movement pays for (an event, a completion, a claim), so both happen or neither does.

Guarantees, enforced by the database rather than by a check before a write:
- a (kind, reference) pair is booked at most once (unique key) - a second attempt raises ``AlreadyBooked``,
  and the surrounding database transaction must then be abandoned (PostgreSQL aborts it);
- an account's balance changes only by a compare-and-swap on its version, so concurrent bookings never lose an
  update, and an account that may not go negative refuses a debit it cannot cover (``InsufficientFunds``),
  with nothing of the transaction kept;
- accounts are updated in one global order, so concurrent transactions cannot deadlock each other.

A booking is on the path of every paid request (a tracking batch, a task completion), inside the caller's
transaction, so it is written as plain statements (the transaction, one read of its accounts, one
compare-and-swap per account, the postings in one insert): through the ORM they cost several times as much, all
of it while the transaction holds SQLite's single writer.

Sign convention: every account is what adnet owes its holder (a site's earnings, a campaign's remaining budget,
a task's pool, the platform's revenue, claims signed but not yet redeemed). ``external`` is the contra account
for tokens outside adnet's books: a deposit moves value from ``external`` into a holder's account, a redeemed
claim moves it back out, so ``-external`` is what the vault should hold.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from tortoise.exceptions import IntegrityError

from adnet.core.amounts import Token
from adnet.core.ids import new_id
from adnet.db import sql
from adnet.db.sql import Program, Statement
from adnet.money.models import LedgerAccount, LedgerTransaction

log = logging.getLogger(__name__)

# Accounts that may go below zero: only the contra account for the world outside the books.
NEGATIVE_KINDS = frozenset({"external"})
ACCOUNT_KINDS = frozenset(
    {"external", "site", "campaign", "task", "advertiser", "platform", "claims"}
)
_MAX_SWAP_ATTEMPTS = 50
_CREATED_AT = LedgerTransaction._meta.fields_map["created_at"]


class LedgerError(Exception):
    """A booking that cannot be made."""


class AlreadyBooked(LedgerError):
    """This (kind, reference) was booked before."""


class InsufficientFunds(LedgerError):
    """A debit larger than what the account holds."""

    def __init__(self, account: AccountKey, balance: int, amount: int) -> None:
        super().__init__(f"{account} holds {balance}, cannot pay {-amount}")
        self.account = account
        self.balance = balance
        self.amount = amount

    def __reduce__(self) -> tuple[type[InsufficientFunds], tuple[AccountKey, int, int]]:
        """Pickled with its own arguments: a writer process (``adnet.db.writer_process``) sends it back."""
        return type(self), (self.account, self.balance, self.amount)


@dataclass(frozen=True, order=True)
class AccountKey:
    """Names a ledger account: what kind of holder, which one, in which token."""

    kind: str
    owner: str
    token: str  # a Token: a symbol given as text is made one

    def __post_init__(self) -> None:
        if self.kind not in ACCOUNT_KINDS:
            raise ValueError(f"unknown ledger account kind {self.kind!r}")
        object.__setattr__(self, "token", Token(self.token))  # a symbol read from the database, or a Token


def external(token: str) -> AccountKey:
    return AccountKey("external", "", token)


def platform(token: str = Token.GS) -> AccountKey:
    return AccountKey("platform", "", token)


def outstanding_claims(token: str) -> AccountKey:
    return AccountKey("claims", "", token)


def site(site_id: str, token: str = Token.GS) -> AccountKey:
    return AccountKey("site", site_id, token)


def campaign(campaign_id: str) -> AccountKey:
    return AccountKey("campaign", campaign_id, Token.GS)


def task_pool(task_id: str) -> AccountKey:
    return AccountKey("task", task_id, Token.GS)


def advertiser(advertiser_id: str, token: str = Token.GS) -> AccountKey:
    return AccountKey("advertiser", advertiser_id, token)


@dataclass(frozen=True)
class Booking:
    """One balanced transaction of ``book_many``."""

    kind: str
    reference: str
    legs: list[tuple[AccountKey, int]]
    now: datetime
    memo: str = ""


async def book(
    kind: str,
    reference: str,
    legs: list[tuple[AccountKey, int]],
    *,
    now: datetime,
    memo: str = "",
) -> LedgerTransaction:
    """Book one balanced transaction. Call inside ``in_transaction()`` with the change it pays for."""
    transaction_id = (await book_many([Booking(kind, reference, legs, now, memo)]))[0]
    return LedgerTransaction(id=transaction_id, kind=kind, reference=reference, memo=memo[:500], created_at=now)


async def book_many(bookings: list[Booking]) -> list[str]:
    """Book several balanced transactions at once, in order, and return their ids: each is booked exactly as by
    ``book`` (its own row and postings; a debit refused as it would be after the ones before it), while each
    account's balance moves once by their sum and the rows are written in one statement per table. Call inside
    ``in_transaction()``; ``AlreadyBooked`` or ``InsufficientFunds`` from any of them leaves the caller's
    transaction to be abandoned, as from ``book``."""
    return await sql.run(booking_program(bookings))


def booking_program(bookings: list[Booking]) -> Program[list[str]]:
    """``book_many`` as a program of statements (``adnet.db.sql``), for writes that include their bookings in
    a program of their own."""
    for booking in bookings:
        _check_balanced(booking.legs)
    ids = [new_id("ltx") for _ in bookings]
    created = [_CREATED_AT.to_db_value(booking.now, LedgerTransaction) for booking in bookings]
    try:
        yield Statement("INSERT INTO ledger_transaction (id, kind, reference, memo, created_at) VALUES :rows",
                        {"rows": [(transaction_id, booking.kind, booking.reference, booking.memo[:500], created_at)
                                  for transaction_id, booking, created_at in zip(ids, bookings, created,
                                                                                 strict=True)]})
    except IntegrityError:
        raise AlreadyBooked(", ".join(f"{booking.kind} {booking.reference}" for booking in bookings)
                            + " is already booked") from None
    postings: list[tuple[str, AccountKey, int, Any]] = []
    moves: dict[AccountKey, _Move] = {}
    for transaction_id, booking, created_at in zip(ids, bookings, created, strict=True):
        merged: dict[AccountKey, int] = defaultdict(int)
        for key, amount in booking.legs:
            merged[key] += amount
        for key in sorted(merged):
            postings.append((transaction_id, key, merged[key], created_at))
            moves.setdefault(key, _Move()).add(merged[key])
    accounts = yield from _accounts(moves)
    for key in sorted(moves):
        yield from _apply(accounts[key], key, moves[key])
    yield Statement("INSERT INTO ledger_posting (transaction_id, account_id, amount, created_at) VALUES :rows",
                    {"rows": [(transaction_id, accounts[key].id, Decimal(amount), created_at)
                              for transaction_id, key, amount, created_at in postings]})
    return ids


async def balance(key: AccountKey) -> int:
    """The current balance of an account (0 for one never used)."""
    account = await LedgerAccount.get_or_none(kind=key.kind, owner=key.owner, token=key.token)
    return int(account.balance) if account else 0


async def balances_of(keys: Iterable[AccountKey]) -> dict[AccountKey, int]:
    """The current balances of ``keys`` in one read (0 for an account never used)."""
    wanted = set(keys)
    if not wanted:
        return {}
    found = await sql.run(_read_accounts(wanted))
    return {key: found[key].balance if key in found else 0 for key in wanted}


async def balances(kind: str, token: Token = Token.GS) -> dict[str, int]:
    """Balances of every account of a kind, by owner (e.g. every campaign's remaining budget)."""
    rows = await LedgerAccount.filter(kind=kind, token=token).values_list("owner", "balance")
    return {owner: int(amount) for owner, amount in rows}


async def is_booked(kind: str, reference: str) -> bool:
    return await LedgerTransaction.exists(kind=kind, reference=reference)


def _check_balanced(legs: list[tuple[AccountKey, int]]) -> None:
    if not legs:
        raise LedgerError("a transaction needs postings")
    totals: dict[str, int] = defaultdict(int)
    for key, amount in legs:
        if type(amount) is not int:
            raise LedgerError(f"amounts are integers in the smallest unit, got {amount!r}")
        totals[key.token] += amount
    unbalanced = {token: total for token, total in totals.items() if total != 0}
    if unbalanced:
        raise LedgerError(f"postings do not balance: {unbalanced}")


@dataclass
class _Account:
    """The columns of a ledger account row that a booking uses."""

    id: int
    balance: int
    allow_negative: bool
    version: int


def _accounts(keys: Iterable[AccountKey]) -> Program[dict[AccountKey, _Account]]:
    """The account rows for ``keys``, in one read, creating the missing ones on first use. Creation is an insert
    that ignores a conflict, so a race to create the same account neither fails nor aborts the surrounding
    transaction."""
    wanted = set(keys)
    found = yield from _read_accounts(wanted)
    missing = sorted(wanted - found.keys())
    if missing:
        yield Statement("INSERT INTO ledger_account (kind, owner, token, balance, allow_negative, version) "
                        "VALUES :rows ON CONFLICT (kind, owner, token) DO NOTHING",
                        {"rows": [(key.kind, key.owner, key.token, Decimal(0), key.kind in NEGATIVE_KINDS, 0)
                                  for key in missing]})
        found.update((yield from _read_accounts(set(missing))))
    return found


def _read_accounts(keys: set[AccountKey]) -> Program[dict[AccountKey, _Account]]:
    ordered = sorted(keys)
    match = " OR ".join(f"(kind = :kind{n} AND owner = :owner{n} AND token = :token{n})" for n in range(len(ordered)))
    params = {f"{column}{n}": value for n, key in enumerate(ordered)
              for column, value in (("kind", key.kind), ("owner", key.owner), ("token", key.token))}
    result = yield Statement(
        f"SELECT id, kind, owner, token, balance, allow_negative, version FROM ledger_account WHERE {match}",  # noqa: S608
        params)
    return {AccountKey(row["kind"], row["owner"], row["token"]): _account(row) for row in result.rows}


def _account(row: dict[str, Any]) -> _Account:
    return _Account(id=int(row["id"]), balance=int(Decimal(row["balance"])), allow_negative=bool(row["allow_negative"]),
                    version=int(row["version"]))


@dataclass
class _Move:
    """What the bookings of a ``book_many`` do to one account: their sum, and the lowest their running sum falls
    to, which the balance must cover (a debit is refused as it would be after the bookings before it)."""

    total: int = 0
    low: int = 0

    def add(self, amount: int) -> None:
        self.total += amount
        self.low = min(self.low, self.total)


_SWAP = "UPDATE ledger_account SET balance = :balance, version = :next WHERE id = :id AND version = :version"
_REREAD = "SELECT id, balance, allow_negative, version FROM ledger_account WHERE id = :id"


def _apply(account: _Account, key: AccountKey, move: _Move) -> Program[None]:
    """Add ``move.total`` to the account by compare-and-swap on its version, re-reading after a lost race."""
    for _ in range(_MAX_SWAP_ATTEMPTS):
        if account.balance + move.low < 0 and not account.allow_negative:
            raise InsufficientFunds(key, account.balance, move.low)
        updated = account.balance + move.total
        swapped = yield Statement(_SWAP, {"balance": Decimal(updated), "next": account.version + 1, "id": account.id,
                                          "version": account.version})
        if swapped.count == 1:
            account.balance, account.version = updated, account.version + 1
            return
        current = _account((yield Statement(_REREAD, {"id": account.id})).rows[0])
        account.balance, account.version = current.balance, current.version
    raise LedgerError(f"{key} is too contended to update")
