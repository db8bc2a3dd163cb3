"""Per site and UTC day counters (``SiteDailyStat``): serve decisions (for the fill rate) and events. They are added
to, never overwritten, by one upsert per (site, day), so processes counting at the same time never lose a count;
the counters can be rebuilt from raw events."""

from __future__ import annotations

from datetime import date

from adnet.db import sql
from adnet.db.sql import Program, Statement


async def add_daily_stats(increments: dict[tuple[str, date], dict[str, int]]) -> None:
    """Add counters to ``SiteDailyStat`` rows, creating them as needed: one upsert per (site, day), safe against
    other processes adding at the same time (the increment happens in the database)."""
    await sql.run(daily_stats_program(increments))


_COLUMNS = ("requests", "filled", "impressions", "billable_impressions", "clicks", "billable_clicks")
_ADD = (f"INSERT INTO site_daily_stat (site_id, day, {', '.join(_COLUMNS)}) "  # noqa: S608
        f"VALUES (:site_id, :day, {', '.join(f':{column}' for column in _COLUMNS)}) "
        f"ON CONFLICT (site_id, day) DO UPDATE SET "
        f"{', '.join(f'{column} = site_daily_stat.{column} + excluded.{column}' for column in _COLUMNS)}")


def daily_stats_program(increments: dict[tuple[str, date], dict[str, int]]) -> Program[None]:
    """``add_daily_stats`` as a program of statements (``adnet.db.sql``), for a write that includes it."""
    for (site_id, day), counts in sorted(increments.items()):
        yield Statement(_ADD, {"site_id": site_id, "day": day,
                               **{column: counts.get(column, 0) for column in _COLUMNS}})
