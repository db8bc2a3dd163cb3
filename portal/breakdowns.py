"""Breakdowns of billed traffic and conversions in the portal (rules in ``adnet.reporting.breakdowns``, the same as
the API's): the advertiser's page (``/portal/advertise/breakdown``: spend, impressions, clicks, CTR, conversions,
conversion rate, cost per conversion, value and ROAS by site, placement, country, device, day, campaign or goal,
over its campaigns or one) and the site page's section (earnings and paid conversions by placement, country, device
or day), each a plain GET form whose table htmx swaps, with its CSV. A bad range is explained beside the form, and
the last 30 days are shown meanwhile."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import date
from typing import Any

from quart import Response, request, url_for

from adnet.accounts.models import MemberRole
from adnet.accounts.sites import owned_site
from adnet.core.errors import DomainError
from adnet.reporting import breakdowns
from adnet.reporting.commands import (
    PUBLISHER_DIMENSIONS,
    AdvertiserBreakdownQuery,
    BreakdownPeriod,
    Dimension,
    Period,
    SiteBreakdownQuery,
)
from adnet.services import Services
from portal.forms import command_of
from portal.pages import account_page, page, portal_blueprint
from portal.words import in_words
from portal.zones import viewer_zone
from web.context import injected
from web.csv import breakdown_file
from web.errors import status_of
from web.sessions import current_wallet

blueprint = portal_blueprint("breakdowns")

ADVERTISER_PAGE = "/portal/advertise/breakdown"
FRAGMENT = "portal/_breakdown.html"
DIMENSION_LABELS = {Dimension.SITE: "Site", Dimension.PLACEMENT: "Placement", Dimension.COUNTRY: "Country",
                    Dimension.DEVICE: "Device", Dimension.DAY: "Day", Dimension.HOUR: "Hour",
                    Dimension.CAMPAIGN: "Campaign", Dimension.GOAL: "Goal"}


def _values() -> dict[str, str]:
    return {name: request.args.get(name, "") for name in ("from", "to", "by", "campaignId")}


async def _shown(make: Callable[[date, date], Awaitable[breakdowns.Breakdown]], query: Period | None,
                 error: DomainError | None, today: date) -> tuple[breakdowns.Breakdown, DomainError | None]:
    """The breakdown asked for, or, when the form was refused, the default one beside the refusal (by hour, today's
    hours)."""
    if query is not None:
        try:
            return await make(*query.days(today)), None
        except DomainError as refused:
            error = in_words(refused)
    if isinstance(query, BreakdownPeriod) and query.by == Dimension.HOUR:
        return await make(today, today), error
    return await make(*Period.model_validate({}).days(today)), error


async def advertiser_context(today: date) -> tuple[dict[str, Any], int]:
    """The advertiser's breakdown the query string asks for (by site over every campaign by default)."""
    query: AdvertiserBreakdownQuery | None = None
    error: DomainError | None = None
    try:
        query = command_of(AdvertiserBreakdownQuery, request.args)
    except DomainError as refused:
        error = in_words(refused)
    by = query.by if query else Dimension.SITE
    campaign_id = query.campaign_id if query else None
    breakdown, error = await _shown(
        lambda start, end: breakdowns.advertiser_breakdown(current_wallet(), by, start, end, campaign_id),
        query, error, today)
    campaigns = await breakdowns.campaign_choices(current_wallet())
    context = {"breakdown": breakdown, "action": url_for("portal_breakdowns.advertiser_breakdown"),
               "csv_action": url_for("portal_breakdowns.advertiser_breakdown_csv"),
               "amount": "spend", "amount_label": "Spend (G$)",
               "dimensions": {dimension: DIMENSION_LABELS[dimension] for dimension in Dimension},
               "campaigns": campaigns, "campaign_id": campaign_id, "values": _values(), "error": error,
               "failed_form": "breakdown", "viewer": viewer_zone()}
    return context, status_of(error) if error else 200


@blueprint.get(ADVERTISER_PAGE)
@account_page
@injected
async def advertiser_breakdown(run: Services) -> tuple[str, int]:
    """The advertiser's billed traffic and conversions by site, placement, country, device, day, campaign or goal,
    over its campaigns or one."""
    context, status = await advertiser_context(run.clock.today())
    return await page("portal/advertise/breakdown.html", FRAGMENT, status, **context)


@blueprint.get(f"{ADVERTISER_PAGE}.csv")
@account_page
@injected
async def advertiser_breakdown_csv(run: Services) -> Response:
    """The same breakdown as CSV."""
    query = command_of(AdvertiserBreakdownQuery, request.args)
    start, end = query.days(run.clock.today())
    breakdown = await breakdowns.advertiser_breakdown(current_wallet(), query.by, start, end, query.campaign_id)
    return breakdown_file(breakdown, "spend", query.campaign_id or "campaigns", no_store=True)


async def site_breakdown_context(site_id: str, today: date) -> tuple[dict[str, Any], int]:
    """A site's breakdown the query string asks for (by placement over the last 30 days by default)."""
    site = await owned_site(current_wallet(), site_id, MemberRole.VIEWER)
    query: SiteBreakdownQuery | None = None
    error: DomainError | None = None
    try:
        query = command_of(SiteBreakdownQuery, request.args)
    except DomainError as refused:
        error = in_words(refused)
    by = query.by if query else Dimension.PLACEMENT
    breakdown, error = await _shown(
        lambda start, end: breakdowns.site_breakdown(current_wallet(), site.id, by, start, end), query, error, today)
    context = {"site": site, "breakdown": breakdown,
               "action": url_for("portal_breakdowns.site_breakdown", site_id=site.id),
               "csv_action": url_for("portal_breakdowns.site_breakdown_csv", site_id=site.id),
               "amount": "earned", "amount_label": "Earned (G$)",
               "dimensions": {dimension: DIMENSION_LABELS[dimension] for dimension in PUBLISHER_DIMENSIONS},
               "values": _values(), "error": error, "failed_form": "breakdown", "viewer": viewer_zone()}
    return context, status_of(error) if error else 200


@blueprint.get("/portal/sites/<site_id>/breakdown")
@account_page
@injected
async def site_breakdown(site_id: str, run: Services) -> tuple[str, int]:
    """The site's billed traffic, earnings and paid conversions by placement, country, device or day."""
    context, status = await site_breakdown_context(site_id, run.clock.today())
    return await page("portal/site_breakdown.html", FRAGMENT, status, **context)


@blueprint.get("/portal/sites/<site_id>/breakdown.csv")
@account_page
@injected
async def site_breakdown_csv(site_id: str, run: Services) -> Response:
    """The same breakdown as CSV."""
    query = command_of(SiteBreakdownQuery, request.args)
    start, end = query.days(run.clock.today())
    breakdown = await breakdowns.site_breakdown(current_wallet(), site_id, query.by, start, end)
    return breakdown_file(breakdown, "earned", site_id, no_store=True)
