"""Per site and UTC day counters (``SiteDailyStat``): serve decisions (for the fill rate) and events. They are added
to, never overwritten, by one upsert per (site, day), so processes counting at the same time never lose a count;
the counters can be rebuilt from raw events."""

from __future__ import annotations

from datetime import date

from tortoise import connections

from adnet.db import sql
from adnet.db.sql import Program, Statement


async def add_daily_stats(increments: dict[tuple[str, date], dict[str, int]]) -> None:
    """Add counters to ``SiteDailyStat`` rows, creating them as needed: one upsert per (site, day), safe against
    other processes adding at the same time (the increment happens in the database)."""
    connection = connections.get("default")
    await sql.run(connection, daily_stats_program(increments, sql.dialect_of(connection)))


def daily_stats_program(increments: dict[tuple[str, date], dict[str, int]], dialect: str) -> Program[None]:
    """``add_daily_stats`` as a program of statements (``adnet.db.sql``), for a write that includes it."""
    columns = ("requests", "filled", "impressions", "billable_impressions", "clicks", "billable_clicks")
    marks = ", ".join(sql.marks(dialect, 2 + len(columns)))
    updates = ", ".join(f"{column} = site_daily_stat.{column} + excluded.{column}" for column in columns)
    statement = (f"INSERT INTO site_daily_stat (site_id, day, {', '.join(columns)}) VALUES ({marks}) "  # noqa: S608
                 f"ON CONFLICT (site_id, day) DO UPDATE SET {updates}")
    for (site_id, day), counts in sorted(increments.items()):
        yield Statement(statement, [site_id, day, *(counts.get(column, 0) for column in columns)])
