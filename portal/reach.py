"""Reach and frequency in the portal (``adnet.reporting.reach``, the same as the API's): a section of the campaign's
report that htmx loads for the report's range, and a page of its own at the same URL without htmx."""

from __future__ import annotations

from quart import Response, request

from adnet.reporting import reach
from adnet.reporting.charts import tally_chart
from adnet.reporting.commands import Period
from adnet.services import Services
from portal.forms import command_of
from portal.pages import account_page, page, portal_blueprint
from web.context import injected
from web.csv import csv_file
from web.sessions import current_wallet

blueprint = portal_blueprint("reach")


@blueprint.get("/portal/advertise/campaigns/<campaign_id>/reach")
@account_page
@injected
async def advertise_reach(campaign_id: str, run: Services) -> tuple[str, int]:
    """Distinct viewers, average frequency and the frequency distribution (a bar chart and its table) from ``from``
    to ``to``."""
    start, end = command_of(Period, request.args).days(run.clock.today())
    result = await reach.reach_report(current_wallet(), campaign_id, start, end)
    chart = tally_chart([(f"{bucket} times", viewers) for bucket, viewers in result.totals.distribution.items()],
                        ident="reach-chart", title="Viewers by impressions seen")
    return await page("portal/advertise/reach.html", "portal/advertise/_reach.html", reach=result, chart=chart)


@blueprint.get("/portal/advertise/campaigns/<campaign_id>/reach.csv")
@account_page
@injected
async def advertise_reach_csv(campaign_id: str, run: Services) -> Response:
    """The same figures as CSV (the API's ``reach.csv``)."""
    start, end = command_of(Period, request.args).days(run.clock.today())
    result = await reach.reach_report(current_wallet(), campaign_id, start, end)
    return csv_file(reach.reach_csv(result), f"{result.campaign_id}-reach-{start}-{end}.csv", no_store=True)
