"""Demo data for development: one advertiser with three funded campaigns (a creative in each standard size, an
attached task of each verifier, and targeting rules: page keywords excluded, devices and a system), a poll, a
feedback unit and a three-question survey, and one publisher whose site is this server's own host, so the demo page
at ``/demo`` serves all of it. The site cannot prove its domain (it is adnet's own), so it is marked verified
directly, with the method ``demo`` the re-check job leaves alone outside production, and it earns like any verified
site. The creatives' banners are adnet's own files (``static/demo``), stored as paths on adnet, so they show
wherever adnet is served (``adnet.campaigns.banners.banner_address``).

Unless it is loaded bare, the demo also has a history (``adnet.demo.history``): the last month of traffic on the
publisher's sites, played through the code that serves and bills, so its reports, charts and ledger are full.

The advertiser and the publisher are development accounts 1 and 2 of the development chain, so a browser wallet
holding their keys can sign in as them. Loading is idempotent: the demo advertiser's wallet is unique, so a second
run (even a concurrent one) finds the first run's data instead of creating more.

Campaign budgets and task pools (``demo_funding`` transactions, 1,230 G$ in all) are booked only when the vault
holds them beside everything adnet already owes, so ``adnet audit`` still passes: the development vault is minted a
million G$ at deployment; on a chain where the vault is short, the demo mints the shortfall to the vault when it can
(the test G$ token's owner: development account 0, or ``ADNET_DEPLOYER_KEY`` on a node), and otherwise refuses
before it books anything.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any
from urllib.parse import urlsplit

from eth_account.signers.local import LocalAccount
from tortoise.exceptions import DoesNotExist, IntegrityError
from tortoise.transactions import in_transaction

from adnet.accounts.models import Advertiser, ProofMethod, Publisher, Site
from adnet.accounts.ownership import mark_verified
from adnet.campaigns import taxonomy
from adnet.campaigns.models import Campaign, CampaignStatus, Category, Creative, CreativeStatus
from adnet.campaigns.targeting import Targeting
from adnet.chain import service as chain_service
from adnet.chain.client import ChainClient
from adnet.chain.deploy import Deployment, can_mint, mint
from adnet.config import Settings
from adnet.core.amounts import UNIT, Token, to_decimal_string
from adnet.core.clock import Clock
from adnet.core.errors import DomainError
from adnet.core.ids import new_id
from adnet.core.wallets import dev_accounts
from adnet.db import config as database
from adnet.demo import history
from adnet.money import ledger
from adnet.tasks.choices import TRANSFER, event_topic, transfer_call
from adnet.tasks.config import config_json
from adnet.tasks.models import Task, TaskKind, TaskSurface

log = logging.getLogger(__name__)

BANNER_SIZES = ((300, 250), (728, 90), (320, 50))
TRANSFER_TOPIC = event_topic(TRANSFER)
# Where the demo's on-chain task sends its 0.01 G$: the customary burn address, owned by no one.
BURN_ADDRESS = "0x000000000000000000000000000000000000dEaD"


class DemoRefused(Exception):
    """Demo data is for development only, and only where the vault covers it."""


@dataclass(frozen=True)
class DemoTask:
    kind: TaskKind
    title: str
    config: dict[str, Any]
    surface: TaskSurface

    @property
    def reward_gs(self) -> int:
        return UNIT // 2 if self.surface is TaskSurface.ATTACHED else UNIT // 10

    @property
    def pool(self) -> int:
        return 100 * self.reward_gs


@dataclass(frozen=True)
class DemoCampaign:
    name: str
    cpm: int
    cpc: int
    budget: int
    description: str
    targeting: dict[str, Any] = field(default_factory=dict)


# Targeting rules that show what each dimension does without hiding a campaign from a desktop browser in any
# country (the demo runs without a GeoIP database, where a campaign with a geo rule would never serve).
CAMPAIGNS = (
    DemoCampaign("Celo Climate Collective", 3 * UNIT, UNIT // 5, 500 * UNIT, "Fund regenerative projects on Celo",
                 {"keywordsExclude": ["gambling", "casino"], "devicesExclude": ["tablet"]}),
    DemoCampaign("GoodDollar Savings", 2 * UNIT, UNIT // 10, 300 * UNIT, "Save in G$ and earn every day",
                 {"devicesInclude": ["desktop", "mobile"], "osExclude": ["chromeos"]}),
    DemoCampaign("Sovryn Swap Week", 4 * UNIT, UNIT // 4, 200 * UNIT, "Swap SOV with zero fees this week",
                 {"keywordsExclude": ["gambling"]}),
)


async def load_demo(settings: Settings, *, minter: LocalAccount | None = None, clock: Clock | None = None,
                    bare: bool = False) -> dict[str, Any]:
    """Create the demo data unless it exists, then (unless ``bare``) its history unless that exists, and describe
    it (sites, wallets, campaign ids, task ids by kind).

    Connects to the chain first: the ONCHAIN_EVENT task names the deployed G$ token, and the vault must cover the
    demo's budgets (``cover``; ``minter`` may mint test G$ on a configured node, development account 0 does on the
    development chains). Raises DemoRefused, having booked nothing, where the vault cannot cover them. With a
    history, the demo is created as it was ``HISTORY_DAYS`` days ago.
    """
    if settings.production:
        raise DemoRefused("demo data is not loaded in production")
    clock = clock or Clock()
    if settings.chain_rpc_url is None:
        minter = dev_accounts()[0]
    await database.open_database(settings.database_url)
    try:
        connection = await chain_service.connect(settings, clock=clock)
        try:
            return await prepare_demo(settings, connection.client, now=clock.now(), minter=minter, bare=bare)
        finally:
            await connection.close()
    finally:
        await database.close_database()


async def prepare_demo(settings: Settings, chain: ChainClient, *, now: datetime, minter: LocalAccount | None,
                       bare: bool = False) -> dict[str, Any]:
    """``load_demo`` on an open database and chain: the vault covered, the demo created unless it exists (as it was
    ``HISTORY_DAYS`` days before ``now`` when it has a history), its history played unless ``bare`` or played
    before, and the description."""
    accounts = dev_accounts()
    if not await Advertiser.exists(wallet=accounts[1].address.lower()):
        await cover(chain, demo_cost(chain.deployment), minter)
    summary = await create_demo(settings, chain.deployment,
                                now=now if bare else now - timedelta(days=history.HISTORY_DAYS))
    if bare:
        return summary
    await history.load_history(settings, chain, summary["advertiserWallet"], summary["publisherWallet"], now=now,
                               minter=minter, advertiser_key=accounts[1])
    return await describe_demo(summary["advertiserWallet"], summary["publisherWallet"])


def demo_cost(deployment: Deployment) -> int:
    """The G$ the demo books: its campaigns' budgets and its tasks' pools."""
    return sum(spec.budget for spec in CAMPAIGNS) + sum(task.pool for task in _tasks(deployment))


async def cover(chain: ChainClient, amount: int, minter: LocalAccount | None) -> None:
    """Make the vault hold ``amount`` G$ beyond what adnet owes (the audit's figure), minting the shortfall to the
    vault with ``minter`` where it owns the test G$ token; raise DemoRefused where it cannot."""
    held = await chain.token_balance(Token.GS, chain.vault_address)
    owed = -await ledger.balance(ledger.external(Token.GS))
    short = owed + amount - held
    if short <= 0:
        return
    if minter is None or not await can_mint(chain.w3, minter.address, chain.gs_address):
        raise DemoRefused(
            f"the vault holds {to_decimal_string(held)} G$ and adnet owes {to_decimal_string(owed)} G$, short of "
            f"the demo's {to_decimal_string(amount)} G$: deposit G$ to the vault, or set ADNET_DEPLOYER_KEY to the "
            "owner of the test G$ token")
    await mint(chain.w3, minter, chain.gs_address, chain.vault_address, short)
    log.info("demo minted to the vault gs=%s", to_decimal_string(short))


async def create_demo(settings: Settings, deployment: Deployment, *, now: datetime) -> dict[str, Any]:
    """The demo data on an open database, created in one transaction unless the demo advertiser exists."""
    accounts = dev_accounts()
    advertiser_wallet, publisher_wallet = accounts[1].address.lower(), accounts[2].address.lower()
    try:
        async with in_transaction():
            await _create(settings, deployment, advertiser_wallet, publisher_wallet, now)
        log.info("demo data created advertiser=%s publisher=%s", advertiser_wallet, publisher_wallet)
    except IntegrityError:
        log.info("demo data already present advertiser=%s", advertiser_wallet)
        await _verify_demo_site(publisher_wallet, now)
    return await describe_demo(advertiser_wallet, publisher_wallet)


async def _verify_demo_site(publisher_wallet: str, now: datetime) -> None:
    """Give the demo site its domain again if it lost it (data from before sites were verified, or lapsed)."""
    site = await Site.filter(publisher__wallet=publisher_wallet).order_by("created_at").first()
    if site is not None and not site.verified:
        try:
            await mark_verified(site, ProofMethod.DEMO, now)
        except DomainError as refused:
            log.warning("demo site not verified site=%s reason=%s", site.id, refused.message)


async def describe_demo(advertiser_wallet: str, publisher_wallet: str) -> dict[str, Any]:
    """What ``adnet demo --json`` prints."""
    advertiser = await Advertiser.get(wallet=advertiser_wallet)
    publisher = await Publisher.get(wallet=publisher_wallet)
    sites = await Site.filter(publisher=publisher).order_by("created_at")
    site = sites[0] if sites else None
    campaigns = await Campaign.filter(advertiser=advertiser).order_by("created_at", "name")
    tasks = await Task.filter(advertiser=advertiser).order_by("created_at", "kind")
    tasks_by_kind: dict[str, list[str]] = {}
    for task in tasks:
        tasks_by_kind.setdefault(task.kind.value, []).append(task.id)
    return {
        "siteId": site.id if site else None,
        "siteDomain": site.domain if site else None,
        "siteIds": [each.id for each in sites],
        "publisherId": publisher.id,
        "publisherWallet": publisher.wallet,
        "advertiserId": advertiser.id,
        "advertiserWallet": advertiser.wallet,
        "campaignIds": [campaign.id for campaign in campaigns],
        "taskIds": tasks_by_kind,
    }


async def _create(settings: Settings, deployment: Deployment, advertiser_wallet: str, publisher_wallet: str,
                  now: datetime) -> None:
    origin = settings.public_url
    advertiser = await Advertiser.create(id=new_id("adv"), wallet=advertiser_wallet, name="Demo advertiser",
                                         created_at=now)
    publisher = await Publisher.create(id=new_id("pub"), wallet=publisher_wallet, created_at=now)
    site = await Site.create(id=new_id("site"), publisher=publisher, domain=urlsplit(origin).hostname,
                             name="Demo site", created_at=now)
    await mark_verified(site, ProofMethod.DEMO, now)
    campaigns = []
    for index, spec in enumerate(CAMPAIGNS):
        campaign = await Campaign.create(
            id=new_id("cmp"), advertiser=advertiser, name=spec.name, status=CampaignStatus.APPROVED,
            starts_at=now - timedelta(days=1), ends_at=now + timedelta(days=90), cpm=Decimal(spec.cpm),
            cpc=Decimal(spec.cpc), budget=Decimal(spec.budget), created_at=now, updated_at=now,
            targeting=Targeting.model_validate(spec.targeting).stored(),
            category_iab_id=taxonomy.iab_id(Category.OTHER),
        )
        # Every campaign has a creative in each size, so any slot can show any campaign; its own size comes first.
        for width, height in BANNER_SIZES[index:] + BANNER_SIZES[:index]:
            await Creative.create(
                id=new_id("ad"), campaign=campaign,
                banner_url=f"/static/demo/banner-{index + 1}-{width}x{height}.svg",
                target_url=f"https://example.com/demo/{index + 1}", description=spec.description,
                width=width, height=height, status=CreativeStatus.APPROVED, created_at=now,
                updated_at=now,
            )
        await _fund(ledger.campaign(campaign.id), spec.budget, now)
        campaigns.append(campaign)

    # Attached tasks go to the campaigns in turn; units stand alone.
    attached = 0
    for task in _tasks(deployment):
        attached_to: Campaign | None = None
        if task.surface is TaskSurface.ATTACHED:
            attached_to, attached = campaigns[attached % len(campaigns)], attached + 1
        await _task(advertiser, attached_to, task, now)


def _tasks(deployment: Deployment) -> list[DemoTask]:
    """The demo's tasks: one attached task of each verifier, then one unit of each interaction kind."""
    attached, unit = TaskSurface.ATTACHED, TaskSurface.STANDALONE
    return [
        DemoTask(TaskKind.VISIT_URL, "Visit the project page",
                 {"url": "https://example.com/demo/visit", "minDwellMs": 5000}, attached),
        DemoTask(TaskKind.SIGN_MESSAGE, "Sign the pledge",
                 {"message": "I support regenerative finance.\nWallet: {wallet}\nNonce: {nonce}"}, attached),
        DemoTask(TaskKind.ONCHAIN_EVENT, "Send any amount of G$", {
            "contract": deployment.gs_token, "eventTopic": TRANSFER_TOPIC, "emitter": deployment.gs_token,
            "confirmations": 1, "call": transfer_call(BURN_ADDRESS, UNIT // 100)}, attached),
        DemoTask(TaskKind.QUIZ, "Quick quiz", {"question": "Which token pays adnet rewards?",
                                               "answers": ["G$", "GoodDollar"], "choices": ["G$", "SOV", "ETH"]},
                 attached),
        DemoTask(TaskKind.POLL, "Community poll", {"question": "Which chain do you use most?", "options": [
            {"id": "celo", "label": "Celo"}, {"id": "ethereum", "label": "Ethereum"},
            {"id": "rootstock", "label": "Rootstock"}]}, unit),
        DemoTask(TaskKind.FEEDBACK, "Rate this site", {"question": "How useful is this site to you?",
                                                       "rating": {"min": 1, "max": 5, "required": True},
                                                       "text": {"minLength": 0, "maxLength": 500,
                                                                "required": False}}, unit),
        DemoTask(TaskKind.SURVEY, "Three questions about Web3", {"questions": [
            {"id": "wallet", "type": "single", "prompt": "Which wallet do you use?", "options": [
                {"id": "minipay", "label": "MiniPay"}, {"id": "metamask", "label": "MetaMask"},
                {"id": "valora", "label": "Valora"}]},
            {"id": "trust", "type": "rating", "prompt": "How much do you trust on-chain ads?", "min": 1, "max": 5},
            {"id": "wish", "type": "text", "prompt": "What would you like to earn rewards for?", "required": False,
             "maxLength": 500}]}, unit),
    ]


async def _task(advertiser: Advertiser, campaign: Campaign | None, spec: DemoTask, now: datetime) -> None:
    task = await Task.create(
        id=new_id("task"), advertiser=advertiser, campaign=campaign, kind=spec.kind, surface=spec.surface,
        title=spec.title, config=config_json(spec.kind, spec.config), reward_points=10,
        reward_gs=Decimal(spec.reward_gs), starts_at=now - timedelta(days=1), ends_at=now + timedelta(days=90),
        created_at=now,
    )
    await _fund(ledger.task_pool(task.id), spec.pool, now)


async def _fund(account: ledger.AccountKey, amount: int, now: datetime) -> None:
    await ledger.book("demo_funding", account.owner, [(ledger.external(account.token), -amount), (account, amount)],
                      now=now, memo="demo data, paid from the development vault's minted tokens")


async def demo_summary() -> dict[str, Any] | None:
    """The demo data as ``describe_demo`` gives it, or None when it was never loaded (``/demo`` shows it)."""
    accounts = dev_accounts()
    try:
        return await describe_demo(accounts[1].address.lower(), accounts[2].address.lower())
    except DoesNotExist:
        return None
