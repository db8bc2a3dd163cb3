"""Unique reach and frequency of an advertiser's campaign (``adnet.reporting.reach``): JSON and CSV."""

from __future__ import annotations

from pydantic import Field
from quart import Blueprint, Response
from quart_rate_limiter import rate_limit
from quart_schema import document_response

from adnet.accounts.commands import ApiKeyScope
from adnet.reporting import reach
from adnet.reporting.buckets import Granularity
from adnet.reporting.commands import ReportPeriod
from adnet.services import Services
from api.http import answer, with_query
from api.openapi import CSV_FILE, other_answer
from api.schemas import Day, Schema, refusals
from api.sessions import require_account
from web.csv import csv_file, report_file
from web.limits import ACCOUNT_LIMIT
from web.sessions import current_wallet

blueprint = Blueprint("api_reach", __name__, url_prefix="/api")


class ReachRowOut(Schema):
    """Reach of one day (or UTC hour), creative or site."""

    key: str = Field(description="the day (YYYY-MM-DD) or UTC hour (YYYY-MM-DDTHH:00:00Z), creative id or site id")
    reach: int = Field(description="distinct viewers")
    impressions: int = Field(description="billed impressions with a viewer id")
    average_frequency: str = Field(description="impressions per viewer, two decimals")


class ReachOut(Schema):
    campaign_id: str
    first: Day = Field(serialization_alias="from")
    last: Day = Field(serialization_alias="to")
    granularity: Granularity = Field(description="what the rows of ``days`` are: UTC days, or UTC hours")
    reach: int = Field(description="distinct viewers over the range (exact)")
    impressions: int = Field(description="billed impressions with a viewer id over the range")
    average_frequency: str = Field(description="impressions per viewer over the range, two decimals")
    distribution: dict[str, int] = Field(description="viewers per impressions in the range: 1, 2, 3, 4-5, 6-10, >10")
    days: list[ReachRowOut]
    creatives: list[ReachRowOut]
    sites: list[ReachRowOut]


@blueprint.get("/advertisers/campaigns/<campaign_id>/reach")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_account(ApiKeyScope.REPORTS)
@with_query(ReportPeriod)
@document_response(ReachOut)
@refusals(400, 403, 404)
async def campaign_reach(campaign_id: str, query_args: ReportPeriod, run: Services) -> Response:
    """Unique reach and frequency from ``from`` to ``to`` (default: the last 30 days, at most 92): distinct viewers
    over the range and per day (or UTC hour: ``granularity=hour``, the last 14 days), creative and site, average
    frequency and the frequency distribution (docs/reports.md)."""
    start, end = query_args.days(run.clock.today())
    return answer(reach_out(await reach.reach_report(current_wallet(), campaign_id, start, end,
                                                     query_args.granularity)))


@blueprint.get("/advertisers/campaigns/<campaign_id>/reach.csv")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_account(ApiKeyScope.REPORTS)
@with_query(ReportPeriod)
@refusals(400, 403, 404)
@other_answer(200, "Reach and frequency as CSV.", "text/csv", headers=CSV_FILE)
async def campaign_reach_csv(campaign_id: str, query_args: ReportPeriod, run: Services) -> Response:
    """The same figures as CSV: a row per day (or hour), creative and site, a total row and the distribution."""
    start, end = query_args.days(run.clock.today())
    result = await reach.reach_report(current_wallet(), campaign_id, start, end, query_args.granularity)
    return csv_file(reach.reach_csv(result), report_file(f"{campaign_id}-reach-{start}-{end}", result.granularity))


def reach_out(result: reach.ReachReport) -> ReachOut:
    def rows(found: list[reach.ReachRow]) -> list[ReachRowOut]:
        return [ReachRowOut(key=row.key, reach=row.reach, impressions=row.impressions,
                            average_frequency=f"{row.average:.2f}") for row in found]

    totals = result.totals
    return ReachOut(campaign_id=result.campaign_id, first=result.start, last=result.end,
                    granularity=result.granularity, reach=totals.reach,
                    impressions=totals.impressions, average_frequency=f"{totals.average:.2f}",
                    distribution=totals.distribution, days=rows(result.days), creatives=rows(result.creatives),
                    sites=rows(result.sites))
