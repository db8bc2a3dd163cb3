"""The dashboard: the signed-in wallet's sites with impressions, clicks, CTR and earnings today, over 30 days and
ever, an earnings chart drawn on the server over a range of days (the last 30 unless ``from`` and ``to`` say
otherwise; per hour with ``granularity=hour``), the fill rate, and the form that registers a site."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import date, datetime
from typing import Any

from quart import request, url_for

from adnet.reporting import dashboard as reports
from adnet.reporting.buckets import Buckets, Granularity, hourly_reach
from adnet.reporting.charts import earnings_chart
from adnet.reporting.commands import MAX_DAYS
from adnet.reporting.statements import publisher_overview
from adnet.services import Services
from portal.forms import report_asked
from portal.pages import account_page, page, portal_blueprint
from portal.zones import viewer_zone
from web.context import injected
from web.errors import status_of
from web.sessions import current_wallet

blueprint = portal_blueprint("dashboard")


async def dashboard_context(run: Services, now: datetime) -> dict[str, Any]:
    """What the dashboard page shows, for the signed-in wallet, with the earnings of the range the query asks for,
    and the month-to-date card of its publisher account (``overview``; None before its first site)."""
    report = await reports.publisher_dashboard(current_wallet(), now)
    return {"dashboard": report, "days": reports.DASHBOARD_DAYS, "ctr": reports.click_through_rate,
            "overview": await publisher_overview(current_wallet(), now), **await earnings_context(run)}


async def earnings_context(run: Services) -> dict[str, Any]:
    """The dashboard's earnings panel, over the days its query asks for."""
    async def earned(first: date, last: date, granularity: Granularity) -> list[tuple[date, int]]:
        return [(day.day, day.earned)
                for day in await reports.daily_earnings(current_wallet(), first, last, granularity)]

    return await earnings_panel(run, url_for("portal_dashboard.dashboard"), "Earnings", "G$ earned per day", earned,
                                "Nothing earned in these days yet: earnings show here once your sites show ads.")


async def earnings_panel(run: Services, action: str, heading: str, title: str,
                         series: Callable[[date, date, Granularity], Awaitable[list[tuple[date, int]]]],
                         empty: str) -> dict[str, Any]:
    """What ``portal/_earnings.html`` shows: the chart of ``series`` over the days from ``from`` to ``to`` in the
    query (the last 30 days by default), per day or per UTC hour (``granularity``, the hours written in the viewer's
    time zone), with the form that asks ``action`` for the panel alone; a range that is not one is refused
    (``earnings_error``) and the default range shown."""
    first, last, granularity, error = report_asked(request.args, run.clock.today())
    viewer = viewer_zone()
    hourly = granularity == Granularity.HOUR
    shown = [(moment.astimezone(viewer.zone) if isinstance(moment, datetime) else moment, amount)
             for moment, amount in await series(first, last, granularity)]
    chart = earnings_chart(shown, title=f"{title}, {first} to {last}", empty=empty,
                           zone=viewer.name if hourly else None)
    return {"chart": chart, "earnings_first": first, "earnings_last": last, "earnings_error": error,
            "earnings_range": Buckets(granularity, first, last), "viewer": viewer,
            "hourly_from": max(first, hourly_reach(run.clock.today())),
            "earnings_max_days": MAX_DAYS, "earnings_action": action, "earnings_heading": heading,
            "earnings_values": {"from": request.args.get("from", ""), "to": request.args.get("to", "")}}


@blueprint.get("/portal")
@account_page
@injected
async def dashboard(run: Services, now: datetime) -> tuple[str, int]:
    """The signed-in wallet's dashboard; its earnings form asks for the earnings panel alone (htmx), answered 400
    with the panel and the refusal beside the field for a range that is not one."""
    context = await dashboard_context(run, now)
    error = context["earnings_error"]
    return await page("portal/dashboard.html", "portal/_earnings.html", status_of(error) if error else 200,
                      **context)
