"""The ledger audit behind ``adnet audit``: proof, from the books and the chain, that nothing was lost or made up.

It checks, reading everything and trusting nothing it reads:

- every transaction has postings and balances per token;
- every account's balance equals the sum of its postings, and only the ``external`` contra account is negative;
- the ``claims`` account equals the amounts of the claims still outstanding (issued, not redeemed or expired);
- per token, what adnet owes (every account but ``external``: balances, budgets, pools, outstanding claims) equals
  ``-external`` and does not exceed what the vault holds on the chain.

Each failed check is one line in ``AuditReport.problems``; the command exits non-zero when there is any.
The last check's figures (``owed`` and ``vault_cover``) are also what health and metrics report between audits.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from adnet.chain.client import ChainClient, ChainUnavailable
from adnet.core.amounts import Token, to_decimal_string
from adnet.money import ledger
from adnet.money.models import Claim, ClaimStatus, LedgerAccount, LedgerPosting, LedgerTransaction

log = logging.getLogger(__name__)

_BATCH = 20_000


@dataclass(frozen=True)
class Cover:
    """Of one token, what adnet owes and what the vault holds."""

    token: Token
    owed: int
    held: int

    @property
    def short(self) -> bool:
        return self.owed > self.held


@dataclass
class AuditReport:
    """What the audit found: per token, what adnet owes and what the vault holds, and every problem."""

    transactions: int = 0
    postings: int = 0
    liabilities: dict[str, int] = field(default_factory=dict)
    vault_holdings: dict[str, int] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def lines(self) -> list[str]:
        """The report as a person reads it."""
        out = [f"{self.transactions} transactions, {self.postings} postings"]
        for token in sorted(set(self.liabilities) | set(self.vault_holdings)):
            owed = to_decimal_string(self.liabilities.get(token, 0))
            held = self.vault_holdings.get(token)
            out.append(f"{token}: owed {owed}, vault holds {to_decimal_string(held) if held is not None else '?'}")
        out.extend(f"PROBLEM: {problem}" for problem in self.problems)
        out.append("audit passed" if self.ok else f"audit failed: {len(self.problems)} problem(s)")
        return out


async def audit(chain: ChainClient | None) -> AuditReport:
    """Audit the books, and against the vault's balances when ``chain`` is given."""
    report = AuditReport()
    accounts = {row["id"]: row for row in await LedgerAccount.all().values(
        "id", "kind", "owner", "token", "balance", "allow_negative")}
    await _check_transactions(report, accounts)
    _check_accounts(report, accounts)
    await _check_outstanding_claims(report, accounts)
    if chain is not None:
        await _check_vault(report, chain)
    for problem in report.problems:
        log.warning("audit problem=%s", problem)
    return report


async def _check_transactions(report: AuditReport, accounts: dict[int, dict[str, Any]]) -> None:
    """Sum postings per transaction and token, and per account, in batches of postings ordered by id."""
    per_transaction: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    per_account: dict[int, int] = defaultdict(int)
    last_id = 0
    while True:
        rows = await LedgerPosting.filter(id__gt=last_id).order_by("id").limit(_BATCH).values_list(
            "id", "transaction_id", "account_id", "amount")
        if not rows:
            break
        for posting_id, transaction_id, account_id, amount in rows:
            value = int(Decimal(amount))
            account = accounts.get(account_id)
            if account is None:
                report.problems.append(f"posting {posting_id} names unknown account {account_id}")
                continue
            per_transaction[transaction_id][account["token"]] += value
            per_account[account_id] += value
        report.postings += len(rows)
        last_id = rows[-1][0]
    transaction_ids = await LedgerTransaction.all().values_list("id", "kind", "reference")
    report.transactions = len(transaction_ids)
    for transaction_id, kind, reference in transaction_ids:
        totals = per_transaction.get(transaction_id)
        if not totals:
            report.problems.append(f"transaction {kind}:{reference} has no postings")
            continue
        unbalanced = {token: total for token, total in totals.items() if total}
        if unbalanced:
            report.problems.append(f"transaction {kind}:{reference} does not balance: {unbalanced}")
    for account_id, account in accounts.items():
        stored = int(Decimal(account["balance"]))
        if stored != per_account.get(account_id, 0):
            report.problems.append(f"account {_name(account)} holds {stored} but its postings sum to "
                                   f"{per_account.get(account_id, 0)}")


def owed_per_token(accounts: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """What adnet owes per token: the sum of every account but ``external`` (balances, budgets, pools,
    outstanding claims), from rows of ``kind``, ``token`` and ``balance``."""
    owed: dict[str, int] = defaultdict(int)
    for account in accounts:
        if account["kind"] != "external":
            owed[account["token"]] += int(Decimal(account["balance"]))
    return dict(owed)


async def owed() -> dict[str, int]:
    """What adnet owes per token now, counted as the audit counts it, in one read of the accounts."""
    return owed_per_token(await LedgerAccount.exclude(kind="external").values("kind", "token", "balance"))


async def vault_cover(chain: ChainClient, owed: Mapping[str, int]) -> list[Cover]:
    """Per token, ``owed`` beside what the vault holds on the chain; ChainUnavailable when it cannot be read."""
    return [Cover(token, owed.get(token, 0), await chain.token_balance(token, chain.vault_address))
            for token in Token]


def _check_accounts(report: AuditReport, accounts: dict[int, dict[str, Any]]) -> None:
    external: dict[str, int] = defaultdict(int)
    for account in accounts.values():
        value = int(Decimal(account["balance"]))
        if account["kind"] == "external":
            external[account["token"]] += value
        elif value < 0:
            report.problems.append(f"account {_name(account)} is negative: {value}")
    owed = report.liabilities = owed_per_token(accounts.values())
    for token in set(owed) | set(external):
        if owed.get(token, 0) != -external.get(token, 0):
            report.problems.append(f"{token}: accounts owe {owed.get(token, 0)} but external shows "
                                   f"{-external.get(token, 0)} deposited")


async def _check_outstanding_claims(report: AuditReport, accounts: dict[int, dict[str, Any]]) -> None:
    outstanding: dict[str, int] = defaultdict(int)
    for symbol, amount in await Claim.filter(status=ClaimStatus.ISSUED).values_list("token_symbol", "amount"):
        outstanding[symbol] += int(Decimal(amount))
    booked = {account["token"]: int(Decimal(account["balance"])) for account in accounts.values()
              if _key(account) == ledger.outstanding_claims(account["token"])}
    for token in set(outstanding) | set(booked):
        if outstanding.get(token, 0) != booked.get(token, 0):
            report.problems.append(f"{token}: outstanding claims total {outstanding.get(token, 0)} but the claims "
                                   f"account holds {booked.get(token, 0)}")


async def _check_vault(report: AuditReport, chain: ChainClient) -> None:
    try:
        covers = await vault_cover(chain, report.liabilities)
    except ChainUnavailable as exc:
        report.problems.append(f"the vault's balances cannot be read ({exc})")
        return
    for cover in covers:
        report.vault_holdings[cover.token] = cover.held
        if cover.short:
            report.problems.append(f"{cover.token}: adnet owes {cover.owed} but the vault holds only {cover.held}")


def _key(account: dict[str, Any]) -> ledger.AccountKey:
    return ledger.AccountKey(account["kind"], account["owner"], account["token"])


def _name(account: dict[str, Any]) -> str:
    return f"{account['kind']}:{account['owner']}:{account['token']}"
