"""Conversions: a campaign's goals under /api/advertisers (the advertiser routes' auth: a SIWE session or an API
key, ``campaigns:manage`` to change, ``reports:read`` to read), and ``POST /api/conversions``, where the
advertiser's server reports a conversion with a key scoped ``conversions:write`` (rules in adnet.conversions;
the guide is docs/conversions.md). ``POST /api/conversions/bind``, where a landing page proves a wallet for a click
(``adnet.conversions.binding``), is public: open to any origin, under the public rate limit, like /api/track; so
are ``POST /api/conversions/views``, where the viewer's page proves the wallet of its rewards session for an
impression (``adnet.conversions.views``, view-through), and ``/api/conversions/pixel``, where a page without a server
reports a conversion of a goal marked ``public``: as an image (GET, answering a 1x1 GIF) or a beacon (POST,
``navigator.sendBeacon``)."""

from __future__ import annotations

import base64
from datetime import datetime
from typing import Literal

from pydantic import Field
from quart import Blueprint, Response
from quart_rate_limiter import rate_limit
from quart_schema import document_querystring, document_response

from adnet.accounts.commands import ApiKeyScope
from adnet.campaigns import goals
from adnet.campaigns.commands import GoalChanges, NewGoal
from adnet.conversions.binding import bind_wallet
from adnet.conversions.commands import ConversionReport, PublicConversion, WalletBinding
from adnet.conversions.recording import Terms, conversion_payload, record_conversion, record_public
from adnet.conversions.views import ViewProof, bind_view
from adnet.core.errors import DomainError
from adnet.core.inputs import parse
from adnet.services import Services
from api.http import answer, query_values, with_body
from api.openapi import other_answer
from api.rewards import require_rewards_session
from api.schemas import GoalOut, Schema, goal_out, refusals
from api.sessions import require_account
from web.context import client, injected
from web.limits import ACCOUNT_LIMIT, settings_limit
from web.sessions import current_wallet

blueprint = Blueprint("api_conversions", __name__, url_prefix="/api")
# A transparent 1x1 GIF: what the image form of the pixel answers, recorded or refused.
PIXEL_GIF = base64.b64decode("R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7")
# The header in which the image form of the pixel names why it recorded nothing (an image's body says nothing).
PIXEL_ERROR_HEADER = "X-Adnet-Error"
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
    via: Literal["click", "view"] | None = Field(description="what it names: a click, or an impression "
                                                             "(view-through); null with neither")
    attributed: bool
    paid: bool
    reason: str | None
    cost: str
    value: str | None
    occurred_at: str
    clicked_at: str | None
    received_at: str


class ViewBoundOut(Schema):
    """The wallet proven for the impression, and the impression's campaign."""

    status: Literal["bound"]
    wallet: str
    campaign_id: str


class PixelOut(Schema):
    """A conversion a page reported: ``recorded`` once recorded, ``duplicate`` for an order reported before.
    Whether it was attributed or paid is the advertiser's to read, never the page's."""

    status: Literal["recorded", "duplicate"]


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
    recorded = await record_conversion(current_wallet(), data, Terms.of(run.settings), now)
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


@public_blueprint.get("/conversions/pixel")
@rate_limit(limits=settings_limit("rate_limit_public"))
@document_querystring(PublicConversion)
@other_answer(200, "A 1x1 GIF, whether the conversion was recorded or refused; a refusal names its error code in "
                   f"{PIXEL_ERROR_HEADER} and records nothing.", "image/gif",
              headers={PIXEL_ERROR_HEADER: "the error code of a refusal (docs/errors.md); absent once recorded"})
@refusals(429, 503)
@injected
async def pixel_image(run: Services, now: datetime) -> Response:
    """Report a conversion of a goal marked public from a page, as an image (``<img src>``): click id, goal, order
    id and optionally value in the query. The same rules, order ids and payment as ``POST /api/conversions``."""
    try:
        await record_public(parse(PublicConversion, query_values()), Terms.of(run.settings), now)
    except DomainError as error:
        return Response(PIXEL_GIF, 200, {PIXEL_ERROR_HEADER: error.code}, mimetype="image/gif")
    return Response(PIXEL_GIF, 200, mimetype="image/gif")


@public_blueprint.post("/conversions/pixel")
@rate_limit(limits=settings_limit("rate_limit_public"))
@with_body(PublicConversion)
@document_response(PixelOut, 201)
@document_response(PixelOut, 200)
@refusals(400, 403, 404, 409, 429, 503)
async def pixel_beacon(data: PublicConversion, run: Services, now: datetime) -> Response:
    """Report a conversion of a goal marked public from a page, as a beacon (``navigator.sendBeacon``, JSON sent
    as text/plain) or a fetch: 201 once recorded, 200 for an order reported before; 403 ``goal_not_public`` for a
    goal not marked public. The same rules, order ids and payment as ``POST /api/conversions``."""
    recorded = await record_public(data, Terms.of(run.settings), now)
    return answer(PixelOut(status="recorded" if recorded.created else "duplicate"), 201 if recorded.created else 200)


@public_blueprint.post("/conversions/views")
@rate_limit(limits=settings_limit("rate_limit_public"))
@require_rewards_session
@with_body(ViewProof)
@document_response(ViewBoundOut, 201)
@document_response(ViewBoundOut, 200)
@refusals(400, 409, 429)
async def bind_view_route(data: ViewProof, run: Services, now: datetime) -> Response:
    """Prove the rewards session's wallet for an impression its page recorded (view-through, docs/conversions.md):
    the impression's tracking token, from the client it was served to, within its 15 minutes. 201 once bound, 200
    when the same wallet was bound before; 400 ``view_invalid`` for a token that names no impression recorded for
    this client; 409 ``view_already_bound`` when another wallet was proven for it first."""
    bound = await bind_view(current_wallet(), data, client().binding, secrets=Terms.of(run.settings).secrets,
                            now=now)
    return answer(ViewBoundOut(status="bound", wallet=bound.binding.wallet, campaign_id=bound.binding.campaign_id),
                  201 if bound.created else 200)
