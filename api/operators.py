"""The operator API under /api/operators: the review queue, approving and rejecting campaigns and creatives, the
vault's protocol rate, and platform revenue (rules in adnet.campaigns.review and adnet.money.rate).

Every route needs a SIWE session (401 ``auth_required``) of a wallet listed in ``ADNET_OPERATORS`` (403
``not_operator``).
"""

from __future__ import annotations

from datetime import datetime

from pydantic import Field
from quart import Blueprint, Response
from quart_rate_limiter import rate_limit
from quart_schema import document_response

from adnet.accounts.operators import check_operator
from adnet.campaigns import review
from adnet.campaigns.commands import Recategorization, Rejection
from adnet.core.amounts import Token
from adnet.core.clock import iso
from adnet.money import rate
from adnet.money.commands import NewRate
from adnet.reporting import revenue
from adnet.reporting.commands import ReportPeriod
from adnet.services import Services
from adnet.tasks import review as task_review
from api.http import answer, with_body, with_query
from api.schemas import (
    HOUR_FIELD,
    IAB_ID,
    Address,
    AmountText,
    CampaignOut,
    CreativeOut,
    Day,
    Schema,
    WalletTransaction,
    campaign_out,
    creative_out,
    refusals,
)
from api.sessions import require_session
from web.context import app_settings, injected
from web.limits import ACCOUNT_LIMIT
from web.sessions import current_wallet

blueprint = Blueprint("api_operators", __name__, url_prefix="/api")


class ReviewQueueOut(Schema):
    campaigns: list[CampaignOut]
    creatives: list[CreativeOut]


class DecisionOut(Schema):
    """A campaign's new status (and the reason it was rejected)."""

    campaign_id: str
    status: str
    rejection_reason: str


class CreativeDecisionOut(Schema):
    ad_id: str
    status: str
    rejection_reason: str


class TaskDecisionOut(Schema):
    """A task rejected in review: switched off, with the reason its advertiser reads."""

    task_id: str
    active: bool
    rejection_reason: str


class RateOut(Schema):
    """The vault's protocol rate (G$ per SOV) and the vault's owner, who sets it."""

    rate: AmountText
    vault_owner: Address


class RateChangeOut(RateOut):
    """The unsigned ``setRate`` transaction for the owner to send, or, sent by adnet, its hash."""

    transaction: WalletTransaction
    tx_hash: str | None


class RevenueDay(Schema):
    day: Day
    hour: str | None = Field(None, description=HOUR_FIELD)
    earned: AmountText


class RevenueOut(Schema):
    token: Token
    balance: AmountText
    earned: AmountText
    days: list[RevenueDay]


def _operator() -> str:
    return check_operator(app_settings(), current_wallet())


@blueprint.get("/operators/review")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_session
@document_response(ReviewQueueOut)
@refusals(403)
@injected
async def operator_review_queue(run: Services, now: datetime) -> Response:
    """Campaigns in review (oldest first) with their creatives (banner URL, media type and size, to preview how
    the banner renders) and tasks; then creatives changed on approved or paused campaigns, waiting alone."""
    _operator()
    queue = await review.review_queue(now)
    return answer(ReviewQueueOut(campaigns=[campaign_out(view, run.settings.public_url) for view in queue.campaigns],
                                 creatives=[creative_out(creative, run.settings.public_url)
                                            for creative in queue.creatives]))


@blueprint.post("/operators/campaigns/<campaign_id>/approve")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_session
@document_response(DecisionOut)
@refusals(403, 404, 409)
@injected
async def approve_campaign(campaign_id: str, now: datetime) -> Response:
    """Approve a campaign in review with its creatives in review: it serves from now on, inside its dates and
    with budget. 409 ``invalid_transition`` when it is not in review."""
    campaign = await review.approve_campaign(_operator(), campaign_id, now)
    return answer(DecisionOut(campaign_id=campaign.id, status=campaign.status.value,
                              rejection_reason=campaign.rejection_reason))


class CategoryOut(Schema):
    """A campaign's category after an operator's correction."""

    campaign_id: str
    category: str
    category_iab_id: str = Field(description=IAB_ID)


@blueprint.post("/operators/campaigns/<campaign_id>/category")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_session
@with_body(Recategorization)
@document_response(CategoryOut)
@refusals(400, 403, 404)
async def recategorize_campaign(campaign_id: str, data: Recategorization, now: datetime) -> Response:
    """Correct the campaign's category (any status): publishers that block the new category stop showing it at
    once."""
    campaign = await review.recategorize_campaign(_operator(), campaign_id, data, now)
    return answer(CategoryOut(campaign_id=campaign.id, category=campaign.category.value,
                               category_iab_id=campaign.category_iab_id))


@blueprint.post("/operators/campaigns/<campaign_id>/reject")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_session
@with_body(Rejection)
@document_response(DecisionOut)
@refusals(400, 403, 404, 409)
async def reject_campaign(campaign_id: str, data: Rejection, now: datetime) -> Response:
    """Reject a campaign in review, with the reason its owner will see."""
    campaign = await review.reject_campaign(_operator(), campaign_id, data, now)
    return answer(DecisionOut(campaign_id=campaign.id, status=campaign.status.value,
                              rejection_reason=campaign.rejection_reason))


@blueprint.post("/operators/creatives/<creative_id>/approve")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_session
@document_response(CreativeDecisionOut)
@refusals(403, 404, 409)
@injected
async def approve_creative(creative_id: str, now: datetime) -> Response:
    """Approve a creative waiting alone (its campaign approved or paused): it serves from now on."""
    creative = await review.approve_creative(_operator(), creative_id, now)
    return answer(CreativeDecisionOut(ad_id=creative.id, status=creative.status.value,
                                      rejection_reason=creative.rejection_reason))


@blueprint.post("/operators/creatives/<creative_id>/reject")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_session
@with_body(Rejection)
@document_response(CreativeDecisionOut)
@refusals(400, 403, 404, 409)
async def reject_creative(creative_id: str, data: Rejection, now: datetime) -> Response:
    """Reject a creative waiting alone, with a reason; the campaign's other creatives keep serving."""
    creative = await review.reject_creative(_operator(), creative_id, data, now)
    return answer(CreativeDecisionOut(ad_id=creative.id, status=creative.status.value,
                                      rejection_reason=creative.rejection_reason))


@blueprint.post("/operators/tasks/<task_id>/reject")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_session
@with_body(Rejection)
@document_response(TaskDecisionOut)
@refusals(400, 403, 404, 409)
async def reject_task(task_id: str, data: Rejection, now: datetime) -> Response:
    """Reject one task of a campaign in review, with a reason: it is switched off (nothing serves or pays it) and
    its G$ pool returns to the advertiser; the campaign is decided with its other tasks."""
    task = await task_review.reject_task(_operator(), task_id, data, now)
    return answer(TaskDecisionOut(task_id=task.id, active=task.active, rejection_reason=task.rejection_reason))


@blueprint.get("/operators/rate")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_session
@document_response(RateOut)
@refusals(403, 503)
@injected
async def operator_rate(run: Services) -> Response:
    """The vault's protocol rate (G$ per SOV), read from the chain now, and the vault's owner."""
    _operator()
    current = await rate.vault_rate(run.chain)
    return answer(RateOut(rate=current.rate, vault_owner=current.vault_owner))


@blueprint.post("/operators/rate")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_session
@with_body(NewRate)
@document_response(RateChangeOut)
@refusals(400, 403, 409, 503)
async def operator_set_rate(data: NewRate, run: Services) -> Response:
    """The unsigned ``setRate`` transaction for the vault's owner to send (a multisig in production). With
    ``send`` on the development chain, adnet sends it with the deployer's key and returns its hash (409
    ``send_unavailable`` elsewhere)."""
    operator = _operator()
    change = (await rate.send_rate(operator, run.chain, run.settings, data.rate) if data.send
              else await rate.rate_transaction(operator, run.chain, data.rate))
    return answer(RateChangeOut(rate=change.rate, vault_owner=change.vault_owner,
                                transaction=WalletTransaction.of(change.transaction),
                                tx_hash=change.tx_hash))


@blueprint.get("/operators/revenue")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_session
@with_query(ReportPeriod)
@document_response(RevenueOut)
@refusals(400, 403)
@injected
async def platform_revenue(query_args: ReportPeriod, run: Services, now: datetime) -> Response:
    """The platform's G$: its balance, its lifetime share of billed events, and its earnings per UTC day from
    ``from`` to ``to`` (the last 30 days by default), or per UTC hour (``granularity=hour``, the last 14 days at
    most)."""
    _operator()
    first, last = query_args.days(run.clock.today())
    result = await revenue.revenue(now, first, last, query_args.granularity)
    return answer(RevenueOut(token=Token.GS, balance=result.balance, earned=result.earned, days=[
        RevenueDay(day=moment.date(), hour=iso(moment), earned=amount) if isinstance(moment, datetime)
        else RevenueDay(day=moment, hour=None, earned=amount) for moment, amount in result.days]))
