"""The operator API under /api/operators: the review queue, approving and rejecting campaigns and creatives, the
vault's protocol rate, and platform revenue (rules in adnet.campaigns.review and adnet.money.rate).

Every route needs a SIWE session (401 ``auth_required``) of a wallet listed in ``ADNET_OPERATORS`` (403
``not_operator``).
"""

from __future__ import annotations

from pydantic import BaseModel
from quart import Blueprint, Response, jsonify
from quart_rate_limiter import rate_limit
from quart_schema import validate_request, validate_response

from adnet.accounts.operators import check_operator
from adnet.campaigns import review
from adnet.campaigns.commands import Rejection
from adnet.core.amounts import to_decimal_string
from adnet.money import rate
from adnet.money.commands import NewRate
from adnet.reporting import revenue
from api.advertisers import CampaignOut, CreativeOut, campaign_body, creative_body
from api.http import services
from api.ratelimit import settings_limit
from api.sessions import current_wallet, require_session

blueprint = Blueprint("api_operators", __name__, url_prefix="/api")

ACCOUNT_LIMIT = settings_limit("rate_limit_account")


class ReviewQueueOut(BaseModel):
    campaigns: list[CampaignOut]
    creatives: list[CreativeOut]


class RevenueDay(BaseModel):
    day: str
    earned: str


class RevenueOut(BaseModel):
    token: str
    balance: str
    earned: str
    days: list[RevenueDay]


def _operator() -> str:
    return check_operator(services().settings, current_wallet())


@blueprint.get("/operators/review")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_session
@validate_response(ReviewQueueOut)
async def operator_review_queue() -> dict:
    """Campaigns in review (oldest first) with their creatives (banner URL, media type and size, to preview how
    the banner renders) and tasks; then creatives changed on approved or paused campaigns, waiting alone."""
    _operator()
    queue = await review.review_queue(services().clock.now())
    return {"campaigns": [campaign_body(view) for view in queue.campaigns],
            "creatives": [creative_body(creative) for creative in queue.creatives]}


@blueprint.post("/operators/campaigns/<campaign_id>/approve")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_session
async def approve_campaign(campaign_id: str) -> Response:
    """Approve a campaign in review with its creatives in review: it serves from now on, inside its dates and
    with budget. 409 ``invalid_transition`` when it is not in review."""
    campaign = await review.approve_campaign(_operator(), campaign_id, services().clock.now())
    return jsonify({"campaignId": campaign.id, "status": campaign.status.value})


@blueprint.post("/operators/campaigns/<campaign_id>/reject")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_session
@validate_request(Rejection)
async def reject_campaign(campaign_id: str, data: Rejection) -> Response:
    """Reject a campaign in review, with the reason its owner will see."""
    campaign = await review.reject_campaign(_operator(), campaign_id, data, services().clock.now())
    return jsonify({"campaignId": campaign.id, "status": campaign.status.value,
                    "rejectionReason": campaign.rejection_reason})


@blueprint.post("/operators/creatives/<creative_id>/approve")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_session
async def approve_creative(creative_id: str) -> Response:
    """Approve a creative waiting alone (its campaign approved or paused): it serves from now on."""
    creative = await review.approve_creative(_operator(), creative_id, services().clock.now())
    return jsonify({"adId": creative.id, "status": creative.status.value})


@blueprint.post("/operators/creatives/<creative_id>/reject")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_session
@validate_request(Rejection)
async def reject_creative(creative_id: str, data: Rejection) -> Response:
    """Reject a creative waiting alone, with a reason; the campaign's other creatives keep serving."""
    creative = await review.reject_creative(_operator(), creative_id, data, services().clock.now())
    return jsonify({"adId": creative.id, "status": creative.status.value,
                    "rejectionReason": creative.rejection_reason})


@blueprint.get("/operators/rate")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_session
async def operator_rate() -> Response:
    """The vault's protocol rate (G$ per SOV), read from the chain now, and the vault's owner."""
    _operator()
    current = await rate.vault_rate(services().chain)
    return jsonify({"rate": to_decimal_string(current.rate), "vaultOwner": current.vault_owner})


@blueprint.post("/operators/rate")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_session
@validate_request(NewRate)
async def operator_set_rate(data: NewRate) -> Response:
    """The unsigned ``setRate`` transaction for the vault's owner to send (a multisig in production). With
    ``send`` on the development chain, adnet sends it with the deployer's key and returns its hash (409
    ``send_unavailable`` elsewhere)."""
    run, operator = services(), _operator()
    change = (await rate.send_rate(operator, run.chain, run.settings, data.rate) if data.send
              else await rate.rate_transaction(operator, run.chain, data.rate))
    return jsonify({"rate": to_decimal_string(change.rate), "vaultOwner": change.vault_owner,
                    "transaction": change.transaction, "txHash": change.tx_hash})


@blueprint.get("/operators/revenue")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_session
@validate_response(RevenueOut)
async def platform_revenue() -> dict:
    """The platform's G$: its balance, its lifetime share of billed events, and its earnings per UTC day over
    the last 30 days."""
    _operator()
    result = await revenue.revenue(services().clock.now())
    return {"token": "G$", "balance": to_decimal_string(result.balance), "earned": to_decimal_string(result.earned),
            "days": [{"day": day.isoformat(), "earned": to_decimal_string(amount)} for day, amount in result.days]}
