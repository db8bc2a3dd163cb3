"""Conversions: a campaign's goals under /api/advertisers (the advertiser routes' auth: a SIWE session or an API
key, ``campaigns:manage`` to change, ``reports:read`` to read), and ``POST /api/conversions``, where the
advertiser's server reports a conversion with a key scoped ``conversions:write`` (rules in adnet.conversions;
the guide is docs/conversions.md). ``POST /api/conversions/bind``, where a landing page proves a wallet for a click
(``adnet.conversions.binding``), is public: open to any origin, under the public rate limit, like /api/track."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from quart import Blueprint, Response
from quart_rate_limiter import rate_limit
from quart_schema import document_response

from adnet.accounts.commands import ApiKeyScope
from adnet.campaigns import goals
from adnet.campaigns.commands import GoalChanges, NewGoal
from adnet.conversions.binding import bind_wallet
from adnet.conversions.commands import ConversionReport, WalletBinding
from adnet.conversions.recording import conversion_payload, record_conversion
from adnet.services import Services
from api.http import answer, with_body
from api.schemas import GoalOut, Schema, goal_out, refusals
from api.sessions import require_account
from web.limits import ACCOUNT_LIMIT, settings_limit
from web.sessions import current_wallet

blueprint = Blueprint("api_conversions", __name__, url_prefix="/api")
public_blueprint = Blueprint("api_conversion_bindings", __name__, url_prefix="/api")


class GoalList(Schema):
    goals: list[GoalOut]


class GoalDeletedOut(Schema):
    goal_id: str
    deleted: bool


class ConversionOut(Schema):
    """A recorded conversion: whether it was attributed to its click and paid, the reason when it was not
    (docs/conversions.md), what it cost (G$) and the order's value as reported."""

    conversion_id: str
    campaign_id: str
    goal_id: str
    order_id: str
    site_id: str | None
    attributed: bool
    paid: bool
    reason: str | None
    cost: str
    value: str | None
    occurred_at: str
    clicked_at: str | None
    received_at: str


class BoundOut(Schema):
    """The wallet proven for the click, and the click's campaign."""

    status: Literal["bound"]
    wallet: str
    campaign_id: str


@blueprint.get("/advertisers/campaigns/<campaign_id>/goals")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_account(ApiKeyScope.REPORTS)
@document_response(GoalList)
@refusals(403, 404)
async def list_goals(campaign_id: str) -> Response:
    """The campaign's conversion goals, oldest first."""
    return answer(GoalList(goals=[goal_out(goal) for goal in await goals.campaign_goals(current_wallet(),
                                                                                         campaign_id)]))


@blueprint.post("/advertisers/campaigns/<campaign_id>/goals")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_account(ApiKeyScope.CAMPAIGNS)
@with_body(NewGoal)
@document_response(GoalOut, 201)
@refusals(400, 403, 404, 409)
async def add_goal(campaign_id: str, data: NewGoal, now: datetime) -> Response:
    """Add a goal to a draft or rejected campaign (name and event required); it is reviewed with the campaign. 409
    ``campaign_locked`` once submitted, ``goal_exists`` for an event the campaign already counts."""
    return answer(goal_out(await goals.add_goal(current_wallet(), campaign_id, data, now)), 201)


@blueprint.patch("/advertisers/goals/<goal_id>")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_account(ApiKeyScope.CAMPAIGNS)
@with_body(GoalChanges)
@document_response(GoalOut)
@refusals(400, 403, 404, 409)
async def edit_goal(goal_id: str, data: GoalChanges, now: datetime) -> Response:
    """Change a goal: its name, event and ``public`` while the campaign is unreviewed, its window, wallet cap and
    CPA until the campaign ends (409 ``campaign_locked`` otherwise)."""
    return answer(goal_out(await goals.edit_goal(current_wallet(), goal_id, data, now)))


@blueprint.delete("/advertisers/goals/<goal_id>")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_account(ApiKeyScope.CAMPAIGNS)
@document_response(GoalDeletedOut)
@refusals(403, 404, 409)
async def delete_goal(goal_id: str) -> Response:
    """Remove a goal of a draft or rejected campaign (409 ``campaign_locked`` once submitted)."""
    await goals.delete_goal(current_wallet(), goal_id)
    return answer(GoalDeletedOut(goal_id=goal_id, deleted=True))


@blueprint.post("/conversions")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_account(ApiKeyScope.CONVERSIONS)
@with_body(ConversionReport)
@document_response(ConversionOut, 201)
@document_response(ConversionOut, 200)
@refusals(400, 403, 404, 409)
async def report_conversion(data: ConversionReport, run: Services, now: datetime) -> Response:
    """Record a conversion the advertiser's server saw: the click id its landing page received, the goal, the
    order id (one conversion per campaign and order), optionally the order's value, when it happened and the
    wallet its own sign-in proved. 201 once recorded (attributed and paid, or with the reason it was not); 200 with
    the conversion first recorded for an order reported again. 409 ``goal_not_reviewed`` before the campaign is
    approved."""
    settings = run.settings
    recorded = await record_conversion(
        current_wallet(), data, secrets=(settings.tracking_secret, settings.tracking_secret_previous or ""),
        share_bps=settings.publisher_share_bps, single_writer=settings.database_url.startswith("sqlite"),
        now=now)
    return answer(ConversionOut.model_validate(conversion_payload(recorded.conversion)),
                  201 if recorded.created else 200)


@public_blueprint.post("/conversions/bind")
@rate_limit(limits=settings_limit("rate_limit_public"))
@with_body(WalletBinding)
@document_response(BoundOut, 201)
@document_response(BoundOut, 200)
@refusals(400, 401, 409, 429, 503)
async def bind(data: WalletBinding, run: Services, now: datetime) -> Response:
    """Prove a wallet for a click: its EIP-191 signature of the binding message naming the click id
    (docs/conversions.md). 201 once bound, 200 when the same wallet was bound to the click before; 401
    ``invalid_signature`` for anything that is not the wallet's signature of this click's message (one made for
    another click included), 409 ``click_already_bound`` when another wallet was proven for it first."""
    settings = run.settings
    bound = await bind_wallet(run.chain, data, secrets=(settings.tracking_secret,
                                                        settings.tracking_secret_previous or ""),
                              now=now)
    return answer(BoundOut(status="bound", wallet=bound.binding.wallet, campaign_id=bound.binding.campaign_id),
                  201 if bound.created else 200)
