"""The advertiser API under /api/advertisers: account, deposits, campaigns and their lifecycle, creatives, tasks
and units, allocation of funds, withdrawal, and reports (rules in adnet.accounts.advertisers, adnet.campaigns,
adnet.tasks.authoring and adnet.money; reports from adnet.reporting).

Every route needs a SIWE session (401 ``auth_required``); the advertiser is the session's wallet, and a campaign,
creative or task of another wallet answers 403 ``not_owner``. Token amounts travel as G$ decimal strings, times as
ISO 8601 UTC.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field
from quart import Blueprint, Response, jsonify
from quart_rate_limiter import rate_limit
from quart_schema import validate_querystring, validate_request, validate_response

from adnet.accounts import advertisers
from adnet.accounts.commands import AdvertiserRegistration
from adnet.accounts.models import Advertiser
from adnet.campaigns import campaigns, creatives, funding, lifecycle, views
from adnet.campaigns.commands import CampaignChanges, CreativeChanges, NewCampaign, NewCreative
from adnet.campaigns.models import Creative
from adnet.core.amounts import Token, to_decimal_string
from adnet.money import deposits, withdrawals
from adnet.money.claims import claim_payload
from adnet.money.commands import DepositReport, Funds
from adnet.money.holders import advertiser_holder
from adnet.money.models import DepositStatus
from adnet.reporting import campaigns as campaign_reports
from adnet.reporting.balances import advertiser_balance
from adnet.reporting.commands import Period
from adnet.tasks import authoring
from adnet.tasks.commands import NewTask, TaskChanges
from adnet.tasks.config import public_task
from adnet.tasks.models import Task
from api.auth import iso
from api.http import services
from api.ratelimit import settings_limit
from api.sessions import current_wallet, require_session

blueprint = Blueprint("api_advertisers", __name__, url_prefix="/api")

ACCOUNT_LIMIT = settings_limit("rate_limit_account")
class AccountOut(BaseModel):
    advertiserId: str
    wallet: str
    name: str
    token: str
    available: str
    inCampaigns: str
    inTasks: str
    pendingWithdrawals: str


class CreativeOut(BaseModel):
    id: str
    campaignId: str
    bannerUrl: str
    targetUrl: str
    description: str
    mediaType: str
    size: str
    status: str
    rejectionReason: str
    updatedAt: str


class TaskOut(BaseModel):
    id: str
    campaignId: str | None
    kind: str
    surface: str
    title: str
    description: str
    config: dict[str, Any]
    rewardPoints: int
    rewardGs: str
    maxPerWallet: int
    maxPerFingerprint: int
    startsAt: str
    endsAt: str | None
    active: bool
    preview: dict[str, Any] | None = None


class CampaignOut(BaseModel):
    id: str
    advertiserId: str
    name: str
    status: str
    state: str
    rejectionReason: str
    startsAt: str
    endsAt: str | None
    cpm: str
    cpc: str
    budget: str
    dailyCap: str | None
    sizes: list[str]
    placements: list[str]
    siteAllow: list[str]
    siteDeny: list[str]
    funded: str
    remaining: str
    spent: str
    returned: str
    creatives: list[CreativeOut] | None = None
    tasks: list[TaskOut] | None = None


class CampaignList(BaseModel):
    campaigns: list[CampaignOut]


class DayOut(BaseModel):
    day: str
    impressions: int
    billableImpressions: int
    clicks: int
    billableClicks: int
    ctr: str
    spend: str
    ecpm: str
    rewards: str
    completions: dict[str, int]


class ReportOut(BaseModel):
    campaignId: str
    from_: str = Field(alias="from")
    to: str
    token: str
    days: list[DayOut]
    totals: DayOut
    refusals: dict[str, int]


async def _advertiser() -> Advertiser:
    return await advertisers.advertiser_of(current_wallet())


@blueprint.post("/advertisers/register")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_session
@validate_request(AdvertiserRegistration)
async def register_advertiser(data: AdvertiserRegistration) -> tuple[Response, int]:
    """Create the signed-in wallet's advertiser account (201), or return it when it exists (200)."""
    registration = await advertisers.register(current_wallet(), data, services().clock.now())
    advertiser = registration.advertiser
    body = {"advertiserId": advertiser.id, "wallet": advertiser.wallet, "name": advertiser.name}
    return jsonify(body), 201 if registration.created else 200


@blueprint.get("/advertisers/account")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_session
@validate_response(AccountOut)
async def advertiser_account() -> dict:
    """The advertiser's G$: unallocated (``available``: to allocate or withdraw), in campaign budgets, in task
    pools, and in withdrawals not yet redeemed. Ends campaigns that are due and returns their unspent budget."""
    advertiser = await _advertiser()
    money = await advertiser_balance(advertiser)
    return {"advertiserId": advertiser.id, "wallet": advertiser.wallet, "name": advertiser.name, "token": "G$",
            "available": to_decimal_string(money.available), "inCampaigns": to_decimal_string(money.in_campaigns),
            "inTasks": to_decimal_string(money.in_tasks),
            "pendingWithdrawals": to_decimal_string(money.pending_withdrawals)}


@blueprint.post("/advertisers/deposit/prepare")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_session
@validate_request(Funds)
async def advertiser_deposit_prepare(data: Funds) -> Response:
    """The unsigned approve and deposit transactions (``eth_sendTransaction`` parameters) that deposit ``amount``
    G$ into the vault for this advertiser; send them in order from the wallet, then post the deposit's hash."""
    holder = advertiser_holder(await _advertiser())
    plan = deposits.prepare(holder, data.amount, services().chain)
    return jsonify({"advertiserId": holder.id, "token": "G$", "amount": to_decimal_string(plan.amount),
                    "accountRef": holder.account_ref, "transactions": [plan.approve, plan.deposit]})


@blueprint.post("/advertisers/deposit")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_session
@validate_request(DepositReport)
async def advertiser_deposit(data: DepositReport) -> tuple[Response, int]:
    """Credit a G$ deposit the wallet made to the vault: 201 credited, 202 pending its confirmations, 409 when the
    transaction was credited before."""
    run = services()
    credited = await deposits.credit(advertiser_holder(await _advertiser()), data.tx_hash, run.chain, run.clock.now())
    body = {"depositId": credited.id, "txHash": credited.tx_hash, "token": credited.token_symbol,
            "amount": to_decimal_string(int(credited.amount)), "status": credited.status.value}
    return jsonify(body), 201 if credited.status == DepositStatus.CREDITED else 202


@blueprint.post("/advertisers/withdraw")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_session
@validate_request(Funds)
async def advertiser_withdraw(data: Funds) -> tuple[Response, int]:
    """Debit ``amount`` from the unallocated balance now and return the signed claim that pays it to the wallet on
    the vault (``transaction``); released back if not redeemed by its deadline."""
    run = services()
    result = await withdrawals.withdraw(advertiser_holder(await _advertiser()), data.amount, Token.GS,
                                        minimum=run.settings.min_withdrawal, chain=run.chain, now=run.clock.now())
    withdrawal = result.withdrawal
    return jsonify({"withdrawalId": withdrawal.id, "token": withdrawal.token_symbol,
                    "amount": to_decimal_string(int(withdrawal.amount)), "status": withdrawal.status.value,
                    "createdAt": iso(withdrawal.created_at), "transaction": claim_payload(result.claim)}), 201


@blueprint.get("/advertisers/campaigns")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_session
@validate_response(CampaignList)
async def advertiser_campaigns() -> dict:
    """The advertiser's campaigns, newest first, with their state and money."""
    found = await views.list_campaigns((await _advertiser()).id, services().clock.now())
    return {"campaigns": [campaign_body(view, details=False) for view in found]}


@blueprint.post("/advertisers/campaigns")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_session
@validate_request(NewCampaign)
@validate_response(CampaignOut, 201)
async def create_campaign(data: NewCampaign) -> tuple[dict, int]:
    """Create a draft campaign (name, startsAt, cpm, cpc and budget required). It serves only once submitted,
    approved by an operator, inside its dates and funded."""
    now = services().clock.now()
    created = await campaigns.create_campaign((await _advertiser()).id, data, now)
    return await _detail(created.id), 201


@blueprint.get("/advertisers/campaigns/<campaign_id>")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_session
@validate_response(CampaignOut)
async def get_campaign(campaign_id: str) -> dict:
    """One campaign with its creatives and tasks."""
    return await _detail(campaign_id)


@blueprint.patch("/advertisers/campaigns/<campaign_id>")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_session
@validate_request(CampaignChanges)
@validate_response(CampaignOut)
async def edit_campaign(campaign_id: str, data: CampaignChanges) -> dict:
    """Change settings (those sent). Refused while in review or once ended (409 ``campaign_locked``)."""
    await campaigns.edit_settings(current_wallet(), campaign_id, data, services().clock.now())
    return await _detail(campaign_id)


@blueprint.post("/advertisers/campaigns/<campaign_id>/<any(submit, pause, resume, end):action>")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_session
@validate_response(CampaignOut)
async def campaign_action(campaign_id: str, action: str) -> dict:
    """Move the campaign: ``submit`` (draft or rejected → review), ``pause`` (approved → paused), ``resume``
    (paused → approved), ``end`` (for good; unspent budget returns to the account). 409 ``invalid_transition``
    with the current ``currentStatus`` otherwise."""
    step = {"submit": lifecycle.submit, "pause": lifecycle.pause, "resume": lifecycle.resume,
            "end": lifecycle.end}[action]
    await step(current_wallet(), campaign_id, services().clock.now())
    return await _detail(campaign_id)


@blueprint.post("/advertisers/campaigns/<campaign_id>/allocate")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_session
@validate_request(Funds)
async def allocate_campaign(campaign_id: str, data: Funds) -> Response:
    """Move ``amount`` G$ from the unallocated balance into the campaign's budget (never more than the balance,
    nor beyond the campaign's budget: 400 ``insufficient_balance`` / 409 ``over_budget``)."""
    remaining = await funding.allocate_to_campaign(current_wallet(), campaign_id, data.amount,
                                                   services().clock.now())
    return jsonify({"campaignId": campaign_id, "token": "G$", "remaining": to_decimal_string(remaining)})


@blueprint.post("/advertisers/campaigns/<campaign_id>/creatives")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_session
@validate_request(NewCreative)
@validate_response(CreativeOut, 201)
async def add_creative(campaign_id: str, data: NewCreative) -> tuple[dict, int]:
    """Add a creative (bannerUrl, targetUrl and size required; http or https only). It waits for review: with
    the campaign, or alone when the campaign is already approved."""
    creative = await creatives.add_creative(current_wallet(), campaign_id, data, services().clock.now())
    return creative_body(creative), 201


@blueprint.patch("/advertisers/creatives/<creative_id>")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_session
@validate_request(CreativeChanges)
@validate_response(CreativeOut)
async def edit_creative(creative_id: str, data: CreativeChanges) -> dict:
    """Change a creative: it goes back to review and stops serving until approved; the campaign's other creatives
    keep serving."""
    creative = await creatives.edit_creative(current_wallet(), creative_id, data, services().clock.now())
    return creative_body(creative)


@blueprint.post("/advertisers/campaigns/<campaign_id>/tasks")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_session
@validate_request(NewTask)
@validate_response(TaskOut, 201)
async def create_campaign_task(campaign_id: str, data: NewTask) -> tuple[dict, int]:
    """Add a task or unit to a draft or rejected campaign (kind, title and config required); it is reviewed with
    the campaign. Its dates default to the campaign's."""
    task = await authoring.create_task(current_wallet(), campaign_id, data, services().clock.now())
    return task_body(task), 201


@blueprint.patch("/advertisers/tasks/<task_id>")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_session
@validate_request(TaskChanges)
@validate_response(TaskOut)
async def edit_campaign_task(task_id: str, data: TaskChanges) -> dict:
    """Change a task: its content while the campaign is unreviewed, its rewards and limits until it ends."""
    return task_body(await authoring.edit_task(current_wallet(), task_id, data))


@blueprint.post("/advertisers/tasks/<task_id>/end")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_session
async def end_campaign_task(task_id: str) -> Response:
    """Switch the task off for good; its G$ pool returns to the unallocated balance."""
    returned = await authoring.end_task(current_wallet(), task_id, services().clock.now())
    return jsonify({"taskId": task_id, "active": False, "returned": to_decimal_string(returned)})


@blueprint.post("/advertisers/tasks/<task_id>/allocate")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_session
@validate_request(Funds)
async def allocate_task(task_id: str, data: Funds) -> Response:
    """Move ``amount`` G$ from the unallocated balance into the task's pool, which pays its rewards first."""
    pool = await authoring.allocate_to_task(current_wallet(), task_id, data.amount, services().clock.now())
    return jsonify({"taskId": task_id, "token": "G$", "pool": to_decimal_string(pool)})


@blueprint.get("/advertisers/campaigns/<campaign_id>/report")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_session
@validate_querystring(Period)
@validate_response(ReportOut)
async def campaign_report(campaign_id: str, query_args: Period) -> dict:
    """Per UTC day from ``from`` to ``to`` (default: the last 30 days, at most 92): impressions, billable
    impressions, clicks, CTR, spend, eCPM, rewards and completions per task; and refusal reasons in aggregate."""
    start, end = query_args.days(services().clock.today())
    return report_body(await campaign_reports.campaign_report(current_wallet(), campaign_id, start, end))


@blueprint.get("/advertisers/campaigns/<campaign_id>/report.csv")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_session
@validate_querystring(Period)
async def campaign_report_csv(campaign_id: str, query_args: Period) -> Response:
    """The same report as CSV (one row per day and a total row), for spreadsheets."""
    start, end = query_args.days(services().clock.today())
    result = await campaign_reports.campaign_report(current_wallet(), campaign_id, start, end)
    response = Response(campaign_reports.report_csv(result), mimetype="text/csv")
    response.headers["Content-Disposition"] = f'attachment; filename="{campaign_id}-{start}-{end}.csv"'
    return response


async def _detail(campaign_id: str) -> dict:
    return campaign_body(await views.campaign_detail(current_wallet(), campaign_id, services().clock.now()))


def campaign_body(view: views.CampaignView, *, details: bool = True) -> dict:
    """A campaign as the API shows it; with ``details``, its creatives and tasks."""
    campaign = view.campaign
    body: dict[str, Any] = {
        "id": campaign.id, "advertiserId": campaign.advertiser_id,  # type: ignore[attr-defined]
        "name": campaign.name, "status": campaign.status.value, "state": view.state,
        "rejectionReason": campaign.rejection_reason, "startsAt": iso(campaign.starts_at),
        "endsAt": iso(campaign.ends_at) if campaign.ends_at else None,
        "cpm": to_decimal_string(int(campaign.cpm)), "cpc": to_decimal_string(int(campaign.cpc)),
        "budget": to_decimal_string(int(campaign.budget)),
        "dailyCap": to_decimal_string(int(campaign.daily_cap)) if campaign.daily_cap is not None else None,
        "sizes": campaign.sizes, "placements": campaign.placements, "siteAllow": campaign.site_allow,
        "siteDeny": campaign.site_deny, "funded": to_decimal_string(view.funded),
        "remaining": to_decimal_string(view.remaining), "spent": to_decimal_string(view.spent),
        "returned": to_decimal_string(view.returned),
    }
    if details:
        body["creatives"] = [creative_body(creative) for creative in view.creatives]
        body["tasks"] = [task_body(task) for task in view.tasks]
    return body


def creative_body(creative: Creative) -> dict:
    return {
        "id": creative.id, "campaignId": creative.campaign_id,  # type: ignore[attr-defined]
        "bannerUrl": creative.banner_url, "targetUrl": creative.target_url, "description": creative.description,
        "mediaType": creative.media_type.value, "size": f"{creative.width}x{creative.height}",
        "status": creative.status.value, "rejectionReason": creative.rejection_reason,
        "updatedAt": iso(creative.updated_at),
    }


def task_body(task: Task) -> dict:
    """A task as its owner (and operators) see it: the whole config, secrets included, and the public view that
    viewers get."""
    return {
        "id": task.id, "campaignId": task.campaign_id,  # type: ignore[attr-defined]
        "kind": task.kind.value, "surface": task.surface.value, "title": task.title,
        "description": task.description, "config": task.config, "rewardPoints": task.reward_points,
        "rewardGs": to_decimal_string(int(task.reward_gs)), "maxPerWallet": task.max_per_wallet,
        "maxPerFingerprint": task.max_per_fingerprint, "startsAt": iso(task.starts_at),
        "endsAt": iso(task.ends_at) if task.ends_at else None, "active": task.active,
        "preview": public_task(task, services().settings.public_url),
    }


def report_body(result: campaign_reports.CampaignReport) -> dict:
    return {"campaignId": result.campaign.id, "from": result.start.isoformat(), "to": result.end.isoformat(),
            "token": "G$", "days": [_day_body(figures, result) for figures in result.days],
            "totals": _day_body(result.totals, result), "refusals": result.refusals}


def _day_body(figures: campaign_reports.DayFigures, result: campaign_reports.CampaignReport) -> dict:
    return {"day": figures.day.isoformat() if figures.day else "total", "impressions": figures.impressions,
            "billableImpressions": figures.billable_impressions, "clicks": figures.clicks,
            "billableClicks": figures.billable_clicks, "ctr": campaign_reports.ctr_text(figures),
            "spend": to_decimal_string(figures.spend), "ecpm": to_decimal_string(figures.ecpm),
            "rewards": to_decimal_string(figures.rewards),
            "completions": campaign_reports.completions_by_task(figures, result.tasks)}
