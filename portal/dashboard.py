"""The dashboard: the signed-in wallet's sites with impressions, clicks, CTR and earnings today, over 30 days and
ever, a 30-day earnings chart drawn on the server, the fill rate, and the form that registers a site."""

from __future__ import annotations

from typing import Any

from adnet.reporting import dashboard as reports
from adnet.reporting.charts import earnings_chart
from api.http import services
from api.sessions import current_wallet
from portal.pages import account_page, page, portal_blueprint

blueprint = portal_blueprint("dashboard")


async def dashboard_context() -> dict[str, Any]:
    """What the dashboard page shows, for the signed-in wallet."""
    report = await reports.publisher_dashboard(current_wallet(), services().clock.now())
    chart = earnings_chart([(day.day, day.earned) for day in report.daily],
                           title=f"G$ earned per day, last {reports.DASHBOARD_DAYS} days",
                           empty="Nothing earned in these days yet: earnings show here once your sites show ads.")
    return {"dashboard": report, "chart": chart, "days": reports.DASHBOARD_DAYS, "ctr": reports.click_through_rate}


@blueprint.get("/portal")
@account_page
async def dashboard() -> tuple[str, int]:
    """The signed-in wallet's dashboard."""
    return await page("portal/dashboard.html", "portal/dashboard.html", **await dashboard_context())
