"""Monthly statements in the portal (rules in ``adnet.reporting.statements``, the same as the API's): a printable
page per month for the publisher (``/portal/statement``) and the advertiser (``/portal/advertise/statement``),
each with a month picker and its CSV. A month that is not one, has not begun or is before the account is explained
beside the picker, and the current month's statement is shown meanwhile."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Any

from quart import Response, render_template, request, url_for

from adnet.core.errors import DomainError
from adnet.reporting import statements
from adnet.reporting.commands import StatementQuery
from portal.forms import command_of
from portal.pages import account_page, portal_blueprint
from web.context import injected
from web.csv import statement_file
from web.errors import status_of
from web.sessions import current_wallet

blueprint = portal_blueprint("statements")

PUBLISHER_PAGE = "/portal/statement"
ADVERTISER_PAGE = "/portal/advertise/statement"
Loader = Callable[[str, statements.Month, datetime], Awaitable[statements.Statement]]


async def _asked(load: Loader, now: datetime) -> tuple[statements.Statement, DomainError | None]:
    """The statement the query asks for or, when its month is refused, the current month's beside the refusal."""
    try:
        return await load(current_wallet(), command_of(StatementQuery, request.args).asked(now), now), None
    except DomainError as refused:
        if refused.code != "invalid_month":
            raise
        return await load(current_wallet(), statements.Month.of(now), now), refused


async def _page(load: Loader, endpoint: str, now: datetime) -> tuple[str, int]:
    statement, error = await _asked(load, now)
    context: dict[str, Any] = {
        "statement": statement, "error": error, "failed_form": "statement",
        "action": url_for(f"portal_statements.{endpoint}"),
        "csv_action": url_for(f"portal_statements.{endpoint}_csv", month=str(statement.month)),
        "month_value": request.args.get("month", str(statement.month)) if error else str(statement.month),
        "latest": str(statements.Month.of(now)),
        "labels": statements.CATEGORY_LABELS,
        "names": {subject.id: subject.name for subject in statement.subjects},
    }
    return await render_template("portal/statement.html", **context), status_of(error) if error else 200


async def _csv(load: Loader, now: datetime) -> Response:
    return statement_file(await load(current_wallet(), command_of(StatementQuery, request.args).asked(now), now))


@blueprint.get(PUBLISHER_PAGE)
@account_page
@injected
async def publisher_statement(now: datetime) -> tuple[str, int]:
    """The publisher's statement of a month (the current one by default), printable."""
    return await _page(statements.publisher_statement, "publisher_statement", now)


@blueprint.get(f"{PUBLISHER_PAGE}.csv")
@account_page
@injected
async def publisher_statement_csv(now: datetime) -> Response:
    """The same statement as CSV."""
    return await _csv(statements.publisher_statement, now)


@blueprint.get(ADVERTISER_PAGE)
@account_page
@injected
async def advertiser_statement(now: datetime) -> tuple[str, int]:
    """The advertiser's statement of a month (the current one by default), printable."""
    return await _page(statements.advertiser_statement, "advertiser_statement", now)


@blueprint.get(f"{ADVERTISER_PAGE}.csv")
@account_page
@injected
async def advertiser_statement_csv(now: datetime) -> Response:
    """The same statement as CSV."""
    return await _csv(statements.advertiser_statement, now)
