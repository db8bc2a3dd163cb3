"""Wallet audiences over HTTP. For viewers (public like the rewards routes, behind the same rewards sign-in): which
audiences the signed-in wallet is in, and its switch for wallet targeting (adnet.audiences.wallets). For advertisers
(signed in, or an API key scoped ``campaigns``): the rounded reach of a targeting before buying
(adnet.audiences.reach), with the requests a day it means on the campaign's sites, and the forecast of a campaign's
settings (adnet.delivery.forecast)."""

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
from adnet.core.inputs import Command
from adnet.delivery.forecast import ForecastQuery, forecast, site_requests
from adnet.services import Services
from api.http import answer, with_body
from api.rewards import PUBLIC_LIMIT, require_rewards_session
from api.schemas import Address, Schema, Time, refusals
from api.sessions import require_account
from web.context import injected
from web.limits import ACCOUNT_LIMIT
from web.sessions import current_wallet

blueprint = Blueprint("api_audiences", __name__, url_prefix="/api")
advertiser_blueprint = Blueprint("api_audience_reach", __name__, url_prefix="/api")


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
