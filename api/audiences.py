"""A viewer's wallet audiences over HTTP: which audiences the signed-in wallet is in, and its switch for wallet
targeting (rules in adnet.audiences.wallets). Public like the rewards routes, behind the same rewards sign-in."""

from __future__ import annotations

from typing import cast

from pydantic import Field, StrictBool
from quart import Blueprint, Response, g
from quart_rate_limiter import rate_limit
from quart_schema import document_response

from adnet.accounts.sessions import ActiveSession
from adnet.audiences import wallets
from adnet.audiences.evaluation import live_rules
from adnet.core.inputs import Command
from api.http import answer, with_body
from api.rewards import PUBLIC_LIMIT, require_rewards_session
from api.schemas import Address, Schema, Time, refusals
from web.context import services

blueprint = Blueprint("api_audiences", __name__, url_prefix="/api")


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


async def _audiences_out(wallet: str) -> AudiencesOut:
    found = await wallets.wallet_audiences(wallet, await live_rules(), services().clock.now())
    return AudiencesOut(wallet=found.wallet, targeting_enabled=not found.targeting_off, audiences=found.audiences,
                        evaluated_at=found.evaluated_at, expires_at=found.expires_at)


@blueprint.get("/audiences")
@rate_limit(limits=PUBLIC_LIMIT)
@require_rewards_session
@document_response(AudiencesOut)
@refusals(429)
async def wallet_audiences() -> Response:
    """Which wallet audiences of live campaigns the signed-in wallet is in, and whether wallet targeting is on."""
    return answer(await _audiences_out(cast(ActiveSession, g.session).wallet))


@blueprint.post("/audiences/targeting")
@rate_limit(limits=PUBLIC_LIMIT)
@require_rewards_session
@with_body(WalletTargeting)
@document_response(AudiencesOut)
@refusals(400, 429)
async def wallet_targeting(data: WalletTargeting) -> Response:
    """Switch wallet targeting off for the signed-in wallet (what was found about it is forgotten, and no campaign
    with wallet audiences is chosen by it from now on, in every serving process) or on again."""
    wallet = cast(ActiveSession, g.session).wallet
    await wallets.set_targeting(wallet, off=not data.enabled, now=services().clock.now())
    return answer(await _audiences_out(wallet))
