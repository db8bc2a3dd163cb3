"""Small async builders for test data: each makes one thing, with sensible defaults, and returns the model."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal

from eth_account import Account
from tortoise.transactions import in_transaction

from adnet.accounts.models import Advertiser, ProofMethod, Publisher, Site
from adnet.accounts.ownership import mark_verified
from adnet.campaigns import taxonomy
from adnet.campaigns.models import Campaign, CampaignStatus, Category, Creative, CreativeStatus
from adnet.core.ids import new_id
from adnet.delivery.models import HouseAd
from adnet.money import ledger
from adnet.tasks.models import Task, TaskKind, TaskSurface

G = 10**18
EPOCH = datetime(2026, 1, 1, tzinfo=UTC)


def wallet_address() -> str:
    """A fresh random wallet address, lower-case."""
    return Account.create().address.lower()


async def make_publisher(wallet: str | None = None, *, now: datetime = EPOCH) -> Publisher:
    return await Publisher.create(id=new_id("pub"), wallet=wallet or wallet_address(), created_at=now)


async def make_site(publisher: Publisher | None = None, *, domain: str | None = None, now: datetime = EPOCH,
                    verified: bool = True, **fields) -> Site:
    """A site, verified unless ``verified=False`` (it holds its domain, as if its owner had proved it), so that it
    earns like the sites of a running network."""
    publisher = publisher or await make_publisher(now=now)
    site_id = new_id("site")
    site = await Site.create(id=site_id, publisher=publisher, domain=domain or f"{site_id.lower()}.example",
                             created_at=now, **fields)
    if verified:
        await mark_verified(site, ProofMethod.META_TAG, now)
        await site.refresh_from_db()
    return site


async def make_advertiser(wallet: str | None = None, *, now: datetime = EPOCH) -> Advertiser:
    return await Advertiser.create(id=new_id("adv"), wallet=wallet or wallet_address(), created_at=now)


async def fund(account: ledger.AccountKey, amount: int, *, now: datetime = EPOCH) -> None:
    """Put ``amount`` into a ledger account, as a deposit from outside the books would."""
    async with in_transaction():
        await ledger.book("test_funding", new_id("ltx"), [(ledger.external(account.token), -amount),
                                                          (account, amount)], now=now)


async def make_campaign(
    advertiser: Advertiser | None = None,
    *,
    budget: int = 100 * G,
    funded: int | None = None,
    cpm: int = 2 * G,
    cpc: int = G // 10,
    status: CampaignStatus = CampaignStatus.APPROVED,
    starts_at: datetime | None = None,
    ends_at: datetime | None = None,
    now: datetime = EPOCH,
    **fields,
) -> Campaign:
    """An approved campaign whose ledger account holds ``funded`` (default: the whole budget)."""
    advertiser = advertiser or await make_advertiser(now=now)
    fields.setdefault("category_iab_id", taxonomy.iab_id(fields.get("category", Category.OTHER)))
    campaign = await Campaign.create(
        id=new_id("cmp"), advertiser=advertiser, name=fields.pop("name", "Test campaign"), status=status,
        starts_at=starts_at or now - timedelta(days=1), ends_at=ends_at, cpm=Decimal(cpm), cpc=Decimal(cpc),
        budget=Decimal(budget), created_at=now, updated_at=now, **fields,
    )
    amount = budget if funded is None else funded
    if amount:
        await fund(ledger.campaign(campaign.id), amount, now=now)
    return campaign


async def make_creative(campaign: Campaign, *, width: int = 300, height: int = 250, now: datetime = EPOCH,
                        status: CreativeStatus = CreativeStatus.APPROVED, **fields) -> Creative:
    return await Creative.create(
        id=new_id("ad"), campaign=campaign, banner_url=fields.pop("banner_url", "https://cdn.example/banner.png"),
        target_url=fields.pop("target_url", "https://advertiser.example/landing"),
        description=fields.pop("description", "Sponsored"), width=width, height=height, status=status,
        created_at=now, updated_at=now, **fields,
    )


async def make_house_ad(site: Site, *, width: int = 300, height: int = 250, now: datetime = EPOCH) -> HouseAd:
    """One of ``site``'s own banners (``adnet.delivery.house_ads``)."""
    return await HouseAd.create(id=new_id("house"), site=site, banner_url="https://publisher.example/house.png",
                                target_url="https://publisher.example/join", description="Our newsletter",
                                width=width, height=height, created_at=now)


async def make_task(
    *,
    kind: TaskKind,
    campaign: Campaign | None = None,
    advertiser: Advertiser | None = None,
    config: dict | None = None,
    reward_points: int = 10,
    reward_gs: int = G,
    pool: int = 0,
    now: datetime = EPOCH,
    **fields,
) -> Task:
    """A task or unit; attached to ``campaign`` when given, standalone otherwise. ``pool`` funds its G$ pool."""
    if advertiser is None:
        advertiser = await campaign.advertiser if campaign else await make_advertiser(now=now)
    standalone = kind in (TaskKind.POLL, TaskKind.FEEDBACK, TaskKind.SURVEY)
    task = await Task.create(
        id=new_id("task"), advertiser=advertiser, campaign=campaign, kind=kind,
        surface=TaskSurface.STANDALONE if standalone else TaskSurface.ATTACHED,
        title=fields.pop("title", f"{kind.value.title()} task"), config=config or {},
        reward_points=reward_points, reward_gs=Decimal(reward_gs),
        starts_at=fields.pop("starts_at", now - timedelta(days=1)), created_at=now, **fields,
    )
    if pool:
        await fund(ledger.task_pool(task.id), pool, now=now)
    return task
