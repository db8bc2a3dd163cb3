"""The advertiser API under /api/advertisers: account, deposits, campaigns and their lifecycle, creatives, tasks
and units, allocation of funds, withdrawal, and reports (rules in adnet.accounts.advertisers, adnet.campaigns,
adnet.tasks.authoring and adnet.money; reports from adnet.reporting).

Every route needs a SIWE session (401 ``auth_required``) or an API key; the advertiser is the session's wallet, or,
for a member of another advertiser account (adnet.accounts.members), the account the ``advertiserId`` query
parameter names. A campaign, creative or task of an account the wallet is no member of answers 403 ``not_owner``;
a member whose role is too low for the route, 403 ``insufficient_role`` (viewers read, managers also manage
campaigns, creatives, tasks and funds). Token amounts travel as G$ decimal strings, times as
ISO 8601 UTC.
"""

from __future__ import annotations

from datetime import datetime

from pydantic import Field
from quart import Blueprint, Response, request
from quart_rate_limiter import rate_limit
from quart_schema import document_response

from adnet.accounts import advertisers
from adnet.accounts.commands import AdvertiserRegistration, ApiKeyScope
from adnet.accounts.models import Advertiser, MemberRole
from adnet.campaigns import campaigns, creatives, funding, lifecycle, views
from adnet.campaigns.commands import CampaignChanges, CreativeChanges, NewCampaign, NewCreative
from adnet.core.amounts import Token
from adnet.money import deposits, withdrawals
from adnet.money.commands import DepositReport, Funds, WithdrawalPage
from adnet.money.holders import advertiser_holder
from adnet.reporting import campaigns as campaign_reports
from adnet.reporting.balances import advertiser_balance
from adnet.reporting.buckets import Granularity
from adnet.reporting.commands import ReportPeriod
from adnet.reporting.traffic import ordered_reasons
from adnet.services import Services
from adnet.tasks import authoring, drafts
from adnet.tasks.commands import NewTask, TaskChanges
from api.http import REPLAYED, answer, idempotent, with_body, with_query
from api.openapi import CSV_FILE, other_answer, query_parameter
from api.schemas import (
    CAMPAIGN_ID_ALIAS,
    HOUR_FIELD,
    Address,
    AmountText,
    CampaignOut,
    CreativeOut,
    Day,
    DepositOut,
    DepositPlanOut,
    Schema,
    TaskOut,
    WithdrawalListOut,
    WithdrawalOut,
    campaign_out,
    creative_out,
    deposit_out,
    deposit_plan_out,
    deposit_status,
    hour_text,
    refusals,
    task_out,
    withdrawal_list_out,
    withdrawal_out,
)
from api.sessions import require_account
from web.context import injected
from web.csv import csv_file, report_file
from web.limits import ACCOUNT_LIMIT
from web.sessions import current_wallet

blueprint = Blueprint("api_advertisers", __name__, url_prefix="/api")

class RegisteredOut(Schema):
    advertiser_id: str
    wallet: Address
    name: str


class AccountOut(Schema):
    """The advertiser's G$: unallocated (``available``), in campaign budgets, in task pools, and in withdrawals
    not yet redeemed."""

    advertiser_id: str
    wallet: Address
    name: str
    token: Token
    available: AmountText
    in_campaigns: AmountText
    in_tasks: AmountText
    pending_withdrawals: AmountText


class AdvertiserDepositPlanOut(DepositPlanOut):
    advertiser_id: str


class CampaignList(Schema):
    campaigns: list[CampaignOut]


class RemainingOut(Schema):
    campaign_id: str
    token: Token
    remaining: AmountText


class TaskEndedOut(Schema):
    task_id: str
    active: bool
    returned: AmountText


class DeletedOut(Schema):
    """What a deletion removed, and the G$ it returned to the unallocated balance (a budget, a task's pool)."""

    id: str
    deleted: bool
    returned: AmountText


class CampaignDeletedOut(Schema):
    """A deleted campaign, named ``campaignId`` as in every answer (``id`` repeats it, deprecated), and the G$ its
    budget and task pools returned to the unallocated balance."""

    campaign_id: str
    id: str = Field(deprecated=True, description=CAMPAIGN_ID_ALIAS)
    deleted: bool
    returned: AmountText


class PoolOut(Schema):
    task_id: str
    token: Token
    pool: AmountText


class DayOut(Schema):
    """A day's or hour's figures (``day`` is ``total`` for the period's)."""

    day: str = Field(description="the UTC day, YYYY-MM-DD, or total")
    hour: str | None = Field(None, description=HOUR_FIELD)
    impressions: int
    billable_impressions: int
    clicks: int
    billable_clicks: int
    ctr: str
    spend: AmountText
    ecpm: AmountText
    rewards: AmountText
    completions: dict[str, int] = Field(description="per task id")
    filtered: dict[str, int] = Field(description="recorded events not billed, per reason (docs/serving.md)")
    conversions: int = Field(description="conversions attributed to a click (docs/conversions.md)")
    conversion_spend: AmountText = Field(description="what paid conversions cost (part of spend)")
    cost_per_conversion: AmountText = Field(description="spend per attributed conversion")
    conversion_rate: str | None = Field(description="attributed conversions per billable click, six decimals; null "
                                                    "without billable clicks")
    conversion_value: AmountText = Field(description="the value reported for attributed conversions, in G$")
    roas: str | None = Field(description="conversion value per G$ spent, six decimals; null without a valued "
                                         "conversion or spend")


class ReportOut(Schema):
    campaign_id: str
    first: Day = Field(serialization_alias="from")
    last: Day = Field(serialization_alias="to")
    granularity: Granularity = Field(description="day, or hour: a row per UTC hour")
    token: Token
    days: list[DayOut]
    totals: DayOut
    refusals: dict[str, int] = Field(description="recorded events not billed, per reason")
    conversion_refusals: dict[str, int] = Field(description="conversions not attributed or not paid, per reason")


ACCOUNT_PARAMETER = "advertiserId"
on_account = query_parameter(ACCOUNT_PARAMETER, "The advertiser account to act on, for a member of it; the "
                                                "signed-in wallet's own without it.")


async def _advertiser(need: MemberRole) -> Advertiser:
    """The account the request acts on (``ACCOUNT_PARAMETER``), where the wallet holds at least ``need``."""
    return await advertisers.advertiser_account(current_wallet(), request.args.get(ACCOUNT_PARAMETER), need)


@blueprint.post("/advertisers/register")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_account(ApiKeyScope.CAMPAIGNS)
@with_body(AdvertiserRegistration)
@document_response(RegisteredOut, 201)
@document_response(RegisteredOut, 200)
@refusals(400)
async def register_advertiser(data: AdvertiserRegistration, now: datetime) -> Response:
    """Create the signed-in wallet's advertiser account (201), or return it when it exists (200)."""
    registration = await advertisers.register(current_wallet(), data, now)
    advertiser = registration.advertiser
    body = RegisteredOut(advertiser_id=advertiser.id, wallet=advertiser.wallet, name=advertiser.name)
    return answer(body, 201 if registration.created else 200)


@blueprint.get("/advertisers/account")
@on_account
@rate_limit(limits=ACCOUNT_LIMIT)
@require_account(ApiKeyScope.REPORTS)
@document_response(AccountOut)
@refusals(404)
async def advertiser_account() -> Response:
    """The advertiser's G$: unallocated (``available``: to allocate or withdraw), in campaign budgets, in task
    pools, and in withdrawals not yet redeemed."""
    advertiser = await _advertiser(MemberRole.VIEWER)
    money = await advertiser_balance(advertiser)
    return answer(AccountOut(advertiser_id=advertiser.id, wallet=advertiser.wallet, name=advertiser.name,
                             token=Token.GS, available=money.available, in_campaigns=money.in_campaigns,
                             in_tasks=money.in_tasks, pending_withdrawals=money.pending_withdrawals))


@blueprint.post("/advertisers/deposit/prepare")
@on_account
@rate_limit(limits=ACCOUNT_LIMIT)
@require_account(ApiKeyScope.CAMPAIGNS)
@with_body(Funds)
@document_response(AdvertiserDepositPlanOut)
@refusals(400, 404, 503)
async def advertiser_deposit_prepare(data: Funds, run: Services) -> Response:
    """The unsigned approve and deposit transactions (``eth_sendTransaction`` parameters) that deposit ``amount``
    G$ into the vault for this advertiser; send them in order from the wallet, then post the deposit's hash. An
    amount above the wallet's G$ on the chain is refused (``insufficient_wallet_balance``)."""
    holder = advertiser_holder(await _advertiser(MemberRole.MANAGER))
    plan = await deposits.prepare(holder, data.amount, run.chain)
    return answer(AdvertiserDepositPlanOut(advertiser_id=holder.id, **deposit_plan_out(plan)))


@blueprint.post("/advertisers/deposit")
@on_account
@rate_limit(limits=ACCOUNT_LIMIT)
@require_account(ApiKeyScope.CAMPAIGNS)
@with_body(DepositReport)
@document_response(DepositOut, 201)
@document_response(DepositOut, 200)
@document_response(DepositOut, 202)
@refusals(400, 404, 409, 503)
async def advertiser_deposit(data: DepositReport, run: Services, now: datetime) -> Response:
    """Credit a G$ deposit the wallet made to the vault: 201 credited now, 200 credited before (by the chain
    watcher or an earlier post of the hash: the same deposit, credited once), 202 pending its confirmations, 409
    ``already_credited`` when it was credited to another account."""
    holder = advertiser_holder(await _advertiser(MemberRole.MANAGER))
    recorded = await deposits.credit(holder, data.tx_hash, run.chain, now)
    return answer(DepositOut(**deposit_out(recorded.deposit)), deposit_status(recorded))


@blueprint.post("/advertisers/withdraw")
@on_account
@rate_limit(limits=ACCOUNT_LIMIT)
@require_account(ApiKeyScope.CAMPAIGNS)
@idempotent
@with_body(Funds)
@document_response(WithdrawalOut, 201)
@document_response(WithdrawalOut, 200)
@refusals(400, 404, 409, 503)
async def advertiser_withdraw(data: Funds, idempotency_key: str | None, run: Services, now: datetime) -> Response:
    """Debit ``amount`` from the unallocated balance now and return the signed claim that pays it to the account's
    wallet on the vault (``transaction``); released back if not redeemed by its deadline. With an ``Idempotency-Key``, a
    retry answers 200 with the same withdrawal and claim (``Idempotent-Replayed: true``), or 409
    ``idempotency_key_reused`` when it asks for another amount."""
    result = await withdrawals.withdraw(advertiser_holder(await _advertiser(MemberRole.MANAGER)), data.amount,
                                        Token.GS, minimum=run.settings.min_withdrawal, chain=run.chain,
                                        now=now, idempotency_key=idempotency_key)
    body = WithdrawalOut(**withdrawal_out(result.withdrawal))
    return answer(body, 200, REPLAYED) if result.replayed else answer(body, 201)


@blueprint.get("/advertisers/withdrawals")
@on_account
@rate_limit(limits=ACCOUNT_LIMIT)
@require_account(ApiKeyScope.REPORTS)
@with_query(WithdrawalPage)
@document_response(WithdrawalListOut)
@refusals(400, 404)
async def advertiser_withdrawals(query_args: WithdrawalPage) -> Response:
    """The advertiser's withdrawals, newest first, each with its state and its claim (``transaction``), which an
    ``issued`` one can still redeem."""
    page = await withdrawals.listed(advertiser_holder(await _advertiser(MemberRole.VIEWER)),
                                    limit=query_args.limit, before=query_args.before)
    return answer(WithdrawalListOut(**withdrawal_list_out(page, query_args.limit)))


@blueprint.get("/advertisers/withdrawals/<withdrawal_id>")
@on_account
@rate_limit(limits=ACCOUNT_LIMIT)
@require_account(ApiKeyScope.REPORTS)
@document_response(WithdrawalOut)
@refusals(404)
async def advertiser_withdrawal(withdrawal_id: str) -> Response:
    """One of the advertiser's withdrawals with its state and its claim, as the withdrawal answered it."""
    withdrawal = await withdrawals.find(advertiser_holder(await _advertiser(MemberRole.VIEWER)), withdrawal_id)
    return answer(WithdrawalOut(**withdrawal_out(withdrawal)))


@blueprint.get("/advertisers/campaigns")
@on_account
@rate_limit(limits=ACCOUNT_LIMIT)
@require_account(ApiKeyScope.REPORTS)
@document_response(CampaignList)
@refusals(404)
@injected
async def advertiser_campaigns(run: Services, now: datetime) -> Response:
    """The advertiser's campaigns, newest first, with their state and money."""
    found = await views.list_campaigns((await _advertiser(MemberRole.VIEWER)).id, now)
    return answer(CampaignList(campaigns=[campaign_out(view, run.settings.public_url, details=False)
                                          for view in found]))


@blueprint.post("/advertisers/campaigns")
@on_account
@rate_limit(limits=ACCOUNT_LIMIT)
@require_account(ApiKeyScope.CAMPAIGNS)
@with_body(NewCampaign)
@document_response(CampaignOut, 201)
@refusals(400, 404)
async def create_campaign(data: NewCampaign, run: Services, now: datetime) -> Response:
    """Create a draft campaign (name, startsAt, cpm, cpc and budget required). It serves only once submitted,
    approved by an operator, inside its dates and funded."""
    created = await campaigns.create_campaign((await _advertiser(MemberRole.MANAGER)).id, data, now)
    return answer(await _detail(created.id, run, now), 201)


@blueprint.get("/advertisers/campaigns/<campaign_id>")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_account(ApiKeyScope.REPORTS)
@document_response(CampaignOut)
@refusals(403, 404)
@injected
async def get_campaign(campaign_id: str, run: Services, now: datetime) -> Response:
    """One campaign with its creatives and tasks."""
    return answer(await _detail(campaign_id, run, now))


@blueprint.patch("/advertisers/campaigns/<campaign_id>")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_account(ApiKeyScope.CAMPAIGNS)
@with_body(CampaignChanges)
@document_response(CampaignOut)
@refusals(400, 403, 404, 409)
async def edit_campaign(campaign_id: str, data: CampaignChanges, run: Services, now: datetime) -> Response:
    """Change settings (those sent). Refused while in review or once ended (409 ``campaign_locked``)."""
    await campaigns.edit_settings(current_wallet(), campaign_id, data, now)
    return answer(await _detail(campaign_id, run, now))


@blueprint.delete("/advertisers/campaigns/<campaign_id>")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_account(ApiKeyScope.CAMPAIGNS)
@document_response(CampaignDeletedOut)
@refusals(403, 404, 409)
@injected
async def delete_campaign(campaign_id: str, now: datetime) -> Response:
    """Delete a draft or rejected campaign, which has never served, with its creatives and tasks; what its budget
    and task pools held returns to the unallocated balance. 409 ``campaign_locked`` once submitted: end it instead."""
    returned = await drafts.delete_campaign(current_wallet(), campaign_id, now)
    return answer(CampaignDeletedOut(campaign_id=campaign_id, id=campaign_id, deleted=True, returned=returned))


@blueprint.post("/advertisers/campaigns/<campaign_id>/duplicate")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_account(ApiKeyScope.CAMPAIGNS)
@document_response(CampaignOut, 201)
@refusals(403, 404)
@injected
async def duplicate_campaign(campaign_id: str, run: Services, now: datetime) -> Response:
    """A new draft with the campaign's settings, creatives and tasks, without money (any status may be copied)."""
    copy = await drafts.duplicate_campaign(current_wallet(), campaign_id, now)
    return answer(await _detail(copy.id, run, now), 201)


@blueprint.post("/advertisers/campaigns/<campaign_id>/<any(submit, pause, resume, end):action>")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_account(ApiKeyScope.CAMPAIGNS)
@document_response(CampaignOut)
@refusals(400, 403, 404, 409)
@injected
async def campaign_action(campaign_id: str, action: str, run: Services, now: datetime) -> Response:
    """Move the campaign: ``submit`` (draft or rejected → review), ``pause`` (approved → paused), ``resume``
    (paused → approved), ``end`` (for good; unspent budget returns to the account). 409 ``invalid_transition``
    with the current ``currentStatus`` otherwise."""
    step = {"submit": lifecycle.submit, "pause": lifecycle.pause, "resume": lifecycle.resume,
            "end": lifecycle.end}[action]
    await step(current_wallet(), campaign_id, now)
    return answer(await _detail(campaign_id, run, now))


@blueprint.post("/advertisers/campaigns/<campaign_id>/allocate")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_account(ApiKeyScope.CAMPAIGNS)
@with_body(Funds)
@document_response(RemainingOut)
@refusals(400, 403, 404, 409)
async def allocate_campaign(campaign_id: str, data: Funds, now: datetime) -> Response:
    """Move ``amount`` G$ from the unallocated balance into the campaign's budget (never more than the balance,
    nor beyond the campaign's budget: 400 ``insufficient_balance`` / 409 ``over_budget``)."""
    remaining = await funding.allocate_to_campaign(current_wallet(), campaign_id, data.amount, now)
    return answer(RemainingOut(campaign_id=campaign_id, token=Token.GS, remaining=remaining))


@blueprint.post("/advertisers/campaigns/<campaign_id>/creatives")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_account(ApiKeyScope.CAMPAIGNS)
@with_body(NewCreative)
@document_response(CreativeOut, 201)
@refusals(400, 403, 404, 409)
async def add_creative(campaign_id: str, data: NewCreative, run: Services, now: datetime) -> Response:
    """Add a creative (bannerUrl, targetUrl and size required). The banner must be https (http in development
    only), of a size the campaign takes, and an image file of that size (400 ``insecure_url``,
    ``size_not_in_campaign``, ``banner_unreachable``, ``banner_size_mismatch``). It waits for review: with the
    campaign, or alone when the campaign is already approved."""
    creative = await creatives.add_creative(current_wallet(), campaign_id, data, now, run.banners)
    return answer(creative_out(creative, run.settings.public_url), 201)


@blueprint.patch("/advertisers/creatives/<creative_id>")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_account(ApiKeyScope.CAMPAIGNS)
@with_body(CreativeChanges)
@document_response(CreativeOut)
@refusals(400, 403, 404, 409)
async def edit_creative(creative_id: str, data: CreativeChanges, run: Services, now: datetime) -> Response:
    """Change a creative: it goes back to review and stops serving until approved; the campaign's other creatives
    keep serving."""
    creative = await creatives.edit_creative(current_wallet(), creative_id, data, now, run.banners,
                                             run.settings.public_url)
    return answer(creative_out(creative, run.settings.public_url))


@blueprint.delete("/advertisers/creatives/<creative_id>")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_account(ApiKeyScope.CAMPAIGNS)
@document_response(DeletedOut)
@refusals(403, 404, 409)
async def delete_creative(creative_id: str) -> Response:
    """Delete a creative of a draft or rejected campaign (409 ``campaign_locked`` once submitted)."""
    await drafts.delete_creative(current_wallet(), creative_id)
    return answer(DeletedOut(id=creative_id, deleted=True, returned=0))


@blueprint.post("/advertisers/campaigns/<campaign_id>/tasks")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_account(ApiKeyScope.CAMPAIGNS)
@with_body(NewTask)
@document_response(TaskOut, 201)
@refusals(400, 403, 404, 409)
async def create_campaign_task(campaign_id: str, data: NewTask, run: Services, now: datetime) -> Response:
    """Add a task or unit to a draft or rejected campaign (kind, title and config required); it is reviewed with
    the campaign. Its dates default to the campaign's."""
    task = await authoring.create_task(current_wallet(), campaign_id, data, now)
    return answer(task_out(task, run.settings.public_url), 201)


@blueprint.patch("/advertisers/tasks/<task_id>")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_account(ApiKeyScope.CAMPAIGNS)
@with_body(TaskChanges)
@document_response(TaskOut)
@refusals(400, 403, 404, 409)
async def edit_campaign_task(task_id: str, data: TaskChanges, run: Services) -> Response:
    """Change a task: its content while the campaign is unreviewed, its rewards and limits until it ends."""
    return answer(task_out(await authoring.edit_task(current_wallet(), task_id, data), run.settings.public_url))


@blueprint.delete("/advertisers/tasks/<task_id>")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_account(ApiKeyScope.CAMPAIGNS)
@document_response(DeletedOut)
@refusals(403, 404, 409)
@injected
async def delete_campaign_task(task_id: str, now: datetime) -> Response:
    """Delete a task or unit of a draft or rejected campaign; its pool returns to the unallocated balance (409
    ``campaign_locked`` once submitted: end the task instead)."""
    returned = await drafts.delete_task(current_wallet(), task_id, now)
    return answer(DeletedOut(id=task_id, deleted=True, returned=returned))


@blueprint.post("/advertisers/tasks/<task_id>/end")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_account(ApiKeyScope.CAMPAIGNS)
@document_response(TaskEndedOut)
@refusals(403, 404, 409)
@injected
async def end_campaign_task(task_id: str, now: datetime) -> Response:
    """Switch the task off for good; its G$ pool returns to the unallocated balance."""
    returned = await authoring.end_task(current_wallet(), task_id, now)
    return answer(TaskEndedOut(task_id=task_id, active=False, returned=returned))


@blueprint.post("/advertisers/tasks/<task_id>/allocate")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_account(ApiKeyScope.CAMPAIGNS)
@with_body(Funds)
@document_response(PoolOut)
@refusals(400, 403, 404, 409)
async def allocate_task(task_id: str, data: Funds, now: datetime) -> Response:
    """Move ``amount`` G$ from the unallocated balance into the task's pool, which pays its rewards first."""
    pool = await authoring.allocate_to_task(current_wallet(), task_id, data.amount, now)
    return answer(PoolOut(task_id=task_id, token=Token.GS, pool=pool))


@blueprint.get("/advertisers/campaigns/<campaign_id>/report")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_account(ApiKeyScope.REPORTS)
@with_query(ReportPeriod)
@document_response(ReportOut)
@refusals(400, 403, 404)
async def campaign_report(campaign_id: str, query_args: ReportPeriod, run: Services) -> Response:
    """Per UTC day from ``from`` to ``to`` (default: the last 30 days, at most 92), or per UTC hour
    (``granularity=hour``, the last 14 days at most): impressions, billable impressions, clicks, CTR, spend, eCPM,
    rewards and completions per task; and refusal reasons in aggregate."""
    start, end = query_args.days(run.clock.today())
    return answer(report_out(await campaign_reports.campaign_report(current_wallet(), campaign_id, start, end,
                                                                    query_args.granularity)))


@blueprint.get("/advertisers/campaigns/<campaign_id>/report.csv")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_account(ApiKeyScope.REPORTS)
@with_query(ReportPeriod)
@refusals(400, 403, 404)
@other_answer(200, "The report as CSV.", "text/csv", headers=CSV_FILE)
async def campaign_report_csv(campaign_id: str, query_args: ReportPeriod, run: Services) -> Response:
    """The same report as CSV (one row per day, or hour, and a total row), for spreadsheets."""
    start, end = query_args.days(run.clock.today())
    result = await campaign_reports.campaign_report(current_wallet(), campaign_id, start, end, query_args.granularity)
    return csv_file(campaign_reports.report_csv(result),
                    report_file(f"{campaign_id}-{start}-{end}", result.granularity))


async def _detail(campaign_id: str, run: Services, now: datetime) -> CampaignOut:
    return campaign_out(await views.campaign_detail(current_wallet(), campaign_id, now),
                        run.settings.public_url)


def report_out(result: campaign_reports.CampaignReport) -> ReportOut:
    return ReportOut(campaign_id=result.campaign.id, first=result.start, last=result.end,
                     granularity=result.granularity, token=Token.GS,
                     days=[_day_out(figures, result) for figures in result.days],
                     totals=_day_out(result.totals, result), refusals=result.refusals,
                     conversion_refusals=result.conversion_refusals)


def _day_out(figures: campaign_reports.DayFigures, result: campaign_reports.CampaignReport) -> DayOut:
    return DayOut(day=figures.day.isoformat() if figures.day else "total", hour=hour_text(figures),
                  impressions=figures.impressions,
                  billable_impressions=figures.billable_impressions, clicks=figures.clicks,
                  billable_clicks=figures.billable_clicks, ctr=campaign_reports.ctr_text(figures),
                  spend=figures.spend, ecpm=figures.ecpm, rewards=figures.rewards,
                  completions=campaign_reports.completions_by_task(figures, result.tasks),
                  filtered=ordered_reasons(figures.filtered), conversions=figures.conversions,
                  conversion_spend=figures.conversion_spend, cost_per_conversion=figures.cost_per_conversion,
                  conversion_rate=figures.conversion_rate, conversion_value=figures.conversion_value,
                  roas=figures.roas)
