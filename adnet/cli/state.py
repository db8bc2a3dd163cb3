"""What a command that reads adnet's state needs to exist before it runs, checked without creating any of it.

Opening a SQLite URL creates the file, and connecting to the development chain starts a new one and deploys fresh
contracts there, to which the database is then bound: a command run in the wrong directory (``adnet audit``
without ``ADNET_DATA_DIR``) would build a new, empty adnet and then fail on it. Such commands declare what they read
(``DATABASE``, ``CHAIN``) and refuse with one line naming what is missing instead.
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection

from adnet.chain import devserver
from adnet.chain.binding import bound_deployment
from adnet.config import Settings
from adnet.db import config as database
from adnet.db import migrations

DATABASE = "database"
CHAIN = "chain"  # the chain the database is bound to (implies DATABASE)


def missing_state(settings: Settings, needs: Collection[str]) -> str | None:
    """What of ``needs`` does not exist yet, as one sentence, or None when the command may run."""
    if not needs:
        return None
    url = settings.database_url
    file = database.sqlite_file(url)
    if url.startswith("sqlite://") and (file is None or not file.exists()):
        return (f"no database at {file or url}: set ADNET_DATABASE_URL or ADNET_DATA_DIR to adnet's, or create one "
                "with `adnet migrate`")
    missing = asyncio.run(_missing_migrations(url))
    if missing is not None or CHAIN not in needs:
        return missing
    chain_state = devserver.state_path(settings.data_dir)
    if settings.env == "development" and settings.embedded_chain and not chain_state.exists():
        return (f"no development chain at {chain_state}: start adnet (`adnet serve` or `adnet demo`) on this data "
                "directory first")
    if not asyncio.run(_bound(url)):
        return "the database is bound to no chain yet: start adnet on it first (`adnet serve` or `adnet demo`)"
    return None


async def _missing_migrations(url: str) -> str | None:
    try:
        unapplied = await migrations.unapplied(url)
    except OSError as exc:
        return f"the database cannot be reached ({exc})"
    if unapplied:
        return f"the database lacks {len(unapplied)} migration(s) ({', '.join(unapplied)}): run `adnet migrate`"
    return None


async def _bound(url: str) -> bool:
    await database.open_database(url)
    try:
        return await bound_deployment() is not None
    finally:
        await database.close_database()
