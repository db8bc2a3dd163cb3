"""A viewer's rewards over HTTP: sign in for rewards, then list what the wallet earned and get its claims again
(rules in adnet.accounts.signin and adnet.reporting.rewards).

Public like the tasks routes (publishers' pages call them from any origin, without credentials): the wallet proves
itself by signing a rewards sign-in message (``POST /api/rewards/message`` writes it, ``POST /api/rewards/session``
checks it), and the session token that answers goes as ``Authorization: Bearer``. That session lists and redeems
the wallet's rewards and opens nothing else; an account session of the wallet works here too.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import datetime
from functools import wraps
from typing import Any, Literal, TypeVar, cast

from quart import Blueprint, Response, g
from quart_rate_limiter import rate_limit
from quart_schema import document_response, security_scheme

from adnet.accounts import signin
from adnet.accounts.commands import SignIn, SignInAddress
from adnet.accounts.models import SessionScope
from adnet.accounts.sessions import ActiveSession, find_session
from adnet.audiences import wallets as audience_wallets
from adnet.audiences.passes import issue_pass
from adnet.core.errors import Unauthorized
from adnet.reporting import rewards
from adnet.services import Services
from api.http import answer, with_body
from api.schemas import Address, AmountText, Awarded, ClaimOut, Schema, Time, WalletTransaction, claim_out, refusals
from web.context import injected, services
from web.limits import settings_limit
from web.sessions import session_token

blueprint = Blueprint("api_rewards", __name__, url_prefix="/api")

F = TypeVar("F", bound=Callable[..., Awaitable[Any]])
PUBLIC_LIMIT = settings_limit("rate_limit_public")


class RewardsMessageOut(Schema):
    """The EIP-4361 message for the wallet to sign (``personal_sign``), with its single-use nonce."""

    message: str
    nonce: str
    expires_at: Time


class RewardsSessionOut(Schema):
    """A rewards session: send ``token`` as ``Authorization: Bearer`` to ``GET /api/rewards``; ``audiencePass`` goes
    as ``audience`` to ``GET /api/serve``, for campaigns with wallet audiences (until ``expiresAt``)."""

    wallet: Address
    token: str
    expires_at: Time
    scope: Literal["rewards"]
    audience_pass: str


class PointsOut(Schema):
    """The wallet's points in total, and what points are."""

    total: int
    about: str


class GsOut(Schema):
    """The wallet's G$ rewards: ever earned, and what its claims can still pay."""

    earned: AmountText
    redeemable: AmountText


class RewardOut(Schema):
    """A completion (``source: task``) or an answer to a unit (``unit``), what it earned, and its claim:
    ``claimStatus`` ``issued``, ``redeemed`` or ``expired`` (null: points only); ``transaction`` is the claim to
    submit while ``redeemable``, and ``redeemedTx`` the transaction that paid it."""

    source: Literal["task", "unit"]
    id: str
    task_id: str
    title: str
    kind: str
    earned_at: Time
    awarded: Awarded
    claim_ref: str | None
    claim_status: str | None
    redeemable: bool
    redeemed_tx: str | None
    transaction: ClaimOut | None


class RewardsOut(Schema):
    """The signed-in wallet's rewards, newest first (at most 200), and ``redeemAll``: one vault transaction that
    redeems up to 20 redeemable claims at once (``redeemAllCount`` of them, ``redeemAllClaimRefs``; null when none
    is redeemable)."""

    wallet: Address
    points: PointsOut
    gs: GsOut
    rewards: list[RewardOut]
    redeem_all: WalletTransaction | None
    redeem_all_count: int
    redeem_all_claim_refs: list[str]


def require_rewards_session(handler: F) -> F:
    """Route decorator: Unauthorized ``auth_required`` unless the request carries (as ``Authorization: Bearer``) a
    rewards session or an account session, left in ``g.session``."""

    @wraps(handler)
    async def guarded(*args: Any, **kwargs: Any) -> Any:
        session = await find_session(session_token(), services().clock.now(),
                                     scopes=(SessionScope.REWARDS, SessionScope.ACCOUNT))
        if session is None:
            raise Unauthorized("auth_required", "Sign in for rewards first: sign the message of POST "
                                                "/api/rewards/message and send the token of /api/rewards/session.")
        g.session = session
        return await handler(*args, **kwargs)

    return cast(F, security_scheme([{"session": []}])(refusals(401)(guarded)))


@blueprint.post("/rewards/message")
@rate_limit(limits=settings_limit("rate_limit_auth"))
@with_body(SignInAddress)
@document_response(RewardsMessageOut)
@refusals(400, 429)
async def rewards_message(data: SignInAddress, run: Services, now: datetime) -> Response:
    """The rewards sign-in message for ``address`` to sign, carrying a fresh single-use nonce (10 minutes). The
    address only fills in the text: nothing is shown until its wallet signs it."""
    grant = await signin.issue_nonce(settings=run.settings, chain_id=run.chain.chain_id, now=now, rng=run.random)
    message = signin.sign_in_message(grant, data.address, now, SessionScope.REWARDS)
    return answer(RewardsMessageOut(message=message, nonce=grant.nonce, expires_at=grant.expires_at))


@blueprint.post("/rewards/session")
@rate_limit(limits=settings_limit("rate_limit_auth"))
@with_body(SignIn)
@document_response(RewardsSessionOut, 201)
@refusals(400, 401, 429, 503)
async def rewards_session(data: SignIn, run: Services, now: datetime) -> Response:
    """Check a signed rewards sign-in message (its URI is adnet's ``/rewards``; every check of
    ``/api/auth/verify`` applies) and open a rewards session, which lists and redeems the wallet's rewards and
    nothing else. No cookie: the token travels as ``Authorization: Bearer``. The wallet, now proven, is evaluated
    for wallet audiences within seconds, and the answer carries its audience pass for ``GET /api/serve``."""
    signed_in = await signin.sign_in(data, settings=run.settings, chain=run.chain, now=now,
                                     rng=run.random, scope=SessionScope.REWARDS)
    await audience_wallets.proven(signed_in.wallet, now)
    return answer(RewardsSessionOut(
        wallet=signed_in.wallet, token=signed_in.token, expires_at=signed_in.expires_at, scope="rewards",
        audience_pass=issue_pass(run.settings.tracking_secret, signed_in.wallet, signed_in.expires_at)), 201)


@blueprint.get("/rewards")
@rate_limit(limits=PUBLIC_LIMIT)
@require_rewards_session
@document_response(RewardsOut)
@refusals(429)
@injected
async def wallet_rewards(run: Services, now: datetime) -> Response:
    """The signed-in wallet's completions and answers with what each earned and its claim, its points in total
    (and what they are), and the transaction that redeems its redeemable claims at once."""
    found = await rewards.wallet_rewards(cast(ActiveSession, g.session).wallet, now)
    batch = found.redeemable[:rewards.MAX_BATCH]
    redeem_all = WalletTransaction.of(run.chain.build_claim_batch_tx(found.wallet, batch)) if batch else None
    return answer(RewardsOut(
        wallet=found.wallet, points=PointsOut(total=found.points, about=rewards.POINTS_EXPLAINED),
        gs=GsOut(earned=found.gs_earned, redeemable=sum(int(claim.amount) for claim in found.redeemable)),
        rewards=[reward_out(reward) for reward in found.rewards], redeem_all=redeem_all,
        redeem_all_count=len(batch), redeem_all_claim_refs=[claim.claim_ref for claim in batch]))


def reward_out(reward: rewards.Reward) -> RewardOut:
    """A reward as the list writes it: its claim to submit only while it is redeemable."""
    claim = reward.claim
    return RewardOut(source=reward.source, id=reward.record_id, task_id=reward.task_id, title=reward.title,
                     kind=reward.kind, earned_at=reward.earned_at, awarded=Awarded(points=reward.points, gs=reward.gs),
                     claim_ref=claim.claim_ref if claim else None,
                     claim_status=claim.status.value if claim else None, redeemable=reward.redeemable,
                     redeemed_tx=claim.redeemed_tx if claim else None,
                     transaction=claim_out(claim) if reward.redeemable else None)
