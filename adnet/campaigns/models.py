"""What advertisers buy: campaigns with prices, budgets, dates and targeting, and their creatives."""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING

from tortoise import fields
from tortoise.models import Model

from adnet.db.fields import identifier, token_amount, wallet

if TYPE_CHECKING:
    from adnet.tasks.models import Task


class CampaignStatus(StrEnum):
    DRAFT = "draft"
    REVIEW = "review"
    APPROVED = "approved"
    PAUSED = "paused"
    ENDED = "ended"
    REJECTED = "rejected"


class CreativeStatus(StrEnum):
    REVIEW = "review"
    APPROVED = "approved"
    REJECTED = "rejected"


class Rotation(StrEnum):
    """How a campaign shares its slots among its creatives (``adnet.delivery.rotation``)."""

    EVEN = "even"
    WEIGHTED = "weighted"
    BEST_CTR = "best_ctr"


class MediaType(StrEnum):
    IMAGE = "image"
    VIDEO = "video"


class Category(StrEnum):
    """What a campaign advertises, from a fixed list: the advertiser picks one, the operator corrects it when
    reviewing, and publishers block categories on their sites (docs/publishers.md)."""

    DEFI = "defi"
    EXCHANGE = "exchange"
    WALLET = "wallet"
    NFT = "nft"
    GAMING = "gaming"
    GAMBLING = "gambling"
    DAO = "dao"
    INFRASTRUCTURE = "infrastructure"
    EDUCATION = "education"
    MEDIA = "media"
    OTHER = "other"


class Campaign(Model):
    """An advertiser's paid flight. Prices and budget are G$ smallest units, and the remaining budget is the
    campaign's ledger account, not a column here."""

    id = identifier()
    advertiser = fields.ForeignKeyField("models.Advertiser", related_name="campaigns", on_delete=fields.RESTRICT)
    advertiser_id: str
    name = fields.CharField(max_length=120)
    status = fields.CharEnumField(CampaignStatus, max_length=16, default=CampaignStatus.DRAFT)
    rejection_reason = fields.CharField(max_length=500, default="")
    starts_at = fields.DatetimeField()
    ends_at = fields.DatetimeField(null=True)
    cpm = token_amount(description="price of 1000 billable impressions")
    cpc = token_amount(description="price of one billable click")
    budget = token_amount(description="total the advertiser allows this campaign to spend")
    daily_cap = token_amount(null=True)
    sizes = fields.JSONField(default=list, description="banner sizes such as 300x250 - empty = any")
    placements = fields.JSONField(default=list, description="placement labels - empty = any")
    site_allow = fields.JSONField(default=list, description="site ids - empty = every site")
    site_deny = fields.JSONField(default=list)
    rotation = fields.CharEnumField(Rotation, max_length=16, default=Rotation.EVEN)
    frequency_cap = fields.IntField(null=True, description="most billed impressions per viewer in a period")
    frequency_hours = fields.IntField(default=24, description="the period of frequency_cap, 1 to 24 hours")
    targeting = fields.JSONField(default=dict, description="targeting rules (adnet.campaigns.targeting) - {} = none")
    category = fields.CharEnumField(Category, max_length=16, default=Category.OTHER, db_default=Category.OTHER,
                                    description="what it advertises, which publishers may block")
    category_iab_id = fields.CharField(max_length=16, db_default="",
                                       description="the IAB Ad Product Taxonomy id of its category "
                                                   "(adnet.campaigns.taxonomy), written with it")
    click_param = fields.CharField(max_length=40, default="adnet_click", db_default="adnet_click",
                                   description="the query parameter a click's id reaches the landing page under")
    created_at = fields.DatetimeField()
    updated_at = fields.DatetimeField()

    tasks: fields.ReverseRelation[Task]

    class Meta:
        table = "campaign"
        indexes = (("status", "starts_at"),)


class Creative(Model):
    """A banner of a campaign (the spec's ``ad``). An edited creative goes back to review."""

    id = identifier()
    campaign = fields.ForeignKeyField("models.Campaign", related_name="creatives", on_delete=fields.CASCADE)
    campaign_id: str
    banner_url = fields.CharField(max_length=2048)
    target_url = fields.CharField(max_length=2048)
    description = fields.CharField(max_length=500, default="")
    media_type = fields.CharEnumField(MediaType, max_length=8, default=MediaType.IMAGE)
    width = fields.IntField()
    height = fields.IntField()
    status = fields.CharEnumField(CreativeStatus, max_length=16, default=CreativeStatus.REVIEW)
    rejection_reason = fields.CharField(max_length=500, default="")
    weight = fields.IntField(default=1, description="its share of its campaign's slots under weighted rotation")
    created_at = fields.DatetimeField()
    updated_at = fields.DatetimeField()

    class Meta:
        table = "creative"


class GoalKind(StrEnum):
    """Where a goal's conversions come from: the advertiser's server (a named event it reports with an API key), or
    a contract's event on adnet's chain, read from confirmed blocks (``adnet.campaigns.goal_events``)."""

    OFFCHAIN = "offchain"
    ONCHAIN = "onchain"


class ConversionGoal(Model):
    """An outcome a campaign counts, and may pay for (``cpa``), after a click of its ads. Its content (kind, event,
    whether pixels may report it) is reviewed with the campaign; its price, window and cap are terms, which change
    until the campaign ends."""

    id = identifier()
    campaign = fields.ForeignKeyField("models.Campaign", related_name="goals", on_delete=fields.CASCADE)
    campaign_id: str
    name = fields.CharField(max_length=120)
    kind = fields.CharEnumField(GoalKind, max_length=16, default=GoalKind.OFFCHAIN)
    event = fields.CharField(max_length=64, description="the named event the advertiser reports")
    click_window_days = fields.SmallIntField(default=7, description="a click attributes for this many days")
    view_window_hours = fields.SmallIntField(default=0, db_default=0, description="a billed impression of a proven "
                                             "wallet's viewer attributes for this many hours - 0 = no view-through")
    wallet_cap = fields.SmallIntField(default=1, description="most attributed conversions per proven wallet")
    cpa = token_amount(default=0, description="G$ paid per verified conversion - 0 = counted, not paid")
    public = fields.BooleanField(default=False, description="whether a pixel on the advertiser's page may report it")
    contract = wallet(null=True, description="onchain: the contract that emits the event")
    topic0 = fields.CharField(max_length=66, null=True, description="onchain: the event's topic0")
    wallet_field = fields.CharField(max_length=16, null=True, description="onchain: where the wallet is")
    amount_field = fields.CharField(max_length=16, null=True, description="onchain: where the amount is")
    min_amount = fields.DecimalField(max_digits=78, decimal_places=0, null=True,
                                     description="onchain: the least amount that counts")
    created_at = fields.DatetimeField()
    updated_at = fields.DatetimeField()

    class Meta:
        table = "conversion_goal"
        unique_together = (("campaign", "event"),)
