"""The ``adnet`` command: serve, migrate, load demo data, and operator tasks.

Every subcommand reads the same settings as the server (``ADNET_*``); a configuration problem is printed as one
line and exits with status 2. So does a command that reads a database (or chain) that does not exist yet: it
creates nothing (``adnet.cli.state``); and one that needs the development chain where its packages are not
installed (the ``devchain`` extra): it names them.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import sys
from collections.abc import Callable

from adnet.chain import devserver
from adnet.chain import service as chain_service
from adnet.cli import chain as chain_cli
from adnet.cli import operators as operator_cli
from adnet.cli import reports as reports_cli
from adnet.cli.state import CHAIN, DATABASE, missing_state
from adnet.config import ConfigError, Settings, load_settings
from adnet.core import logs, metrics
from adnet.core.clock import Clock
from adnet.db import config as database
from adnet.db import migrations
from adnet.demo import DemoRefused, load_demo
from adnet.money.audit import AuditReport, audit

log = logging.getLogger(__name__)


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    logs.configure()
    needs = _needs(args)
    try:
        settings = load_settings(create_data_dir=not needs)
    except ConfigError as exc:
        print(f"adnet: configuration error: {exc}", file=sys.stderr)
        return 2
    missing = missing_state(settings, needs)
    if missing is not None:
        print(f"adnet: {missing}", file=sys.stderr)
        return 2
    command: Callable[[Settings, argparse.Namespace], int] = args.command
    try:
        return command(settings, args)
    except devserver.DevChainNotInstalled as exc:
        print(f"adnet: {exc}", file=sys.stderr)
        return 2


def _needs(args: argparse.Namespace) -> frozenset[str]:
    """What the command reads and must find already there (its parser's ``needs``): ``adnet audit --no-chain``
    leaves the chain out."""
    needs = frozenset(getattr(args, "needs", ()))
    return needs - {CHAIN} if getattr(args, "no_chain", False) else needs


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="adnet", description="adnet advertising network")
    commands = parser.add_subparsers(required=True, metavar="COMMAND")

    serve = commands.add_parser("serve", help="apply migrations, then serve the app")
    serve.add_argument("--host", default=None, help="default: ADNET_HOST or 127.0.0.1")
    serve.add_argument("--port", type=int, default=None, help="default: ADNET_PORT or 8000")
    serve.add_argument("--workers", type=int, default=1)
    serve.set_defaults(command=_serve)

    migrate = commands.add_parser("migrate", help="apply pending database migrations")
    migrate.set_defaults(command=_migrate)

    makemigrations = commands.add_parser("makemigrations", help="write a migration for model changes")
    makemigrations.add_argument("--name", default=None)
    makemigrations.set_defaults(command=_makemigrations)

    demo = commands.add_parser("demo", help="load demo data and a month of its traffic (idempotent)")
    demo.add_argument("--json", action="store_true", help="print what exists as JSON")
    demo.add_argument("--bare", action="store_true", help="the accounts, campaigns and units only, without history")
    demo.set_defaults(command=_demo, needs=(DATABASE,))
    audit = commands.add_parser("audit", help="check that the ledger balances and the vault covers what it owes")
    audit.add_argument("--no-chain", action="store_true", help="check the books only, without the vault")
    audit.set_defaults(command=_audit, needs=(DATABASE, CHAIN))
    chain_cli.register(commands)
    operator_cli.register(commands)
    reports_cli.register(commands)
    return parser


def _serve(settings: Settings, args: argparse.Namespace) -> int:
    """Serve where ``--host`` and ``--port`` (or the settings) say. Both are passed on as ``ADNET_HOST`` and
    ``ADNET_PORT``: each worker reads its settings from the environment (``adnet.app.create_server_app``), and
    without ``ADNET_PUBLIC_URL`` the public URL, which sign-in messages, links and the embed snippet name, is
    the address served (``adnet.config.served_url``)."""
    import uvicorn

    chain_cli.require_development_chain(settings)
    host, port = args.host or settings.host, args.port or settings.port
    os.environ.update(ADNET_HOST=host, ADNET_PORT=str(port))
    asyncio.run(migrations.migrate(settings.database_url))
    if args.workers > 1:  # each worker's metrics go to files that /metrics adds up
        metrics.share_between_processes(settings.data_dir / "metrics")
    with chain_cli.serving(settings):
        uvicorn.run(
            "adnet.app:create_server_app",
            factory=True,
            host=host,
            port=port,
            workers=args.workers,
            loop="uvloop",
            http="httptools",
            proxy_headers=False,
            server_header=False,
            access_log=False,
            log_level="info",
            log_config=logs.LOG_CONFIG,  # uvicorn's own lines, and every worker's, as adnet's (adnet.core.logs)
        )
    return 0


def _migrate(settings: Settings, args: argparse.Namespace) -> int:
    asyncio.run(migrations.migrate(settings.database_url))
    print("migrations applied")
    return 0


def _makemigrations(settings: Settings, args: argparse.Namespace) -> int:
    names = asyncio.run(migrations.write_migrations(settings.database_url, args.name))
    print("\n".join(f"created {name}" for name in names) or "no changes")
    return 0


def _demo(settings: Settings, args: argparse.Namespace) -> int:
    try:
        minter = chain_cli.deployer_from_environment()
    except ValueError as exc:
        print(f"adnet: {chain_cli.DEPLOYER_KEY_VARIABLE}: {exc}", file=sys.stderr)
        return 2
    try:
        summary = asyncio.run(load_demo(settings, minter=minter, bare=args.bare))
    except DemoRefused as exc:
        print(f"adnet: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(summary, indent=2) if args.json else f"demo data ready: site {summary['siteId']}")
    return 0


def _audit(settings: Settings, args: argparse.Namespace) -> int:
    async def run() -> AuditReport:
        await database.open_database(settings.database_url)
        try:
            if args.no_chain:
                return await audit(None)
            connection = await chain_service.connect(settings, clock=Clock())
            try:
                return await audit(connection.client)
            finally:
                await connection.close()
        finally:
            await database.close_database()

    report = asyncio.run(run())
    print("\n".join(report.lines()))
    return 0 if report.ok else 1
