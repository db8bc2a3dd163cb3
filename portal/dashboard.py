"""The dashboard: the signed-in wallet's sites with impressions, clicks, CTR and earnings today, over 30 days and
ever, an earnings chart drawn on the server over a range of days (the last 30 unless ``from`` and ``to`` say
otherwise), the fill rate, and the form that registers a site."""

from __future__ import annotations

from typing import Any

from quart import request

from adnet.reporting import dashboard as reports
from adnet.reporting.charts import earnings_chart
from adnet.reporting.commands import MAX_DAYS
from api.errors import status_of
from api.http import services
from api.sessions import current_wallet
from portal.forms import days_asked
from portal.pages import account_page, page, portal_blueprint

blueprint = portal_blueprint("dashboard")


async def dashboard_context() -> dict[str, Any]:
    """What the dashboard page shows, for the signed-in wallet, with the earnings of the range the query asks for."""
    report = await reports.publisher_dashboard(current_wallet(), services().clock.now())
    return {"dashboard": report, "days": reports.DASHBOARD_DAYS, "ctr": reports.click_through_rate,
            **await earnings_context()}


async def earnings_context() -> dict[str, Any]:
    """The earnings panel: the chart of the days from ``from`` to ``to`` in the query (the last 30 days by default);
    a range that is not one is refused (``earnings_error``) and the default range shown."""
    first, last, error = days_asked(request.args, services().clock.today())
    daily = await reports.daily_earnings(current_wallet(), first, last)
    chart = earnings_chart([(day.day, day.earned) for day in daily], title=f"G$ earned per day, {first} to {last}",
                           empty="Nothing earned in these days yet: earnings show here once your sites show ads.")
    return {"chart": chart, "earnings_first": first, "earnings_last": last, "earnings_error": error,
            "earnings_max_days": MAX_DAYS,
            "earnings_values": {"from": request.args.get("from", ""), "to": request.args.get("to", "")}}


@blueprint.get("/portal")
@account_page
async def dashboard() -> tuple[str, int]:
    """The signed-in wallet's dashboard; its earnings form asks for the earnings panel alone (htmx), answered 400
    with the panel and the refusal beside the field for a range that is not one."""
    context = await dashboard_context()
    error = context["earnings_error"]
    return await page("portal/dashboard.html", "portal/_earnings.html", status_of(error) if error else 200,
                      **context)
