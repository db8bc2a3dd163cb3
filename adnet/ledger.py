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

from tortoise import connections
from tortoise.backends.base.client import BaseDBAsyncClient
from tortoise.exceptions import IntegrityError

from adnet.db import placeholders
from adnet.ids import new_id
from adnet.models import LedgerAccount, LedgerTransaction

log = logging.getLogger(__name__)

TOKENS = ("G$", "SOV")
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


@dataclass(frozen=True, order=True)
class AccountKey:
    """Names a ledger account: what kind of holder, which one, in which token."""

    kind: str
    owner: str
    token: str

    def __post_init__(self) -> None:
        if self.kind not in ACCOUNT_KINDS:
            raise ValueError(f"unknown ledger account kind {self.kind!r}")
        if self.token not in TOKENS:
            raise ValueError(f"unknown token {self.token!r}")


def external(token: str) -> AccountKey:
    return AccountKey("external", "", token)


def platform(token: str) -> AccountKey:
    return AccountKey("platform", "", token)


def outstanding_claims(token: str) -> AccountKey:
    return AccountKey("claims", "", token)


def site(site_id: str, symbol: str = "G$") -> AccountKey:
    return AccountKey("site", site_id, symbol)


def campaign(campaign_id: str) -> AccountKey:
    return AccountKey("campaign", campaign_id, "G$")


def task_pool(task_id: str) -> AccountKey:
    return AccountKey("task", task_id, "G$")


def advertiser(advertiser_id: str, symbol: str = "G$") -> AccountKey:
    return AccountKey("advertiser", advertiser_id, symbol)


async def book(
    kind: str,
    reference: str,
    legs: list[tuple[AccountKey, int]],
    *,
    now: datetime,
    memo: str = "",
) -> LedgerTransaction:
    """Book one balanced transaction. Call inside ``in_transaction()`` with the change it pays for."""
    _check_balanced(legs)
    connection = connections.get("default")  # the caller's transaction
    transaction = LedgerTransaction(id=new_id("ltx"), kind=kind, reference=reference, memo=memo[:500], created_at=now)
    created_at = _CREATED_AT.to_db_value(now, transaction)
    marks = placeholders(connection, 5)
    try:
        await connection.execute_query(
            f"INSERT INTO ledger_transaction (id, kind, reference, memo, created_at) VALUES ({', '.join(marks)})",  # noqa: S608
            [transaction.id, kind, reference, transaction.memo, created_at])
    except IntegrityError:
        raise AlreadyBooked(f"{kind} {reference} is already booked") from None
    merged: dict[AccountKey, int] = defaultdict(int)
    for key, amount in legs:
        merged[key] += amount
    accounts = await _accounts(connection, merged)
    for key in sorted(merged):
        await _apply(connection, accounts[key], key, merged[key])
    marks = placeholders(connection, 4 * len(merged))
    rows = ", ".join(f"({', '.join(marks[4 * n:4 * n + 4])})" for n in range(len(merged)))
    values = [value for key in sorted(merged) for value in (transaction.id, accounts[key].id, Decimal(merged[key]),
                                                             created_at)]
    await connection.execute_query(
        f"INSERT INTO ledger_posting (transaction_id, account_id, amount, created_at) VALUES {rows}", values)  # noqa: S608
    return transaction


async def balance(key: AccountKey) -> int:
    """The current balance of an account (0 for one never used)."""
    account = await LedgerAccount.get_or_none(kind=key.kind, owner=key.owner, token=key.token)
    return int(account.balance) if account else 0


async def balances(kind: str, symbol: str = "G$") -> dict[str, int]:
    """Balances of every account of a kind, by owner (e.g. every campaign's remaining budget)."""
    rows = await LedgerAccount.filter(kind=kind, token=symbol).values_list("owner", "balance")
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


async def _accounts(connection: BaseDBAsyncClient, keys: Iterable[AccountKey]) -> dict[AccountKey, _Account]:
    """The account rows for ``keys``, in one read, creating the missing ones on first use. Creation is an insert
    that ignores a conflict, so a race to create the same account neither fails nor aborts the surrounding
    transaction."""
    wanted = set(keys)
    found = await _read_accounts(connection, wanted)
    missing = wanted - found.keys()
    if missing:
        await LedgerAccount.bulk_create(
            [LedgerAccount(kind=key.kind, owner=key.owner, token=key.token, balance=Decimal(0),
                           allow_negative=key.kind in NEGATIVE_KINDS) for key in sorted(missing)],
            ignore_conflicts=True,
        )
        found.update(await _read_accounts(connection, missing))
    return found


async def _read_accounts(connection: BaseDBAsyncClient, keys: set[AccountKey]) -> dict[AccountKey, _Account]:
    ordered = sorted(keys)
    marks = placeholders(connection, 3 * len(ordered))
    match = " OR ".join(f"(kind = {marks[3 * n]} AND owner = {marks[3 * n + 1]} AND token = {marks[3 * n + 2]})"
                        for n in range(len(ordered)))
    rows = await connection.execute_query_dict(
        f"SELECT id, kind, owner, token, balance, allow_negative, version FROM ledger_account WHERE {match}",  # noqa: S608
        [value for key in ordered for value in (key.kind, key.owner, key.token)])
    return {AccountKey(row["kind"], row["owner"], row["token"]): _account(row) for row in rows}


def _account(row: dict[str, Any]) -> _Account:
    return _Account(id=int(row["id"]), balance=int(Decimal(row["balance"])), allow_negative=bool(row["allow_negative"]),
                    version=int(row["version"]))


async def _apply(connection: BaseDBAsyncClient, account: _Account, key: AccountKey, amount: int) -> None:
    """Add ``amount`` to the account by compare-and-swap on its version, re-reading after a lost race."""
    marks = placeholders(connection, 4)
    swap = (f"UPDATE ledger_account SET balance = {marks[0]}, version = {marks[1]} "  # noqa: S608
            f"WHERE id = {marks[2]} AND version = {marks[3]}")
    reread = ("SELECT id, balance, allow_negative, version FROM ledger_account "  # noqa: S608
              f"WHERE id = {placeholders(connection, 1)[0]}")
    for _ in range(_MAX_SWAP_ATTEMPTS):
        updated = account.balance + amount
        if updated < 0 and not account.allow_negative:
            raise InsufficientFunds(key, account.balance, amount)
        swapped, _ = await connection.execute_query(swap, [Decimal(updated), account.version + 1, account.id,
                                                           account.version])
        if swapped == 1:
            account.balance, account.version = updated, account.version + 1
            return
        current = _account((await connection.execute_query_dict(reread, [account.id]))[0])
        account.balance, account.version = current.balance, current.version
    raise LedgerError(f"{key} is too contended to update")
