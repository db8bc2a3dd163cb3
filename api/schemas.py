"""The JSON adnet answers with, as response schemas shared by the API's routes.

Handlers build a schema from the domain's plain data (dataclasses and models, read by attribute) and write it with
``api.http.answer``; each route documents it with quart-schema's ``document_response``, so the OpenAPI document
describes every response. Outside, names are camelCase; token amounts are
decimal strings ("12.5"), times ISO 8601 in UTC with a ``Z``. Errors have one shape (``ErrorOut``), documented on
every route with the statuses it may answer (``refusals``).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, datetime
from functools import lru_cache
from typing import Annotated, Any, Literal, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PlainSerializer,
    WithJsonSchema,
    field_serializer,
)
from pydantic.alias_generators import to_camel
from quart_schema import document_response

from adnet.campaigns.banners import banner_address
from adnet.campaigns.models import ConversionGoal, Creative
from adnet.campaigns.targeting import Targeting
from adnet.campaigns.views import CampaignView
from adnet.core.amounts import Token, to_decimal_string, to_number
from adnet.core.clock import iso
from adnet.core.wallets import checksummed
from adnet.db.cursors import next_cursor
from adnet.money.deposits import DepositPlan, RecordedDeposit
from adnet.money.models import Claim, Deposit, DepositStatus, Withdrawal, WithdrawalStatus
from adnet.reporting.traffic import EventCounts, bucket_text
from adnet.tasks.config import (
    FeedbackConfig,
    OnchainEventConfig,
    Option,
    PollConfig,
    QuizConfig,
    RatingBounds,
    SignMessageConfig,
    SurveyQuestion,
    TaskView,
    TextBounds,
    VisitUrlConfig,
    task_view,
)
from adnet.tasks.models import Task

F = TypeVar("F", bound=Callable[..., Any])


# A token amount held in the smallest unit, written as a decimal string.
AmountText = Annotated[int, PlainSerializer(to_decimal_string, return_type=str),
                       WithJsonSchema({"type": "string", "examples": ["12.5"]}, mode="serialization")]
# The one amount the interface writes as a JSON number (``awarded.gs``): exact when whole, for display otherwise.
AmountNumber = Annotated[int, PlainSerializer(to_number, return_type=float),
                         WithJsonSchema({"type": "number", "examples": [0.5]}, mode="serialization")]
Day = Annotated[date, PlainSerializer(date.isoformat, return_type=str),
                WithJsonSchema({"type": "string", "format": "date"}, mode="serialization")]
Time = Annotated[datetime, PlainSerializer(iso, return_type=str),
                 WithJsonSchema({"type": "string", "format": "date-time"}, mode="serialization")]


# The ``hour`` of a report's row (``adnet.reporting.buckets``).
HOUR_FIELD = "the start of the UTC hour, YYYY-MM-DDTHH:00:00Z, in an hourly report; null in a daily one and the total"


def hour_text(figures: EventCounts) -> str | None:
    """A report row's ``hour``: its bucket's start in an hourly report, None otherwise."""
    return bucket_text(figures) if figures.hour is not None else None


@lru_cache(maxsize=4096)
def _eip55(address: str) -> str:
    """The EIP-55 form of an address: the same few wallets and contracts recur in answers (a keccak each)."""
    return checksummed(address)


# An address, held lower-case (adnet.core.wallets) and always written in its EIP-55 form: the one place answers
# convert it, so no answer mixes forms.
Address = Annotated[str, PlainSerializer(_eip55, return_type=str),
                    WithJsonSchema({"type": "string", "pattern": "^0x[0-9a-fA-F]{40}$",
                                    "description": "EIP-55 checksummed"}, mode="serialization")]


# What an IAB id field says in the OpenAPI document.
IAB_ID = "its IAB Tech Lab Ad Product Taxonomy 2.0 id (GET /api/categories lists them), as OpenRTB cat/bcat carry it"


class Schema(BaseModel):
    """A response body: built from snake_case attributes, written in camelCase."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, serialize_by_alias=True,
                              from_attributes=True)


class ErrorOut(BaseModel):
    """An error: a stable code (docs/errors.md), one sentence for a person, and details such as ``field``."""

    model_config = ConfigDict(extra="allow")

    error: str
    message: str
    field: str | None = None


class HealthOut(BaseModel):
    """Whether this process can do its work: ``ok``, or ``degraded`` with each reason (docs/operations.md)."""

    status: Literal["ok", "degraded"]
    reasons: list[str]
    chain: dict[str, Any] | None = Field(None, description="The chain's figures at its last check: its node, the "
                                                            "signer, and when it was checked.")


class ReadyOut(BaseModel):
    """Whether a load balancer should send this host traffic: ``ready``, or ``unready`` with each reason
    (docs/operations.md)."""

    status: Literal["ready", "unready"]
    reasons: list[str]


def refusals(*statuses: int) -> Callable[[F], F]:
    """Route decorator: document the error statuses a route may answer, each with the error body."""
    def document(handler: F) -> F:
        for status in statuses:
            handler = document_response(ErrorOut, status)(handler)
        return handler

    return document


class ClaimOut(Schema):
    """Everything a wallet needs to redeem a claim on the vault (``claim(...)`` at ``to`` on ``chainId``)."""

    claim_ref: str
    signature: str
    nonce: str
    deadline: str
    to: Address
    chain_id: int
    recipient: Address
    token: Address
    amount: str

    @classmethod
    def of(cls, claim: Claim) -> ClaimOut:
        return cls(claim_ref=claim.claim_ref, signature=claim.signature, nonce=str(claim.nonce),
                   deadline=str(claim.deadline), to=claim.vault, chain_id=int(claim.chain_id),
                   recipient=claim.recipient, token=claim.token, amount=str(int(claim.amount)))


def claim_out(claim: Claim | None) -> ClaimOut | None:
    """The claim's ``transaction`` object, or None where there is no claim to redeem."""
    return ClaimOut.of(claim) if claim is not None else None


class Awarded(Schema):
    """What a completion or a response earned: points, and G$ as a JSON number."""

    points: int
    gs: AmountNumber


class TokenAmount(Schema):
    token: Token
    amount: AmountText


class SendTransactionParams(Schema):
    """An ``eth_sendTransaction`` parameter object (EIP-1193): quantities as hex strings."""

    sender: Address = Field(serialization_alias="from")
    to: Address
    data: str
    value: str
    chain_id: str


class SendTransactionRequest(Schema):
    """The EIP-1193 request that sends the transaction: ``provider.request(request)``."""

    method: Literal["eth_sendTransaction"]
    params: list[SendTransactionParams]


class WalletTransaction(Schema):
    """A transaction for the wallet to send, as the libraries that send it take it (docs/chain.md).

    The object itself goes as it is to viem's ``sendTransaction`` and ethers' ``Signer.sendTransaction``:
    ``chainId`` is a number, and there is no ``value``, since adnet's transactions never move the native coin and
    viem refuses a zero written as a string. ``request`` is the same transaction for an EIP-1193 provider."""

    sender: Address = Field(serialization_alias="from")
    to: Address
    data: str
    chain_id: int
    request: SendTransactionRequest

    @classmethod
    def of(cls, params: dict[str, Any]) -> WalletTransaction:
        """From the ``eth_sendTransaction`` parameters ``adnet.chain.client`` builds."""
        return cls(sender=params["from"], to=params["to"], data=params["data"], chain_id=int(params["chainId"], 16),
                   request=SendTransactionRequest(method="eth_sendTransaction", params=[SendTransactionParams(
                       sender=params["from"], to=params["to"], data=params["data"], value=params["value"],
                       chain_id=params["chainId"])]))


class DepositPlanOut(Schema):
    """Send ``transactions`` in order from the wallet (approve the vault, then deposit), then report the
    deposit's hash."""

    token: Token
    amount: AmountText
    account_ref: str
    transactions: list[WalletTransaction]


class DepositOut(Schema):
    """A deposit: ``credited``, or ``pending`` until its confirmations (the watcher credits it then)."""

    deposit_id: str
    tx_hash: str
    token: Token
    amount: AmountText
    status: Literal["pending", "credited"]


class WithdrawalOut(Schema):
    """A withdrawal and the claim (``transaction``) that pays it to the wallet on the vault. ``status``:
    ``issued`` (the claim can be redeemed until its deadline), ``redeemed`` (the vault paid it, in
    ``redeemedTx``) or ``released`` (its deadline passed unredeemed: the amount is back in the balance, and the
    vault refuses the claim); ``settledAt`` is when it became one of the last two."""

    withdrawal_id: str
    token: Token
    amount: AmountText
    status: WithdrawalStatus
    created_at: Time
    settled_at: Time | None
    redeemed_tx: str | None
    transaction: ClaimOut


class WithdrawalListOut(Schema):
    """Withdrawals newest first; ``next`` is the ``before`` that lists the following page (null on the last)."""

    withdrawals: list[WithdrawalOut]
    next: str | None


def deposit_plan_out(plan: DepositPlan) -> dict[str, Any]:
    """The fields of a ``DepositPlanOut`` (a route adds whose deposit it is)."""
    return {"token": Token.GS, "amount": plan.amount, "account_ref": plan.holder.account_ref,
            "transactions": [WalletTransaction.of(plan.approve), WalletTransaction.of(plan.deposit)]}


def deposit_out(deposit: Deposit) -> dict[str, Any]:
    """The fields of a ``DepositOut``."""
    return {"deposit_id": deposit.id, "tx_hash": deposit.tx_hash, "token": deposit.token_symbol,
            "amount": int(deposit.amount), "status": deposit.status.value}


def deposit_status(recorded: RecordedDeposit) -> int:
    """The status of a posted deposit's answer: 201 credited by this post, 200 credited before it (by the chain
    watcher or an earlier post), 202 pending its confirmations."""
    if recorded.deposit.status != DepositStatus.CREDITED:
        return 202
    return 201 if recorded.credited_now else 200


def withdrawal_out(withdrawal: Withdrawal) -> dict[str, Any]:
    """The fields of a ``WithdrawalOut`` (a route adds whose withdrawal it is); its claim must be loaded
    (``select_related("claim")``)."""
    claim = withdrawal.claim
    return {"withdrawal_id": withdrawal.id, "token": Token(withdrawal.token_symbol), "amount": int(withdrawal.amount),
            "status": withdrawal.status, "created_at": withdrawal.created_at, "settled_at": withdrawal.settled_at,
            "redeemed_tx": claim.redeemed_tx, "transaction": ClaimOut.of(claim)}


def withdrawal_list_out(page: list[Withdrawal], limit: int) -> dict[str, Any]:
    """The fields of a ``WithdrawalListOut``: a page of withdrawals, with the cursor of the next when this one is
    full."""
    return {"withdrawals": [WithdrawalOut(**withdrawal_out(withdrawal)) for withdrawal in page],
            "next": next_cursor(page, limit)}



# What a viewer's client sees of a task or unit ------------------------------------------------------------------

class Rewards(Schema):
    points: int
    gs: AmountText


class _PublicTask(Schema):
    id: str
    title: str
    description: str
    campaign_id: str | None
    rewards: Rewards


class VisitUrlTask(_PublicTask):
    """Open ``visitUrl`` (it starts the dwell and redirects to the advertiser's page), stay ``minDwellMs``."""

    kind: Literal["VISIT_URL"]
    visit_url: str
    min_dwell_ms: int


class SignMessageTask(_PublicTask):
    """Fetch the message to sign from ``messageUrl`` with the wallet, sign it (EIP-191)."""

    kind: Literal["SIGN_MESSAGE"]
    message_url: str


class PreparedTransaction(Schema):
    """The transaction to put before the viewer's wallet (EIP-1193 ``eth_sendTransaction``) on chain ``chainId``."""

    to: Address
    data: str
    value: str = Field(description="wei, a decimal string")
    chain_id: int | None = Field(description="null in an advertiser's preview")


class OnchainEventTask(_PublicTask):
    """Send a transaction to ``contract``; it counts after ``confirmations`` blocks. ``transaction``, when the
    advertiser configured one, is that transaction, ready for the wallet."""

    kind: Literal["ONCHAIN_EVENT"]
    contract: Address
    confirmations: int
    transaction: PreparedTransaction | None = None


class QuizTask(_PublicTask):
    """Answer ``question`` (one of ``choices`` when there are some) in at most ``maxAttempts`` tries."""

    kind: Literal["QUIZ"]
    question: str
    choices: list[str]
    max_attempts: int


class PollTask(_PublicTask):
    kind: Literal["POLL"]
    question: str
    options: list[Option]


class FeedbackTask(_PublicTask):
    """A rating (``rating``: its scale, or null) and/or a text (``text``: its bounds, or null)."""

    kind: Literal["FEEDBACK"]
    question: str
    rating: RatingBounds | None
    text: TextBounds | None


class SurveyTask(_PublicTask):
    """Questions answered one step at a time."""

    kind: Literal["SURVEY"]
    questions: list[SurveyQuestion]
    total_steps: int


PublicTask = Annotated[VisitUrlTask | SignMessageTask | OnchainEventTask | QuizTask | PollTask | FeedbackTask
                       | SurveyTask, Field(discriminator="kind")]


def public_task(view: TaskView, base_url: str, chain_id: int | None = None) -> PublicTask:
    """What a viewer's client needs to render and complete a task, and nothing secret; ``base_url`` is adnet's
    public URL, for the links the client opens, ``chain_id`` the chain its transactions go to (what serving
    answers; an advertiser's preview has none)."""
    common: dict[str, Any] = {"id": view.id, "title": view.title, "description": view.description,
                              "campaign_id": view.campaign_id,
                              "rewards": Rewards(points=view.reward_points, gs=view.reward_gs)}
    config = view.config
    if isinstance(config, VisitUrlConfig):
        return VisitUrlTask(kind="VISIT_URL", visit_url=f"{base_url}/api/tasks/{view.id}/visit",
                            min_dwell_ms=config.min_dwell_ms, **common)
    if isinstance(config, SignMessageConfig):
        return SignMessageTask(kind="SIGN_MESSAGE", message_url=f"{base_url}/api/tasks/{view.id}/message", **common)
    if isinstance(config, OnchainEventConfig):
        prepared = config.call and PreparedTransaction(to=config.contract, data=config.call.data,
                                                       value=config.call.value, chain_id=chain_id)
        return OnchainEventTask(kind="ONCHAIN_EVENT", contract=config.contract, confirmations=config.confirmations,
                                transaction=prepared or None, **common)
    if isinstance(config, QuizConfig):
        return QuizTask(kind="QUIZ", question=config.question, choices=list(config.choices),
                        max_attempts=config.max_attempts, **common)
    if isinstance(config, PollConfig):
        return PollTask(kind="POLL", question=config.question, options=config.options, **common)
    if isinstance(config, FeedbackConfig):
        return FeedbackTask(kind="FEEDBACK", question=config.question, rating=config.rating, text=config.text,
                            **common)
    return SurveyTask(kind="SURVEY", questions=config.questions, total_steps=len(config.questions), **common)


# Campaigns as their advertiser and operators see them ---------------------------------------------------------------

class CreativeOut(Schema):
    id: str
    campaign_id: str
    banner_url: str
    target_url: str
    description: str
    media_type: str
    size: str
    status: str
    rejection_reason: str
    weight: int
    updated_at: Time


class TaskOut(Schema):
    """A task as its owner (and operators) see it: the whole config, secrets included, and ``preview``, the view
    viewers get."""

    id: str
    campaign_id: str | None
    kind: str
    surface: str
    title: str
    description: str
    config: dict[str, Any]
    reward_points: int
    reward_gs: AmountText
    max_per_wallet: int
    max_per_fingerprint: int
    starts_at: Time
    ends_at: Time | None
    active: bool
    rejection_reason: str = ""
    preview: PublicTask | None

    @field_serializer("config")
    def _config_addresses(self, config: dict[str, Any]) -> dict[str, Any]:
        """An ONCHAIN_EVENT config's ``contract`` and ``emitter``, stored lower-case, written as addresses are."""
        return {key: _eip55(value) if key in ("contract", "emitter") and value else value
                for key, value in config.items()}


CAMPAIGN_ID_ALIAS = ("The campaign's id again, under the name campaign answers used before campaignId "
                     "(deprecated: read campaignId; kept for clients written against it).")


class GoalOut(Schema):
    """A conversion goal: the event the advertiser's server reports, its click window (days), its view window
    (hours; 0: no view-through), the attributed conversions a proven wallet may have, its CPA (G$; "0" counts
    without paying) and whether a pixel may report it."""

    goal_id: str
    campaign_id: str
    name: str
    kind: str
    event: str
    click_window_days: int
    view_window_hours: int
    wallet_cap: int
    cpa: AmountText
    public: bool
    contract: str | None = Field(None, description="onchain: the contract that emits the event")
    topic0: str | None = None
    wallet_field: str | None = None
    amount_field: str | None = None
    min_amount: str | None = Field(None, description="onchain: the least amount, in the event's smallest unit")
    created_at: Time
    updated_at: Time


def goal_out(goal: ConversionGoal) -> GoalOut:
    return GoalOut(goal_id=goal.id, campaign_id=goal.campaign_id,
                   name=goal.name, kind=goal.kind.value, event=goal.event, click_window_days=goal.click_window_days,
                   view_window_hours=goal.view_window_hours, wallet_cap=goal.wallet_cap, cpa=int(goal.cpa),
                   public=goal.public, contract=goal.contract,
                   topic0=goal.topic0, wallet_field=goal.wallet_field, amount_field=goal.amount_field,
                   min_amount=None if goal.min_amount is None else str(int(goal.min_amount)),
                   created_at=goal.created_at, updated_at=goal.updated_at)


class CampaignOut(Schema):
    """A campaign with its state and money; one campaign's answer also lists its creatives and tasks. Its id is
    ``campaignId``, as in every other answer; ``id`` repeats it for clients written before (deprecated)."""

    campaign_id: str
    id: str = Field(deprecated=True, description=CAMPAIGN_ID_ALIAS)
    advertiser_id: str
    name: str
    status: str
    state: str
    rejection_reason: str
    starts_at: Time
    ends_at: Time | None
    cpm: AmountText
    cpc: AmountText
    budget: AmountText
    daily_cap: AmountText | None
    sizes: list[str]
    placements: list[str]
    site_allow: list[str]
    site_deny: list[str]
    frequency_cap: int | None
    frequency_hours: int
    rotation: str
    targeting: Targeting
    category: str = Field(description="adnet's category (its label)")
    category_iab_id: str = Field(description=IAB_ID)
    click_param: str = Field(description="the query parameter a click's id reaches the landing page under")
    funded: AmountText
    remaining: AmountText
    spent: AmountText
    returned: AmountText
    creatives: list[CreativeOut] | None = None
    tasks: list[TaskOut] | None = None
    goals: list[GoalOut] | None = None


def creative_out(creative: Creative, base_url: str) -> CreativeOut:
    """``creative`` as its advertiser and operators read it, its banner's address under ``base_url`` (adnet's public
    URL) when it is one of adnet's own files."""
    return CreativeOut(id=creative.id, campaign_id=creative.campaign_id,
                       banner_url=banner_address(creative.banner_url, base_url), target_url=creative.target_url,
                       description=creative.description, media_type=creative.media_type.value,
                       size=f"{creative.width}x{creative.height}", status=creative.status.value,
                       rejection_reason=creative.rejection_reason, weight=creative.weight,
                       updated_at=creative.updated_at)


def task_out(task: Task, base_url: str) -> TaskOut:
    """``task`` with its preview (none when its stored config no longer fits its kind)."""
    try:
        preview = public_task(task_view(task), base_url)
    except ValueError:
        preview = None
    return TaskOut(id=task.id, campaign_id=task.campaign_id,
                   kind=task.kind.value, surface=task.surface.value, title=task.title,
                   description=task.description, config=task.config, reward_points=task.reward_points,
                   reward_gs=int(task.reward_gs), max_per_wallet=task.max_per_wallet,
                   max_per_fingerprint=task.max_per_fingerprint, starts_at=task.starts_at, ends_at=task.ends_at,
                   active=task.active, rejection_reason=task.rejection_reason, preview=preview)


def campaign_out(view: CampaignView, base_url: str, *, details: bool = True) -> CampaignOut:
    """A campaign as the API shows it; with ``details``, its creatives and tasks."""
    campaign = view.campaign
    out = CampaignOut(
        campaign_id=campaign.id, id=campaign.id, advertiser_id=campaign.advertiser_id,
        name=campaign.name, status=campaign.status.value, state=view.state,
        rejection_reason=campaign.rejection_reason, starts_at=campaign.starts_at, ends_at=campaign.ends_at,
        cpm=int(campaign.cpm), cpc=int(campaign.cpc), budget=int(campaign.budget),
        daily_cap=int(campaign.daily_cap) if campaign.daily_cap is not None else None,
        sizes=campaign.sizes, placements=campaign.placements, site_allow=campaign.site_allow,
        site_deny=campaign.site_deny, frequency_cap=campaign.frequency_cap, frequency_hours=campaign.frequency_hours,
        rotation=campaign.rotation.value,
        targeting=Targeting.model_validate(campaign.targeting or {}), category=campaign.category.value,
        category_iab_id=campaign.category_iab_id, click_param=campaign.click_param, funded=view.funded,
        remaining=view.remaining, spent=view.spent,
        returned=view.returned)
    if details:
        out.creatives = [creative_out(creative, base_url) for creative in view.creatives]
        out.tasks = [task_out(task, base_url) for task in view.tasks]
        out.goals = [goal_out(goal) for goal in view.goals]
    return out
