"""Reach and frequency in the portal (``adnet.reporting.reach``, the same as the API's): a section of the campaign's
report that htmx loads for the report's range, and a page of its own at the same URL without htmx."""

from __future__ import annotations

from quart import Response, request

from adnet.reporting import reach
from adnet.reporting.charts import tally_chart
from adnet.reporting.commands import ReportPeriod
from adnet.services import Services
from portal.forms import command_of
from portal.pages import account_page, page, portal_blueprint
from portal.zones import viewer_zone
from web.context import injected
from web.csv import csv_file, report_file
from web.sessions import current_wallet

blueprint = portal_blueprint("reach")


@blueprint.get("/portal/advertise/campaigns/<campaign_id>/reach")
@account_page
@injected
async def advertise_reach(campaign_id: str, run: Services) -> tuple[str, int]:
    """Distinct viewers, average frequency and the frequency distribution (a bar chart and its table) from ``from``
    to ``to``, per day or per UTC hour (``granularity``) written in the viewer's time zone."""
    asked = command_of(ReportPeriod, request.args)
    start, end = asked.days(run.clock.today())
    result = await reach.reach_report(current_wallet(), campaign_id, start, end, asked.granularity)
    chart = tally_chart([(f"{bucket} times", viewers) for bucket, viewers in result.totals.distribution.items()],
                        ident="reach-chart", title="Viewers by impressions seen")
    return await page("portal/advertise/reach.html", "portal/advertise/_reach.html", reach=result, chart=chart,
                      viewer=viewer_zone())


@blueprint.get("/portal/advertise/campaigns/<campaign_id>/reach.csv")
@account_page
@injected
async def advertise_reach_csv(campaign_id: str, run: Services) -> Response:
    """The same figures as CSV (the API's ``reach.csv``)."""
    asked = command_of(ReportPeriod, request.args)
    start, end = asked.days(run.clock.today())
    result = await reach.reach_report(current_wallet(), campaign_id, start, end, asked.granularity)
    return csv_file(reach.reach_csv(result), report_file(f"{result.campaign_id}-reach-{start}-{end}",
                                                         result.granularity), no_store=True)
