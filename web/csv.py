"""CSV answers, as both surfaces give them: an attachment with its file name, the body whole or in chunks."""

from __future__ import annotations

from collections.abc import AsyncIterator

from quart import Response

from adnet.reporting import breakdowns, statements
from adnet.reporting.buckets import Granularity

_NO_STORE = {"Cache-Control": "no-store"}


def csv_file(body: str | AsyncIterator[str], filename: str, *, no_store: bool = False) -> Response:
    """``body`` as the CSV file ``filename``; ``no_store`` keeps it out of every cache (a page's download of the
    account's own figures)."""
    headers = {"Content-Disposition": f'attachment; filename="{filename}"', **(_NO_STORE if no_store else {})}
    return Response(body, mimetype="text/csv", headers=headers)


def report_file(name: str, granularity: Granularity) -> str:
    """A report's CSV file name: ``name``, then ``-hourly`` for hours, then ``.csv``."""
    return f"{name}{'-hourly' if granularity == Granularity.HOUR else ''}.csv"


def breakdown_file(breakdown: breakdowns.Breakdown, amount: str, name: str, *, no_store: bool = False) -> Response:
    """A breakdown as CSV (``breakdowns.breakdown_csv``), named after ``name``, its dimension and its days."""
    return csv_file(breakdowns.breakdown_csv(breakdown, amount),
                    f"{name}-{breakdown.by}-{breakdown.start}-{breakdown.end}.csv", no_store=no_store)


def statement_file(statement: statements.Statement) -> Response:
    """A monthly statement as CSV (``statements.statement_csv``), named after its number, kept out of caches."""
    return csv_file(statements.statement_csv(statement), f"statement-{statement.number}.csv", no_store=True)
