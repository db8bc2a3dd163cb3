"""``adnet reports rebuild``: recompute the daily report aggregates (``report_daily``) from the raw tracking events,
for every day whose raw events are all still kept (``adnet.reporting.breakdowns.rebuild``). Idempotent: running it
twice gives the same rows. Prints one JSON document: the first day rebuilt and how many rows the days have."""

from __future__ import annotations

import argparse
import asyncio
import json
from datetime import date
from typing import Any

from adnet.cli.state import DATABASE
from adnet.config import Settings
from adnet.core.clock import Clock
from adnet.db import config as database
from adnet.reporting.breakdowns import first_kept_day, rebuild


def register(commands: Any) -> None:
    reports = commands.add_parser("reports", help="the traffic reports' daily aggregates")
    actions = reports.add_subparsers(required=True, metavar="ACTION")
    rebuilding = actions.add_parser("rebuild", help="recompute the daily aggregates from the raw events")
    rebuilding.set_defaults(command=_rebuild, needs=(DATABASE,))


def _rebuild(settings: Settings, args: argparse.Namespace) -> int:
    async def run() -> tuple[date, int]:
        await database.open_database(settings.database_url)
        try:
            now = Clock().now()
            return first_kept_day(now, settings.event_retention_days), await rebuild(now,
                                                                                     settings.event_retention_days)
        finally:
            await database.close_database()

    first, rows = asyncio.run(run())
    print(json.dumps({"rebuiltFrom": first.isoformat(), "rows": rows}))
    return 0
