"""The publisher API under /api/publishers: register, sites, verify a site, balance, topup (and its preparation),
withdraw, exchange (rules in adnet.accounts.sites, adnet.accounts.ownership and adnet.money; figures from
adnet.reporting).

Every route needs a session (401 ``auth_required``), and the wallet the request names, in the body or, for GETs,
the query, must be the session's (403 ``not_owner``) and own the site it names (403 ``not_owner``).
Token amounts travel as decimal strings.
"""

from __future__ import annotations

from datetime import datetime

from pydantic import Field
from quart import Blueprint, Response
from quart_rate_limiter import rate_limit
from quart_schema import document_response

from adnet.accounts.commands import ApiKeyScope, SiteRegistration
from adnet.accounts.models import MemberRole, ProofMethod, Site, SiteState
from adnet.accounts.ownership import SiteChecks
from adnet.accounts.proofs import ADS_TXT_PATH
from adnet.accounts.sites import managed_site, owned_site, register_site
from adnet.campaigns.banners import banner_address
from adnet.core.amounts import Token
from adnet.core.inputs import Command, WalletAddress
from adnet.money import deposits, exchanges, withdrawals
from adnet.money.commands import DepositReport, ExchangeOrder, Funds, Withdrawal, WithdrawalPage
from adnet.money.holders import owned_site_holder
from adnet.reporting import dashboard, traffic
from adnet.reporting import sites as site_reports
from adnet.reporting.balances import site_balance
from adnet.reporting.buckets import Granularity
from adnet.reporting.commands import Period, ReportPeriod
from adnet.services import Services
from api.http import REPLAYED, answer, idempotent, with_body, with_query
from api.openapi import CSV_FILE, other_answer
from api.schemas import (
    HOUR_FIELD,
    Address,
    AmountText,
    Day,
    DepositOut,
    DepositPlanOut,
    Schema,
    Time,
    TokenAmount,
    WithdrawalListOut,
    WithdrawalOut,
    deposit_out,
    deposit_plan_out,
    deposit_status,
    hour_text,
    refusals,
    withdrawal_list_out,
    withdrawal_out,
)
from api.sessions import named_wallet, require_account
from web.csv import csv_file, report_file
from web.limits import ACCOUNT_LIMIT
from web.sessions import current_wallet

blueprint = Blueprint("api_publishers", __name__, url_prefix="/api")


class WalletNamed(Command):
    """The wallet a publisher request names: the signed-in one."""

    wallet: WalletAddress


class SiteNamed(WalletNamed):
    """A site of the wallet the request names."""

    site_id: str = Field(max_length=64)


class RegisterRequest(SiteRegistration, WalletNamed):
    """A site to register for the wallet."""


class TopUpPrepareRequest(Funds, SiteNamed):
    """G$ to deposit for the site."""


class TopUpRequest(DepositReport, SiteNamed):
    """A deposit for the site to credit."""


class WithdrawRequest(Withdrawal, SiteNamed):
    """An amount to withdraw from the site's balance."""


class ExchangeRequest(ExchangeOrder, SiteNamed):
    """An amount of the site's balance to convert."""


class InstructionOut(Schema):
    """One way to prove the domain: publish ``text`` exactly, at ``location``."""

    method: ProofMethod
    title: str
    location: str
    text: str


class VerificationOut(Schema):
    """Whether the site proved its domain (``verified``: it earns now), and how to prove it. ``state`` is
    ``unverified`` (never proven), ``verified`` or ``lapsed`` (proven once, no longer); ``lastFailure`` says why
    the last check found no proof (empty after a success)."""

    state: SiteState
    verified: bool
    method: ProofMethod | None
    verified_at: Time | None
    last_checked_at: Time | None
    last_failure: str
    token: str
    instructions: list[InstructionOut]


def verification_out(site: Site, checks: SiteChecks) -> VerificationOut:
    return VerificationOut(state=site.state, verified=site.verified, method=site.proof_method,
                           verified_at=site.verified_at, last_checked_at=site.last_checked_at,
                           last_failure=site.check_failure, token=site.verification_token,
                           instructions=[InstructionOut.model_validate(step) for step in checks.instructions(site)])


class AdsTxtOut(Schema):
    """The exact line the site's ``/ads.txt`` carries to authorise adnet to sell its inventory (it also proves the
    domain): ``adnet's domain, publisher id, DIRECT`` and adnet's certification authority id when it has one.
    ``listed``: whether adnet found it when it last read the file (the re-check of a verified site and every check
    read it; null before the first), at ``checkedAt``."""

    line: str
    location: str
    listed: bool | None
    checked_at: Time | None


def ads_txt_out(site: Site, checks: SiteChecks) -> AdsTxtOut:
    return AdsTxtOut(line=checks.ads_txt_line(site), location=f"https://{site.domain}{ADS_TXT_PATH}",
                     listed=site.ads_txt_listed, checked_at=site.ads_txt_checked_at)


class RegisteredOut(Schema):
    site_id: str
    publisher_id: str
    domain: str
    verification: VerificationOut
    ads_txt: AdsTxtOut


class SiteVerificationOut(Schema):
    site_id: str
    domain: str
    verification: VerificationOut
    ads_txt: AdsTxtOut


class FiguresOut(Schema):
    impressions: int
    clicks: int
    earned: AmountText


class SiteOut(Schema):
    site_id: str
    domain: str
    name: str
    active: bool
    created_at: Time
    today: FiguresOut
    lifetime: FiguresOut
    verification: VerificationOut
    ads_txt: AdsTxtOut


class SitesOut(Schema):
    wallet: Address
    sites: list[SiteOut]


class SovBalanceOut(Schema):
    claimable: AmountText
    pending_withdrawals: AmountText


class BalanceOut(Schema):
    """A site's G$: lifetime earnings, what can be withdrawn or exchanged now, and withdrawals not yet redeemed;
    and its SOV."""

    site_id: str
    token: Token
    earned: AmountText
    claimable: AmountText
    pending_withdrawals: AmountText
    sov: SovBalanceOut


class SiteDepositPlanOut(DepositPlanOut):
    site_id: str


class SiteDepositOut(DepositOut):
    site_id: str


class SiteWithdrawalOut(WithdrawalOut):
    site_id: str


class SiteWithdrawalsOut(WithdrawalListOut):
    site_id: str


class ExchangeOut(Schema):
    """Both legs of the exchange and the vault's rate (G$ per SOV) it used."""

    exchange_id: str
    site_id: str
    sent: TokenAmount = Field(serialization_alias="from")
    received: TokenAmount = Field(serialization_alias="to")
    rate: AmountText


@blueprint.post("/publishers/register")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_account(ApiKeyScope.SITES)
@with_body(RegisterRequest)
@document_response(RegisteredOut, 201)
@document_response(RegisteredOut, 200)
@refusals(400, 403, 409)
async def register(data: RegisterRequest, run: Services, now: datetime) -> Response:
    """Register a site, unverified (domain normalised, IDN in punycode); the wallet's first registration creates
    its publisher record. 201 when created, 200 when the wallet had registered this domain before; other wallets'
    registrations do not matter until one proves the domain (``verification`` says how). In production an IP
    address or a reserved name (``.test``, ``localhost`` ...) is refused."""
    registration = await register_site(named_wallet(data.wallet), data, now,
                                       allow_special_names=not run.settings.production)
    site = registration.site
    body = RegisteredOut(site_id=site.id, publisher_id=registration.publisher.id, domain=site.domain,
                         verification=verification_out(site, run.site_checks),
                         ads_txt=ads_txt_out(site, run.site_checks))
    return answer(body, 201 if registration.created else 200)


@blueprint.get("/publishers/sites")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_account(ApiKeyScope.REPORTS)
@with_query(WalletNamed)
@document_response(SitesOut)
@refusals(400, 403)
async def sites(query_args: WalletNamed, run: Services, now: datetime) -> Response:
    """The wallet's sites with today's (UTC) and lifetime impressions, clicks and earnings."""
    wallet = named_wallet(query_args.wallet)
    summaries = await dashboard.list_sites(wallet, now)
    return answer(SitesOut(wallet=wallet, sites=[
        SiteOut(site_id=summary.site.id, domain=summary.site.domain, name=summary.site.name,
                active=summary.site.active, created_at=summary.site.created_at,
                today=FiguresOut.model_validate(summary.today), lifetime=FiguresOut.model_validate(summary.lifetime),
                verification=verification_out(summary.site, run.site_checks),
                ads_txt=ads_txt_out(summary.site, run.site_checks))
        for summary in summaries]))


@blueprint.post("/publishers/sites/<site_id>/verify")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_account(ApiKeyScope.SITES)
@with_body(WalletNamed)
@document_response(SiteVerificationOut)
@refusals(400, 403, 404, 409)
async def verify(site_id: str, data: WalletNamed, run: Services, now: datetime) -> Response:
    """Look for the site's proof on its domain now (the meta tag on the home page, then
    ``/.well-known/adnet.txt``, then ``/ads.txt``) and answer its verification. A proof takes the domain from an
    unverified or lapsed registration, or from a verified site whose own proof is gone. Refusals say why, with
    each document's outcome in ``checks``: 400 ``token_absent`` (the site answered without the proof), 400
    ``fetch_failed`` (nothing could be fetched), 409 ``domain_taken`` (another site holds the domain and still
    proves it)."""
    site = await managed_site(named_wallet(data.wallet), site_id)
    site = await run.site_checks.verify(site, now)
    return answer(SiteVerificationOut(site_id=site.id, domain=site.domain,
                                      verification=verification_out(site, run.site_checks),
                                      ads_txt=ads_txt_out(site, run.site_checks)))


class TrafficDayOut(Schema):
    """A day's or hour's events of the site (``day`` is ``total`` for the period's)."""

    day: str = Field(description="the UTC day, YYYY-MM-DD, or total")
    hour: str | None = Field(None, description=HOUR_FIELD)
    impressions: int
    billed_impressions: int
    clicks: int
    billed_clicks: int
    earned: AmountText
    conversions: int = Field(description="conversions paid for clicks on the site (docs/conversions.md)")
    conversion_earned: AmountText = Field(description="what they earned the site (part of earned)")
    filtered: dict[str, int] = Field(description="recorded events not billed, per reason (docs/serving.md)")


class TrafficOut(Schema):
    site_id: str
    first: Day = Field(serialization_alias="from")
    last: Day = Field(serialization_alias="to")
    granularity: Granularity = Field(description="day, or hour: a row per UTC hour")
    token: Token
    days: list[TrafficDayOut]
    totals: TrafficDayOut


@blueprint.get("/publishers/sites/<site_id>/traffic")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_account(ApiKeyScope.REPORTS)
@with_query(ReportPeriod)
@document_response(TrafficOut)
@refusals(400, 403, 404)
async def site_traffic(site_id: str, query_args: ReportPeriod, run: Services) -> Response:
    """Per UTC day from ``from`` to ``to`` (default: the last 30 days, at most 92), or per UTC hour
    (``granularity=hour``, the last 14 days at most): the site's recorded impressions and clicks, how many were
    billed and what the site earned, and how many each named reason kept from billing."""
    site = await owned_site(current_wallet(), site_id, MemberRole.VIEWER)
    start, end = query_args.days(run.clock.today())
    report = await traffic.site_traffic(site.id, start, end, query_args.granularity)
    return answer(TrafficOut(site_id=site.id, first=start, last=end, granularity=report.granularity, token=Token.GS,
                             days=[_traffic_day_out(figures) for figures in report.days],
                             totals=_traffic_day_out(report.totals)))


@blueprint.get("/publishers/sites/<site_id>/traffic.csv")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_account(ApiKeyScope.REPORTS)
@with_query(ReportPeriod)
@refusals(400, 403, 404)
@other_answer(200, "The report as CSV.", "text/csv", headers=CSV_FILE)
async def site_traffic_csv(site_id: str, query_args: ReportPeriod, run: Services) -> Response:
    """The same report as CSV (one row per day, or hour, and a total row, one ``filtered:<reason>`` column per
    reason)."""
    site = await owned_site(current_wallet(), site_id, MemberRole.VIEWER)
    start, end = query_args.days(run.clock.today())
    report = await traffic.site_traffic(site.id, start, end, query_args.granularity)
    return csv_file(traffic.traffic_csv(report), report_file(f"traffic-{site.id}-{start}-{end}", report.granularity))


def _traffic_day_out(figures: traffic.TrafficDay) -> TrafficDayOut:
    return TrafficDayOut(day=figures.day.isoformat() if figures.day else "total", hour=hour_text(figures),
                         impressions=figures.impressions,
                         billed_impressions=figures.billable_impressions, clicks=figures.clicks,
                         billed_clicks=figures.billable_clicks, earned=figures.earned,
                         conversions=figures.conversions, conversion_earned=figures.conversion_earned,
                         filtered=traffic.ordered_reasons(figures.filtered))


class AdFiguresOut(Schema):
    """What a campaign or a creative did on the site in the period."""

    impressions: int
    billed_impressions: int
    clicks: int
    billed_clicks: int
    earned: AmountText


class CreativeRunOut(Schema):
    creative_id: str
    description: str
    size: str
    banner_url: str
    figures: AdFiguresOut


class CampaignRunOut(Schema):
    campaign_id: str
    name: str
    advertiser_id: str
    advertiser: str = Field(description="the advertiser's name")
    category: str
    figures: AdFiguresOut
    creatives: list[CreativeRunOut]


class AdsOut(Schema):
    site_id: str
    first: Day = Field(serialization_alias="from")
    last: Day = Field(serialization_alias="to")
    token: Token
    campaigns: list[CampaignRunOut]


@blueprint.get("/publishers/sites/<site_id>/ads")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_account(ApiKeyScope.REPORTS)
@with_query(Period)
@document_response(AdsOut)
@refusals(400, 403, 404)
async def site_ads(site_id: str, query_args: Period, run: Services) -> Response:
    """The ads that ran on the site from ``from`` to ``to`` (default: the last 30 days, at most 92): each campaign,
    by name with its advertiser's name and category, and each of its creatives, with recorded and billed
    impressions and clicks and what the site earned; most earning first. Read from the raw events, kept
    ``ADNET_EVENT_RETENTION_DAYS``."""
    site = await owned_site(current_wallet(), site_id, MemberRole.VIEWER)
    start, end = query_args.days(run.clock.today())
    runs = await site_reports.ads_that_ran(site.id, start, end)
    public_url = run.settings.public_url
    return answer(AdsOut(site_id=site.id, first=start, last=end, token=Token.GS, campaigns=[
        CampaignRunOut(campaign_id=ran.campaign_id, name=ran.name, advertiser_id=ran.advertiser_id,
                       advertiser=ran.advertiser, category=ran.category, figures=_ad_figures_out(ran.figures),
                       creatives=[CreativeRunOut(creative_id=creative.creative_id, description=creative.description,
                                                 size=creative.size,
                                                 banner_url=banner_address(creative.banner_url, public_url),
                                                 figures=_ad_figures_out(creative.figures))
                                  for creative in ran.creatives])
        for ran in runs]))


def _ad_figures_out(figures: site_reports.AdFigures) -> AdFiguresOut:
    return AdFiguresOut(impressions=figures.impressions, billed_impressions=figures.billed_impressions,
                        clicks=figures.clicks, billed_clicks=figures.billed_clicks, earned=figures.earned)


@blueprint.get("/publishers/balance")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_account(ApiKeyScope.REPORTS)
@with_query(SiteNamed)
@document_response(BalanceOut)
@refusals(400, 403, 404)
async def balance(query_args: SiteNamed) -> Response:
    """A site's lifetime earnings, claimable balance and pending withdrawals (G$), and its SOV balance."""
    money = await site_balance(named_wallet(query_args.wallet), query_args.site_id)
    return answer(BalanceOut(site_id=money.site_id, token=Token.GS, earned=money.earned, claimable=money.claimable,
                             pending_withdrawals=money.pending_withdrawals,
                             sov=SovBalanceOut(claimable=money.sov_claimable,
                                               pending_withdrawals=money.sov_pending_withdrawals)))


@blueprint.post("/publishers/topup/prepare")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_account(ApiKeyScope.CAMPAIGNS)
@with_body(TopUpPrepareRequest)
@document_response(SiteDepositPlanOut)
@refusals(400, 403, 404, 503)
async def topup_prepare(data: TopUpPrepareRequest, run: Services) -> Response:
    """The unsigned approve and deposit transactions (EIP-1193 ``eth_sendTransaction`` parameters) that top up the
    site with ``amount`` G$; send them in order from the wallet, then post the deposit's hash to /topup. An amount
    above the wallet's G$ on the chain is refused (``insufficient_wallet_balance``): the deposit would revert."""
    holder = await owned_site_holder(named_wallet(data.wallet), data.site_id)
    plan = await deposits.prepare(holder, data.amount, run.chain)
    return answer(SiteDepositPlanOut(site_id=holder.id, **deposit_plan_out(plan)))


@blueprint.post("/publishers/topup")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_account(ApiKeyScope.CAMPAIGNS)
@with_body(TopUpRequest)
@document_response(SiteDepositOut, 201)
@document_response(SiteDepositOut, 200)
@document_response(SiteDepositOut, 202)
@refusals(400, 403, 404, 409, 503)
async def topup(data: TopUpRequest, run: Services, now: datetime) -> Response:
    """Credit the site with a G$ deposit the wallet made to the vault: 201 credited now, 200 credited before (by
    the chain watcher or an earlier post of the hash: the same deposit, credited once), 202 pending until its
    confirmations (the watcher credits it then), 409 ``already_credited`` when it was credited to another
    account."""
    holder = await owned_site_holder(named_wallet(data.wallet), data.site_id)
    recorded = await deposits.credit(holder, data.tx_hash, run.chain, now)
    return answer(SiteDepositOut(site_id=data.site_id, **deposit_out(recorded.deposit)), deposit_status(recorded))


@blueprint.post("/publishers/withdraw")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_account(ApiKeyScope.CAMPAIGNS)
@idempotent
@with_body(WithdrawRequest)
@document_response(SiteWithdrawalOut, 201)
@document_response(SiteWithdrawalOut, 200)
@refusals(400, 403, 404, 409, 503)
async def withdraw(data: WithdrawRequest, idempotency_key: str | None, run: Services, now: datetime) -> Response:
    """Debit ``amount`` from the site's claimable balance now and return the signed claim that pays it out on the
    vault (``transaction``); released back to the site if not redeemed by its deadline. With an
    ``Idempotency-Key``, a retry answers 200 with the same withdrawal and claim (``Idempotent-Replayed: true``),
    or 409 ``idempotency_key_reused`` when it asks for another amount or token."""
    holder = await owned_site_holder(named_wallet(data.wallet), data.site_id)
    result = await withdrawals.withdraw(holder, data.amount, data.token, minimum=run.settings.min_withdrawal,
                                        chain=run.chain, now=now, idempotency_key=idempotency_key)
    body = SiteWithdrawalOut(site_id=holder.id, **withdrawal_out(result.withdrawal))
    return answer(body, 200, REPLAYED) if result.replayed else answer(body, 201)


@blueprint.get("/publishers/sites/<site_id>/withdrawals")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_account(ApiKeyScope.REPORTS)
@with_query(WithdrawalPage)
@document_response(SiteWithdrawalsOut)
@refusals(400, 403, 404)
async def site_withdrawals(site_id: str, query_args: WithdrawalPage) -> Response:
    """The site's withdrawals, newest first, each with its state and its claim (``transaction``), which an
    ``issued`` one can still redeem."""
    holder = await owned_site_holder(current_wallet(), site_id)
    page = await withdrawals.listed(holder, limit=query_args.limit, before=query_args.before)
    return answer(SiteWithdrawalsOut(site_id=holder.id, **withdrawal_list_out(page, query_args.limit)))


@blueprint.get("/publishers/sites/<site_id>/withdrawals/<withdrawal_id>")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_account(ApiKeyScope.REPORTS)
@document_response(SiteWithdrawalOut)
@refusals(403, 404)
async def site_withdrawal(site_id: str, withdrawal_id: str) -> Response:
    """One of the site's withdrawals with its state and its claim, as the withdrawal answered it."""
    holder = await owned_site_holder(current_wallet(), site_id)
    withdrawal = await withdrawals.find(holder, withdrawal_id)
    return answer(SiteWithdrawalOut(site_id=holder.id, **withdrawal_out(withdrawal)))


@blueprint.post("/publishers/exchange")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_account(ApiKeyScope.CAMPAIGNS)
@with_body(ExchangeRequest)
@document_response(ExchangeOut, 201)
@refusals(400, 403, 404, 503)
async def exchange(data: ExchangeRequest, run: Services, now: datetime) -> Response:
    """Convert claimable balance between SOV and G$ at the vault's protocol rate, rounded down; returns both legs
    and the rate (G$ per SOV)."""
    result = await exchanges.exchange(
        wallet=named_wallet(data.wallet), site_id=data.site_id, from_token=data.from_token, amount=data.amount,
        chain=run.chain, now=now)
    record = result.exchange
    return answer(ExchangeOut(exchange_id=record.id, site_id=data.site_id,
                              sent=TokenAmount(token=Token(record.from_token), amount=int(record.amount_in)),
                              received=TokenAmount(token=Token(record.to_token), amount=int(record.amount_out)),
                              rate=result.rate), 201)
