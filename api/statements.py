"""Monthly statements (rules in ``adnet.reporting.statements``), as JSON and as CSV:

- ``GET /api/publishers/statement[.csv]``: the signed-in wallet's publisher account, every site of it;
- ``GET /api/advertisers/statement[.csv]``: the signed-in wallet's advertiser account.

``month`` is a UTC calendar month (YYYY-MM), the current one by default (a statement to date). A month not yet
begun, or before the account was opened, is refused (400 ``invalid_month``). Each statement is the caller's own:
there is no way to name another account's. A session or an API key with ``reports:read``.
"""

from __future__ import annotations

from datetime import datetime

from pydantic import Field
from quart import Blueprint, Response
from quart_rate_limiter import rate_limit
from quart_schema import document_response

from adnet.accounts.commands import ApiKeyScope
from adnet.core.amounts import Token
from adnet.reporting import statements
from adnet.reporting.commands import StatementQuery
from api.http import answer, with_query
from api.openapi import CSV_FILE, other_answer
from api.schemas import AmountText, Schema, Time, refusals
from api.sessions import require_account
from web.csv import statement_file
from web.limits import ACCOUNT_LIMIT
from web.sessions import current_wallet

blueprint = Blueprint("api_statements", __name__, url_prefix="/api")


class BalanceOut(Schema):
    """One part of the account's money in one token: ``closing`` is ``opening`` plus ``movements``, exactly."""

    part: str = Field(description="balance (a site's claimable, an advertiser's unallocated), budgets (campaigns' "
                                  "budgets and tasks' pools), or total")
    token: Token
    opening: AmountText
    movements: AmountText
    closing: AmountText


class MovementOut(Schema):
    """The month's postings of one kind on one subject, in one token; negative for money out."""

    category: statements.MovementCategory
    label: str
    subject: str = Field(description="the site or campaign (or task without campaign); empty for the unallocated "
                                     "balance")
    part: str
    token: Token
    amount: AmountText


class SubjectOut(Schema):
    """A site (publishers) or campaign (advertisers) with its billed impressions and clicks, paid conversions and the
    G$ it earned or spent in the month."""

    id: str
    name: str
    impressions: int
    clicks: int
    conversions: int
    amount: AmountText


class StatementWithdrawalOut(Schema):
    """A withdrawal made in the month, as it stands now: ``txHash`` is the transaction that redeemed its claim."""

    id: str
    at: Time
    subject: str
    token: str
    amount: AmountText
    status: str
    tx_hash: str | None


class StatementDepositOut(Schema):
    """A deposit (a top-up) credited in the month."""

    at: Time
    subject: str
    token: str
    amount: AmountText
    tx_hash: str


class StatementExchangeOut(Schema):
    """An exchange of a site's balance between SOV and G$ made in the month."""

    id: str
    at: Time
    subject: str
    from_token: str
    to_token: str
    amount_in: AmountText
    amount_out: AmountText


class StatementOut(Schema):
    """A month's statement: its stable number, the balances, every movement, the figures per site or campaign, and
    the withdrawals, deposits and exchanges of the month."""

    number: str = Field(examples=["ST-2026-11-P3F9A1C2B0"])
    kind: statements.StatementKind
    owner_id: str
    wallet: str
    month: str = Field(examples=["2026-11"])
    complete: bool = Field(description="false for the current month: a statement to date")
    balances: list[BalanceOut]
    totals: list[BalanceOut]
    movements: list[MovementOut]
    subjects: list[SubjectOut]
    withdrawals: list[StatementWithdrawalOut]
    deposits: list[StatementDepositOut]
    exchanges: list[StatementExchangeOut]


def statement_out(statement: statements.Statement) -> StatementOut:
    def balance_out(balance: statements.Balance) -> BalanceOut:
        return BalanceOut(part=balance.part, token=balance.token, opening=balance.opening,
                          movements=balance.movements, closing=balance.closing)

    return StatementOut(
        number=statement.number, kind=statement.kind, owner_id=statement.owner_id, wallet=statement.wallet,
        month=str(statement.month), complete=statement.complete,
        balances=[balance_out(balance) for balance in statement.balances],
        totals=[balance_out(balance) for balance in statement.totals],
        movements=[MovementOut(category=movement.category, label=movement.label, subject=movement.subject,
                               part=movement.part, token=movement.token, amount=movement.amount)
                   for movement in statement.movements],
        subjects=[SubjectOut.model_validate(subject) for subject in statement.subjects],
        withdrawals=[StatementWithdrawalOut.model_validate(line) for line in statement.withdrawals],
        deposits=[StatementDepositOut.model_validate(line) for line in statement.deposits],
        exchanges=[StatementExchangeOut.model_validate(line) for line in statement.exchanges])


async def _publisher(query: StatementQuery, now: datetime) -> statements.Statement:
    return await statements.publisher_statement(current_wallet(), query.asked(now), now)


async def _advertiser(query: StatementQuery, now: datetime) -> statements.Statement:
    return await statements.advertiser_statement(current_wallet(), query.asked(now), now)


@blueprint.get("/publishers/statement")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_account(ApiKeyScope.REPORTS)
@with_query(StatementQuery)
@document_response(StatementOut)
@refusals(400, 404)
async def publisher_statement(query_args: StatementQuery, now: datetime) -> Response:
    """The month's statement of the wallet's publisher account: opening and closing balances per token, earnings by
    site, top-ups, withdrawals (with their redeem transactions), exchanges, and billed impressions, clicks and paid
    conversions per site. 404 when the wallet registered no site."""
    return answer(statement_out(await _publisher(query_args, now)))


@blueprint.get("/publishers/statement.csv")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_account(ApiKeyScope.REPORTS)
@with_query(StatementQuery)
@refusals(400, 404)
@other_answer(200, "The statement as CSV.", "text/csv", headers=CSV_FILE)
async def publisher_statement_csv(query_args: StatementQuery, now: datetime) -> Response:
    """The same statement as CSV (``adnet.reporting.statements.statement_csv``: one table, a ``section`` column)."""
    return statement_file(await _publisher(query_args, now))


@blueprint.get("/advertisers/statement")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_account(ApiKeyScope.REPORTS)
@with_query(StatementQuery)
@document_response(StatementOut)
@refusals(400, 404)
async def advertiser_statement(query_args: StatementQuery, now: datetime) -> Response:
    """The month's statement of the wallet's advertiser account: opening and closing balances (unallocated, and in
    budgets), deposits, allocations, spend per campaign, refunds of unspent budgets, withdrawals, and billed
    impressions, clicks and paid conversions per campaign. 404 when the wallet has no advertiser account."""
    return answer(statement_out(await _advertiser(query_args, now)))


@blueprint.get("/advertisers/statement.csv")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_account(ApiKeyScope.REPORTS)
@with_query(StatementQuery)
@refusals(400, 404)
@other_answer(200, "The statement as CSV.", "text/csv", headers=CSV_FILE)
async def advertiser_statement_csv(query_args: StatementQuery, now: datetime) -> Response:
    """The same statement as CSV."""
    return statement_file(await _advertiser(query_args, now))
