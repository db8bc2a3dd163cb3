"""What an advertiser and an operator ask of campaigns: a campaign's settings, its creatives and conversion goals,
a rejection."""

from __future__ import annotations

from typing import Annotated, ClassVar, Self

from pydantic import AfterValidator, Field, StringConstraints, model_validator

from adnet.campaigns.goal_events import AMOUNT_FIELD, WALLET_FIELD, spec_refusal
from adnet.campaigns.models import Category, GoalKind, MediaType, Rotation
from adnet.campaigns.targeting import Targeting
from adnet.core.inputs import (
    Amount,
    Changes,
    Command,
    Instant,
    Price,
    Size,
    Topic,
    Uint256,
    WalletAddress,
    WebUrl,
    id_of,
    rule,
)

MAX_NAME = 120
MAX_LIST = 100
MAX_PLACEMENT_LENGTH = 64
MAX_DESCRIPTION = 500
MAX_REASON = 500
MAX_FREQUENCY_CAP = 1000
MAX_FREQUENCY_HOURS = 24
MAX_WEIGHT = 100
MAX_WINDOW_DAYS = 30
MAX_VIEW_WINDOW_HOURS = 24
MAX_WALLET_CAP = 1000


def _distinct(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))


CampaignName = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_NAME)]
Placement = Annotated[str, StringConstraints(min_length=1, max_length=MAX_PLACEMENT_LENGTH)]
SiteId = Annotated[str, id_of("site")]
Sizes = Annotated[list[Size], Field(max_length=MAX_LIST, description="banner sizes such as 300x250; empty = any"),
                  AfterValidator(_distinct)]
Placements = Annotated[list[Placement], Field(max_length=MAX_LIST, description="placement labels; empty = any"),
                       AfterValidator(_distinct)]
SiteIds = Annotated[list[SiteId], Field(max_length=MAX_LIST, description="site ids"), AfterValidator(_distinct)]
Description = Annotated[str, StringConstraints(strip_whitespace=True, max_length=MAX_DESCRIPTION)]
ClickParam = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_.-]{1,40}$"), Field(
    description="the query parameter a click's id reaches the landing page under (docs/conversions.md)")]


class NewCampaign(Command):
    """A draft campaign's settings. Amounts are G$ decimal strings; a price may be "0", but not both."""

    name: CampaignName
    starts_at: Instant
    ends_at: Instant | None = None
    cpm: Price = Field(description="G$ per 1000 billable impressions")
    cpc: Price = Field(description="G$ per billable click")
    budget: Amount = Field(description="the most the campaign may be funded with")
    daily_cap: Amount | None = Field(None, description="the most it spends in a UTC day")
    sizes: Sizes = []
    placements: Placements = []
    site_allow: SiteIds = Field([], description="site ids it runs on; empty = every site")
    site_deny: SiteIds = Field([], description="site ids it never runs on")
    frequency_cap: int | None = Field(None, ge=1, le=MAX_FREQUENCY_CAP,
                                      description="the most billed impressions per viewer and period; null = none")
    frequency_hours: int = Field(24, ge=1, le=MAX_FREQUENCY_HOURS, description="the period of frequencyCap, hours")
    rotation: Rotation = Field(Rotation.EVEN, description="even, weighted (by creative weight) or best_ctr")
    targeting: Targeting = Field(Targeting.model_validate({}), description="who, where and when it is shown")
    category: Category = Field(Category.OTHER, description="what it advertises (the operator may correct it)")
    click_param: ClickParam = "adnet_click"


class CampaignChanges(Changes):
    """Some settings of a campaign; only those given change. ``endsAt`` and ``dailyCap`` may be null (none)."""

    NULLABLE: ClassVar[frozenset[str]] = frozenset({"ends_at", "daily_cap", "frequency_cap"})

    name: CampaignName | None = None
    starts_at: Instant | None = None
    ends_at: Instant | None = None
    cpm: Price | None = None
    cpc: Price | None = None
    budget: Amount | None = None
    daily_cap: Amount | None = None
    sizes: Sizes | None = None
    placements: Placements | None = None
    site_allow: SiteIds | None = None
    site_deny: SiteIds | None = None
    frequency_cap: int | None = Field(None, ge=1, le=MAX_FREQUENCY_CAP)
    frequency_hours: int | None = Field(None, ge=1, le=MAX_FREQUENCY_HOURS)
    rotation: Rotation | None = None
    targeting: Targeting | None = Field(None, description="replaces the whole targeting when given")
    category: Category | None = None
    click_param: ClickParam | None = None


GoalName = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=120)]
EventName = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9_.-]{0,63}$"), Field(
    description="the event's name as the advertiser's server reports it: lower-case letters, digits, _ . -")]
WindowDays = Annotated[int, Field(ge=1, le=MAX_WINDOW_DAYS, description="days after a click it may attribute")]
ViewWindowHours = Annotated[int, Field(ge=0, le=MAX_VIEW_WINDOW_HOURS, description=(
    "hours after a billed impression it may attribute a conversion without a click (view-through); 0: never"))]
WalletCap = Annotated[int, Field(ge=1, le=MAX_WALLET_CAP, description="attributed conversions per proven wallet")]
WalletField = Annotated[str, StringConstraints(pattern=WALLET_FIELD.pattern), Field(
    description="where the converting wallet is: topic1-3, data0-63 (a 32-byte word of the data) or tx.from")]
AmountField = Annotated[str, StringConstraints(pattern=AMOUNT_FIELD.pattern), Field(
    description="where the event's amount is: topic1-3 or data0-63, read as a uint256")]




class NewGoal(Command):
    """A goal: a named event the advertiser's server reports (offchain), or a contract's event on adnet's chain
    (onchain: its contract, topic0 and where its wallet is), with its window, cap and price."""

    name: GoalName
    kind: GoalKind = GoalKind.OFFCHAIN
    event: EventName
    click_window_days: WindowDays = 7
    view_window_hours: ViewWindowHours = 0
    wallet_cap: WalletCap = 1
    cpa: Price = Field(0, description="G$ paid per verified conversion; 0 counts without paying")
    public: bool = Field(False, description="whether a pixel on the advertiser's page may report it")
    contract: WalletAddress | None = Field(None, description="onchain: the contract that emits the event")
    topic0: Topic | None = None
    wallet_field: WalletField | None = None
    amount_field: AmountField | None = None
    min_amount: Uint256 | None = Field(None, description="onchain: the least amount that counts (needs amountField)")

    @model_validator(mode="after")
    def _onchain_fields(self) -> Self:
        refused = spec_refusal(onchain=self.kind == GoalKind.ONCHAIN, contract=self.contract, topic0=self.topic0,
                               wallet_field=self.wallet_field, amount_field=self.amount_field,
                               min_amount=self.min_amount)
        if refused is not None:
            raise rule("invalid_goal", refused[1], at=refused[0])
        return self


ONCHAIN_FIELDS = ("contract", "topic0", "wallet_field", "amount_field", "min_amount")


class GoalChanges(Changes):
    """Some settings of a goal; only those given change. Its content (name, event, public, and an onchain goal's
    contract, topic0 and fields) changes only while the campaign is unreviewed; its window, cap and price until
    the campaign ends (the view window is a window: a term)."""

    CONTENT: ClassVar[frozenset[str]] = frozenset({"name", "event", "public", *ONCHAIN_FIELDS})
    NULLABLE: ClassVar[frozenset[str]] = frozenset({"amount_field", "min_amount"})

    name: GoalName | None = None
    event: EventName | None = None
    click_window_days: WindowDays | None = None
    view_window_hours: ViewWindowHours | None = None
    wallet_cap: WalletCap | None = None
    cpa: Price | None = None
    public: bool | None = None
    contract: WalletAddress | None = None
    topic0: Topic | None = None
    wallet_field: WalletField | None = None
    amount_field: AmountField | None = None
    min_amount: Uint256 | None = None


class NewCreative(Command):
    """A banner with its landing page (http or https), size and media type."""

    banner_url: WebUrl
    target_url: WebUrl
    description: Description = ""
    media_type: MediaType = MediaType.IMAGE
    size: Size
    weight: int = Field(1, ge=1, le=MAX_WEIGHT, description="its share under weighted rotation, 1 to 100")


class CreativeChanges(Changes):
    """Some fields of a creative; only those given change."""

    banner_url: WebUrl | None = None
    target_url: WebUrl | None = None
    description: Description | None = None
    media_type: MediaType | None = None
    size: Size | None = None
    weight: int | None = Field(None, ge=1, le=MAX_WEIGHT)


def _reason(value: str) -> str:
    if not value:
        raise rule("missing_field", "a rejection needs a reason the advertiser can act on")
    return value


class Recategorization(Command):
    """The category an operator gives a campaign."""

    category: Category


class Rejection(Command):
    """Why an operator rejects a campaign or a creative: shown to its advertiser."""

    reason: Annotated[str, StringConstraints(strip_whitespace=True, max_length=MAX_REASON), AfterValidator(_reason)] = \
        Field("", validate_default=True)
