"""Wallet audiences over HTTP. For viewers (public like the rewards routes, behind the same rewards sign-in): which
audiences the signed-in wallet is in, and its switch for wallet targeting (adnet.audiences.wallets). For advertisers
(signed in, or an API key scoped ``campaigns``): the rounded reach of a targeting before buying
(adnet.audiences.reach), with the requests a day it means on the campaign's sites, and the forecast of a campaign's
settings (adnet.delivery.forecast); for viewers too, why an ad was shown to them (adnet.delivery.why); and (scoped
``reports``) a campaign's figures per audience rule group (adnet.reporting.audiences)."""

from __future__ import annotations

from datetime import datetime
from typing import cast

from pydantic import Field, StrictBool
from quart import Blueprint, Response, g, request
from quart_rate_limiter import rate_limit
from quart_schema import document_response

from adnet.accounts import advertisers
from adnet.accounts.commands import ApiKeyScope
from adnet.accounts.models import MemberRole
from adnet.accounts.sessions import ActiveSession
from adnet.audiences import wallets
from adnet.audiences.evaluation import live_rules
from adnet.audiences.reach import THRESHOLD, reach, rounded
from adnet.campaigns.commands import SiteIds
from adnet.campaigns.targeting import Targeting
from adnet.core.amounts import Token
from adnet.core.inputs import Command
from adnet.delivery import why
from adnet.delivery.forecast import ForecastQuery, forecast, site_requests
from adnet.delivery.tokens import MAX_TOKEN_LENGTH
from adnet.reporting import audiences as audience_reports
from adnet.reporting.commands import Period
from adnet.services import Services
from api.http import answer, with_body, with_query
from api.openapi import CSV_FILE, other_answer
from api.rewards import PUBLIC_LIMIT, require_rewards_session
from api.schemas import Address, AmountText, Day, Schema, Time, refusals
from api.sessions import require_account
from web.context import injected
from web.csv import csv_file
from web.limits import ACCOUNT_LIMIT
from web.sessions import current_wallet

blueprint = Blueprint("api_audiences", __name__, url_prefix="/api")
advertiser_blueprint = Blueprint("api_audience_reach", __name__, url_prefix="/api")


class WhyQuery(Command):
    """The tracking token of the ad the viewer asks about."""

    token: str = Field(max_length=MAX_TOKEN_LENGTH, description="the ad's trackingToken, as /api/serve gave it")


class WhyOut(Schema):
    """Why an ad was shown: ``group`` the number of the campaign's audience rule group that chose the viewer (0: the
    ad was not chosen by wallet audiences), its rules in words, and ``yours`` whether the signed-in wallet is in
    that group now."""

    group: int
    rules: list[str]
    yours: bool


class WalletTargeting(Command):
    """Whether adnet may choose ads by the wallet's audiences."""

    enabled: StrictBool = Field(description="false: switch wallet targeting off (kept until switched on)")


class AudiencesOut(Schema):
    """The signed-in wallet's audiences, in words, as last evaluated (until ``expiresAt``), and whether wallet
    targeting is switched off for it (then no audience is kept)."""

    wallet: Address
    targeting_enabled: bool
    audiences: list[str]
    evaluated_at: Time | None
    expires_at: Time | None


async def _audiences_out(wallet: str, now: datetime) -> AudiencesOut:
    found = await wallets.wallet_audiences(wallet, await live_rules(), now)
    return AudiencesOut(wallet=found.wallet, targeting_enabled=not found.targeting_off, audiences=found.audiences,
                        evaluated_at=found.evaluated_at, expires_at=found.expires_at)


@blueprint.get("/audiences")
@rate_limit(limits=PUBLIC_LIMIT)
@require_rewards_session
@document_response(AudiencesOut)
@refusals(429)
@injected
async def wallet_audiences(now: datetime) -> Response:
    """Which wallet audiences of live campaigns the signed-in wallet is in, and whether wallet targeting is on."""
    return answer(await _audiences_out(cast(ActiveSession, g.session).wallet, now))


@blueprint.get("/audiences/why")
@rate_limit(limits=PUBLIC_LIMIT)
@require_rewards_session
@with_query(WhyQuery)
@document_response(WhyOut)
@refusals(400, 429)
async def why_this_ad(query_args: WhyQuery, run: Services, now: datetime) -> Response:
    """Why the ad of a recent tracking token was shown: the audience rule group that chose the viewer, in words, and
    whether the signed-in wallet is in it (the embed's "Why this ad?" leads here through the rewards panel)."""
    settings = run.settings
    found = await why.why_shown(cast(ActiveSession, g.session).wallet, query_args.token,
                                    secrets=(settings.tracking_secret, settings.tracking_secret_previous or ""),
                                    now=now)
    return answer(WhyOut(group=found.group, rules=found.rules, yours=found.yours))


@blueprint.post("/audiences/targeting")
@rate_limit(limits=PUBLIC_LIMIT)
@require_rewards_session
@with_body(WalletTargeting)
@document_response(AudiencesOut)
@refusals(400, 429)
async def wallet_targeting(data: WalletTargeting, now: datetime) -> Response:
    """Switch wallet targeting off for the signed-in wallet (what was found about it is forgotten, and no campaign
    with wallet audiences is chosen by it from now on, in every serving process) or on again."""
    wallet = cast(ActiveSession, g.session).wallet
    await wallets.set_targeting(wallet, off=not data.enabled, now=now)
    return answer(await _audiences_out(wallet, now))


class ReachQuery(Targeting):
    """A campaign's targeting, and the sites it runs on (for the requests a day they mean)."""

    site_allow: SiteIds = Field([], description="site ids it runs on; empty = every site")
    site_deny: SiteIds = Field([], description="site ids it never runs on")


class ReachOut(Schema):
    """How many wallets viewers proved in the last 30 days the targeting's wallet audience finds: ``provenWallets``
    rounded down to a hundred, null for fewer than ``threshold``; ``pending`` while the audience job has not asked
    every such wallet these rules yet (ask again in a few seconds). ``requestsPerDay``: the serve requests a day of
    the last 30 days on the campaign's sites that its country, device and schedule rules admit, times the share of
    proven wallets the audience holds (adnet.delivery.forecast), rounded and thresholded the same way."""

    proven_wallets: int | None
    requests_per_day: int | None
    threshold: int
    pending: bool


@advertiser_blueprint.post("/advertisers/audiences/reach")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_account(ApiKeyScope.CAMPAIGNS)
@with_body(ReachQuery)
@document_response(ReachOut)
@refusals(400)
async def audience_reach(data: ReachQuery, now: datetime) -> Response:
    """The rounded number of recently proven wallets a campaign's targeting (its wallet audience) would reach, and
    the requests a day that means on its sites: never fewer than 100 told as a number, and never a wallet."""
    found = await reach(data, now)
    requests = await site_requests(data.site_allow, data.site_deny, data, now)
    return answer(ReachOut(proven_wallets=found.wallets, requests_per_day=rounded(int(requests * found.share)),
                           threshold=THRESHOLD, pending=found.pending))


class ForecastOut(Schema):
    """A campaign's forecast from the last 30 days of serve requests (``daysRecorded`` of them when adnet counted for
    less long), against the live campaigns: ``requestsPerDay`` matching its sites, sizes, countries, devices and
    hours; ``winsPerDay`` of them it would likely win, at ``sharePercent``; ``budgetDays`` its budget would last at
    its price (null: it would not spend). Counts are rounded down to a hundred, null below ``threshold``. The model
    and its tolerance: docs/advertisers.md."""

    requests_per_day: int | None
    wins_per_day: int | None
    share_percent: int
    budget_days: int | None
    days_recorded: int
    threshold: int


@advertiser_blueprint.post("/advertisers/forecast")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_account(ApiKeyScope.CAMPAIGNS)
@with_body(ForecastQuery)
@document_response(ForecastOut)
@refusals(400, 404)
async def campaign_forecast(data: ForecastQuery, run: Services, now: datetime) -> Response:
    """Forecast a campaign's settings as its form stands (adnet.delivery.forecast): requests a day, the share it would
    win against live campaigns, and the days its budget would last."""
    account = await advertisers.advertiser_account(current_wallet(), request.args.get("advertiserId"),
                                                   MemberRole.VIEWER)
    found = await forecast(data, account.id, run.serving.index, now)
    return answer(ForecastOut(requests_per_day=found.requests_per_day, wins_per_day=found.wins_per_day,
                              share_percent=found.share_percent, budget_days=found.budget_days,
                              days_recorded=found.days_recorded, threshold=THRESHOLD))


class AudienceGroupOut(Schema):
    """One audience rule group's figures: ``group`` its number in the campaign's rules (1 the first; 0: served
    without a group), its rules in words; the figures are null unless the group's billed impressions came from at
    least ``threshold`` viewers."""

    group: int
    rules: list[str]
    viewers: int | None = Field(description="distinct viewers, rounded down to a hundred; null under the threshold")
    impressions: int | None
    clicks: int | None
    conversions: int | None = Field(description="attributed conversions, in the group of their click")
    spend: AmountText | None = Field(description="what its billed events and paid conversions cost")


class SmallGroupsOut(Schema):
    """The groups under the threshold, pooled: their numbers, and their summed figures only when the pool reaches
    the threshold and holds two groups or more (null otherwise)."""

    groups: list[int]
    viewers: int | None
    impressions: int | None
    clicks: int | None
    conversions: int | None
    spend: AmountText | None


class AudienceReportOut(Schema):
    campaign_id: str
    first: Day = Field(serialization_alias="from")
    last: Day = Field(serialization_alias="to")
    token: Token
    threshold: int
    groups: list[AudienceGroupOut]
    small: SmallGroupsOut | None


def _figures(figures: audience_reports.GroupFigures) -> dict[str, int | None]:
    shown = figures.shown
    return {"viewers": figures.rounded_viewers if shown else None,
            **{name: getattr(figures, name) if shown else None
               for name in ("impressions", "clicks", "conversions", "spend")}}


def audience_report_out(report: audience_reports.AudienceReport) -> AudienceReportOut:
    return AudienceReportOut(
        campaign_id=report.campaign.id, first=report.start, last=report.end, token=Token.GS,
        threshold=report.threshold,
        groups=[AudienceGroupOut(group=figures.number or 0, rules=figures.rules, **_figures(figures))
                for figures in report.groups],
        small=None if report.small is None else SmallGroupsOut(groups=report.small.members,
                                                               **_figures(report.small)))


@advertiser_blueprint.get("/advertisers/campaigns/<campaign_id>/report/audiences")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_account(ApiKeyScope.REPORTS)
@with_query(Period)
@document_response(AudienceReportOut)
@refusals(400, 403, 404)
async def audience_report(campaign_id: str, query_args: Period, run: Services) -> Response:
    """Billed impressions, clicks, attributed conversions and spend per audience rule group from ``from`` to ``to``
    (default the last 30 days): counts only, none for a group of fewer than ``threshold`` viewers."""
    start, end = query_args.days(run.clock.today())
    return answer(audience_report_out(await audience_reports.audience_report(current_wallet(), campaign_id, start,
                                                                             end)))


@advertiser_blueprint.get("/advertisers/campaigns/<campaign_id>/report/audiences.csv")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_account(ApiKeyScope.REPORTS)
@with_query(Period)
@refusals(400, 403, 404)
@other_answer(200, "The report by audience group as CSV.", "text/csv", headers=CSV_FILE)
async def audience_report_csv(campaign_id: str, query_args: Period, run: Services) -> Response:
    """The same report as CSV: a line per group, then one for the groups under the threshold."""
    start, end = query_args.days(run.clock.today())
    report = await audience_reports.audience_report(current_wallet(), campaign_id, start, end)
    return csv_file(audience_reports.report_csv(report), f"{campaign_id}-audiences-{start}-{end}.csv")
