"""Breakdowns of billed traffic and conversions (rules in ``adnet.reporting.breakdowns``), as JSON and as CSV:

- ``GET /api/advertisers/reports/breakdown[.csv]``: the advertiser's spend, impressions, clicks, CTR, conversions,
  conversion rate, cost per conversion, value and ROAS by site (domain), placement, country, device, day, hour,
  campaign or goal, over its campaigns or one (``campaignId``);
- ``GET /api/publishers/sites/<siteId>/breakdown[.csv]``: the site's earnings, impressions, clicks, CTR and the
  conversions paid for its clicks by placement, country, device, day or hour, for its owner and its members.

A session or an API key with ``reports:read``; ranges of UTC days as every report (``from``, ``to``, at most 92; by
hour, the last 14 days at most).
"""

from __future__ import annotations

from datetime import date

from pydantic import Field
from quart import Blueprint, Response
from quart_rate_limiter import rate_limit
from quart_schema import document_response

from adnet.accounts.commands import ApiKeyScope
from adnet.core.amounts import Token
from adnet.reporting import breakdowns
from adnet.reporting.commands import AdvertiserBreakdownQuery, Dimension, SiteBreakdownQuery
from adnet.services import Services
from api.http import answer, with_query
from api.openapi import CSV_FILE, other_answer
from api.schemas import AmountText, Day, Schema, refusals
from api.sessions import require_account
from web.csv import breakdown_file
from web.limits import ACCOUNT_LIMIT
from web.sessions import current_wallet

blueprint = Blueprint("api_reports", __name__, url_prefix="/api")


class BreakdownRowOut(Schema):
    """One row: what ``by`` names (``unknown`` for an empty placement, or a country or device not known), its billed
    impressions and clicks, the CTR (clicks per impression, six decimals), the G$ spent or earned (paid conversions
    included), and its conversions (docs/conversions.md). Ratios have six decimals, rounded down, and are null over
    nothing; ``costPerConversion``, ``value`` and ``roas`` are the advertiser's only (null in a site's)."""

    key: str = Field(description="the domain, placement label, country code (ISO 3166-1), device kind, day "
                                 "(YYYY-MM-DD), hour (its UTC start, YYYY-MM-DDTHH:00:00Z), campaign id or goal id")
    label: str | None = Field(None, description="the campaign's or goal's name, by campaign or goal")
    impressions: int
    clicks: int
    ctr: str = Field(description="clicks per impression, e.g. \"0.012500\"")
    amount: AmountText = Field(description="G$ spent (advertisers) or earned (publishers), paid conversions included")
    conversions: int = Field(description="attributed conversions (advertisers), paid ones (publishers)")
    conversion_rate: str | None = Field(description="conversions per billed click, e.g. \"0.050000\"; null without "
                                                    "billed clicks")
    cost_per_conversion: AmountText | None = Field(None, description="G$ spent per conversion (0 without)")
    value: AmountText | None = Field(None, description="the value reported for the conversions, in G$")
    roas: str | None = Field(None, description="value per G$ spent, e.g. \"2.500000\"; null without a valued "
                                               "conversion or spend")


class BreakdownOut(Schema):
    """The rows, the most spent or earned first (by day or hour, the oldest first), and their total (``key``
    "total"). By goal, rows carry conversion figures only (traffic is not split by goal)."""

    by: Dimension
    first: Day = Field(serialization_alias="from")
    last: Day = Field(serialization_alias="to")
    token: Token
    rows: list[BreakdownRowOut]
    total: BreakdownRowOut


def breakdown_out(breakdown: breakdowns.Breakdown, amount: str) -> BreakdownOut:
    advertiser = amount == "spend"

    def row_out(row: breakdowns.Row) -> BreakdownRowOut:
        return BreakdownRowOut(key=row.key if row.key is not None else "total", label=row.label,
                               impressions=row.impressions, clicks=row.clicks, ctr=breakdowns.ctr_text(row),
                               amount=getattr(row, amount), conversions=row.conversions,
                               conversion_rate=row.conversion_rate,
                               cost_per_conversion=row.cost_per_conversion if advertiser else None,
                               value=row.value if advertiser else None, roas=row.roas if advertiser else None)

    return BreakdownOut(by=breakdown.by, first=breakdown.start, last=breakdown.end, token=Token.GS,
                        rows=[row_out(row) for row in breakdown.rows], total=row_out(breakdown.total))


async def _advertiser(query: AdvertiserBreakdownQuery, today: date) -> breakdowns.Breakdown:
    start, end = query.days(today)
    return await breakdowns.advertiser_breakdown(current_wallet(), query.by, start, end, query.campaign_id)


async def _site(site_id: str, query: SiteBreakdownQuery, today: date) -> breakdowns.Breakdown:
    start, end = query.days(today)
    return await breakdowns.site_breakdown(current_wallet(), site_id, query.by, start, end)


@blueprint.get("/advertisers/reports/breakdown")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_account(ApiKeyScope.REPORTS)
@with_query(AdvertiserBreakdownQuery)
@document_response(BreakdownOut)
@refusals(400, 403, 404)
async def advertiser_breakdown(query_args: AdvertiserBreakdownQuery, run: Services) -> Response:
    """The advertiser's billed impressions, clicks, CTR, spend, conversions, conversion rate, cost per conversion,
    value and ROAS from ``from`` to ``to`` by ``by``: site (its domain), placement, country, device, day, campaign or
    goal; over all its campaigns, or ``campaignId``'s."""
    return answer(breakdown_out(await _advertiser(query_args, run.clock.today()), "spend"))


@blueprint.get("/advertisers/reports/breakdown.csv")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_account(ApiKeyScope.REPORTS)
@with_query(AdvertiserBreakdownQuery)
@refusals(400, 403, 404)
@other_answer(200, "The breakdown as CSV.", "text/csv", headers=CSV_FILE)
async def advertiser_breakdown_csv(query_args: AdvertiserBreakdownQuery, run: Services) -> Response:
    """The same breakdown as CSV: a header, a line per row, a ``total`` line; ``spend`` in G$, then ``conversions``,
    ``conversion_rate``, ``cost_per_conversion``, ``conversion_value`` and ``roas``."""
    breakdown = await _advertiser(query_args, run.clock.today())
    return breakdown_file(breakdown, "spend", query_args.campaign_id or "campaigns")


@blueprint.get("/publishers/sites/<site_id>/breakdown")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_account(ApiKeyScope.REPORTS)
@with_query(SiteBreakdownQuery)
@document_response(BreakdownOut)
@refusals(400, 403, 404)
async def site_breakdown(site_id: str, query_args: SiteBreakdownQuery, run: Services) -> Response:
    """The site's billed impressions, clicks, CTR, earnings and paid conversions from ``from`` to ``to`` by ``by``:
    placement, country, device or day."""
    return answer(breakdown_out(await _site(site_id, query_args, run.clock.today()), "earned"))


@blueprint.get("/publishers/sites/<site_id>/breakdown.csv")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_account(ApiKeyScope.REPORTS)
@with_query(SiteBreakdownQuery)
@refusals(400, 403, 404)
@other_answer(200, "The breakdown as CSV.", "text/csv", headers=CSV_FILE)
async def site_breakdown_csv(site_id: str, query_args: SiteBreakdownQuery, run: Services) -> Response:
    """The same breakdown as CSV: a header, a line per row, a ``total`` line; ``earned`` in G$, then
    ``conversions``."""
    return breakdown_file(await _site(site_id, query_args, run.clock.today()), "earned", site_id)
