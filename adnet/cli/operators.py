"""``adnet operators …``: the operators' actions of the API, for scripts on the server.

- ``adnet operators review``: the review queue (campaigns in review, creatives waiting alone);
- ``adnet operators approve campaign|creative ID`` and ``reject campaign|creative ID --reason TEXT``;
- ``adnet operators category CAMPAIGN_ID CATEGORY``: file a campaign under the category it really has;
- ``adnet operators rate`` (show), ``rate set G$_PER_SOV`` (the unsigned ``setRate`` transaction for the vault's
  owner; ``--send`` sends it on the development chain with the deployer's key);
- ``adnet operators revenue``: the platform's G$;
- ``adnet operators settle``: end campaigns that are due and return unspent budgets (for a periodic job).

Shell access to the server is the credential here, as for every ``adnet`` command; ``--operator WALLET`` names who
acts in the logs and must be one of ``ADNET_OPERATORS`` when given. Output is JSON, one document per command.
What a command changes reaches the running servers as their own changes do (``adnet.jobs.changelog.announced``:
through Redis, or the database's change log without it), not at their next whole rebuild of the index.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from adnet.accounts.operators import check_operator
from adnet.campaigns import review
from adnet.campaigns.banners import banner_address
from adnet.campaigns.commands import Recategorization, Rejection
from adnet.campaigns.lifecycle import settle_due
from adnet.campaigns.models import Category
from adnet.chain import devserver
from adnet.chain.binding import ChainMismatch
from adnet.chain.client import ChainClient, ChainUnavailable
from adnet.chain.service import ChainConfigError, connect
from adnet.cli.state import CHAIN, DATABASE
from adnet.config import Settings
from adnet.core.amounts import Token, to_decimal_string
from adnet.core.clock import Clock
from adnet.core.errors import DomainError
from adnet.core.inputs import parse
from adnet.db import config as database
from adnet.jobs.changelog import announced
from adnet.money import rate as vault_rate
from adnet.money.commands import NewRate
from adnet.reporting import revenue
from adnet.tasks import review as task_review


@dataclass(frozen=True)
class Context:
    """What an action needs: the settings, the acting operator's name, the clock, and the chain (when asked)."""

    settings: Settings
    operator: str
    clock: Clock
    chain: ChainClient | None = None


Action = Callable[[argparse.Namespace, Context], Awaitable[dict[str, Any]]]


def register(commands: argparse._SubParsersAction) -> None:
    """Add ``adnet operators`` and its subcommands to the ``adnet`` parser."""
    parser = commands.add_parser("operators", help="review campaigns and creatives, the vault's rate, revenue")
    parser.add_argument("--operator", default=None, help="operator wallet named in the logs (one of ADNET_OPERATORS)")
    actions = parser.add_subparsers(required=True, metavar="ACTION")

    review = actions.add_parser("review", help="list campaigns and creatives waiting for review")
    review.set_defaults(command=_command, action=review_queue, needs=(DATABASE,))

    for verb, action, what in (("approve", approve, ("campaign", "creative")),
                               ("reject", reject, ("campaign", "creative", "task"))):
        decide = actions.add_parser(verb, help=f"{verb} a campaign in review or a creative in review"
                                               + (", or one task of a campaign in review" if verb == "reject" else ""))
        decide.add_argument("what", choices=what)
        decide.add_argument("id")
        if verb == "reject":
            decide.add_argument("--reason", required=True, help="what the advertiser must change")
        decide.set_defaults(command=_command, action=action, needs=(DATABASE,))

    category = actions.add_parser("category", help="file a campaign under the category it really has")
    category.add_argument("id")
    category.add_argument("category", help=", ".join(Category))
    category.set_defaults(command=_command, action=recategorize, needs=(DATABASE,))

    rate = actions.add_parser("rate", help="show the vault's protocol rate, or set it")
    rate_actions = rate.add_subparsers(metavar="ACTION")
    rate.set_defaults(command=_command, action=show_rate, needs=(DATABASE, CHAIN))
    set_rate = rate_actions.add_parser("set", help="build (or, on the development chain, send) setRate")
    set_rate.add_argument("rate", help="G$ per SOV, a decimal such as 2.5")
    set_rate.add_argument("--send", action="store_true", help="development chain: send it with the deployer's key")
    set_rate.set_defaults(command=_command, action=change_rate, needs=(DATABASE, CHAIN))

    revenue = actions.add_parser("revenue", help="the platform's G$ balance and earnings")
    revenue.set_defaults(command=_command, action=platform_revenue, needs=(DATABASE,))

    settle = actions.add_parser("settle", help="end campaigns that are due and return their unspent budgets")
    settle.set_defaults(command=_command, action=settle_campaigns, needs=(DATABASE,))


def operator_name(settings: Settings, wallet: str | None) -> str:
    """The operator named in logs: the given wallet, once it is a configured operator; ``cli`` without one."""
    return "cli" if wallet is None else check_operator(settings, wallet)


async def review_queue(args: argparse.Namespace, context: Context) -> dict[str, Any]:
    queue = await review.review_queue(context.clock.now())
    public_url = context.settings.public_url
    return {
        "campaigns": [{"campaignId": view.campaign.id, "id": view.campaign.id, "name": view.campaign.name,
                       "advertiserId": view.campaign.advertiser_id,
                       "creatives": [_creative(creative, public_url) for creative in view.creatives],
                       "tasks": [{"id": task.id, "kind": task.kind.value, "title": task.title}
                                 for task in view.tasks]}
                      for view in queue.campaigns],
        "creatives": [_creative(creative, public_url) for creative in queue.creatives],
    }


def _creative(creative: Any, public_url: str) -> dict[str, Any]:
    return {"id": creative.id, "campaignId": creative.campaign_id,
            "bannerUrl": banner_address(creative.banner_url, public_url),
            "targetUrl": creative.target_url, "size": f"{creative.width}x{creative.height}",
            "mediaType": creative.media_type.value}


async def approve(args: argparse.Namespace, context: Context) -> dict[str, Any]:
    now = context.clock.now()
    if args.what == "campaign":
        campaign = await review.approve_campaign(context.operator, args.id, now)
        return {"campaignId": campaign.id, "status": campaign.status.value}
    creative = await review.approve_creative(context.operator, args.id, now)
    return {"adId": creative.id, "status": creative.status.value}


async def reject(args: argparse.Namespace, context: Context) -> dict[str, Any]:
    now = context.clock.now()
    if args.what == "campaign":
        campaign = await review.reject_campaign(context.operator, args.id, parse(Rejection, {"reason": args.reason}),
                                                now)
        return {"campaignId": campaign.id, "status": campaign.status.value, "reason": campaign.rejection_reason}
    if args.what == "task":
        task = await task_review.reject_task(context.operator, args.id, parse(Rejection, {"reason": args.reason}), now)
        return {"taskId": task.id, "active": task.active, "reason": task.rejection_reason}
    creative = await review.reject_creative(context.operator, args.id, parse(Rejection, {"reason": args.reason}),
                                            now)
    return {"adId": creative.id, "status": creative.status.value, "reason": creative.rejection_reason}


async def recategorize(args: argparse.Namespace, context: Context) -> dict[str, Any]:
    change = parse(Recategorization, {"category": args.category})
    campaign = await review.recategorize_campaign(context.operator, args.id, change, context.clock.now())
    return {"campaignId": campaign.id, "category": campaign.category.value}


async def show_rate(args: argparse.Namespace, context: Context) -> dict[str, Any]:
    assert context.chain is not None  # noqa: S101 - the parser asks for the chain
    current = await vault_rate.vault_rate(context.chain)
    return {"rate": to_decimal_string(current.rate), "vaultOwner": current.vault_owner}


async def change_rate(args: argparse.Namespace, context: Context) -> dict[str, Any]:
    assert context.chain is not None  # noqa: S101 - the parser asks for the chain
    rate = parse(NewRate, {"rate": args.rate}).rate
    change = (await vault_rate.send_rate(context.operator, context.chain, context.settings, rate) if args.send
              else await vault_rate.rate_transaction(context.operator, context.chain, rate))
    return {"rate": to_decimal_string(change.rate), "vaultOwner": change.vault_owner,
            "transaction": change.transaction, "txHash": change.tx_hash}


async def platform_revenue(args: argparse.Namespace, context: Context) -> dict[str, Any]:
    result = await revenue.revenue(context.clock.now())
    return {"token": Token.GS, "balance": to_decimal_string(result.balance), "earned": to_decimal_string(result.earned),
            "days": [{"day": day.isoformat(), "earned": to_decimal_string(amount)} for day, amount in result.days]}


async def settle_campaigns(args: argparse.Namespace, context: Context) -> dict[str, Any]:
    return {"ended": await settle_due(context.clock.now())}


async def run_action(args: argparse.Namespace, context: Context) -> int:
    """Run the parsed action on an open database and print its JSON; a refusal prints one line, status 1."""
    action: Action = args.action
    try:
        result = await action(args, context)
    except DomainError as exc:
        print(f"adnet: {exc.code}: {exc.message}", file=sys.stderr)
        return 1
    print(json.dumps(result, indent=2))
    return 0


def _command(settings: Settings, args: argparse.Namespace) -> int:
    try:
        operator = operator_name(settings, args.operator)
    except DomainError as exc:
        print(f"adnet: {exc.message}", file=sys.stderr)
        return 2

    async def run() -> int:
        await database.open_database(settings.database_url)
        try:
            # What the action changes is served by the running servers at once (adnet.jobs.changelog).
            async with announced(settings):
                if CHAIN not in args.needs:
                    return await run_action(args, Context(settings, operator, Clock()))
                connection = await connect(settings, clock=Clock())
                try:
                    return await run_action(args, Context(settings, operator, Clock(), connection.client))
                finally:
                    await connection.close()
        finally:
            await database.close_database()

    try:
        if CHAIN in args.needs and settings.chain_rpc_url is None and not settings.production:
            with devserver.ensure_running(devserver.state_path(settings.data_dir)):
                return asyncio.run(run())
        return asyncio.run(run())
    except (ChainMismatch, ChainConfigError, ChainUnavailable, devserver.DevChainError) as exc:
        print(f"adnet: {exc}", file=sys.stderr)
        return 1
