"""Rate limits kept in the database, for the limits that guard accounts (sign-in, the signed-in routes, API keys):
exact across every worker and host of one database, with no Redis. They are few (a person signs in, a script
calls its account), so a write each costs little; the public per-address limit of serving and tracking never
comes here (``web/limits.py``).

The rule is quart-rate-limiter's GCRA, as in the process's and Redis's stores: a key's state is the theoretical
arrival time of its next request. A request is admitted when that time stands at most ``count - 1`` intervals
(``period - interval``) ahead of now, and then moves it ``interval`` on from the later of it and now: a limit's
count at once, then one every interval. One statement decides and counts:

    INSERT … ON CONFLICT (key) DO UPDATE SET arrival = … WHERE <room left> RETURNING arrival

on SQLite and PostgreSQL alike. A new key is inserted; an existing one is moved only if the condition holds,
evaluated by the database on the row it holds locked, so of two workers racing for the last slot exactly one gets
a row back. No row back is a refusal. The limits of one request are decided in one transaction: a refusal by one
rolls the others back, so a refused request counts against none.

Times are integers of microseconds since the epoch, exact on both databases, from the caller's clock (each host's
own: hosts kept by NTP agree to far less than a limit's interval). An interval is the period divided by the count,
rounded down to a whole microsecond, and the room is ``count - 1`` of those, so a burst admits exactly the count
(never one more or one less for the rounding).
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Sequence
from dataclasses import dataclass

from adnet.db import sql
from adnet.db.sql import Program, Statement

MICROSECONDS = 1_000_000

_ADMIT = (
    "INSERT INTO rate_limit (key, arrival) VALUES (:key, :first) ON CONFLICT (key) DO UPDATE "
    "SET arrival = CASE WHEN rate_limit.arrival > :now THEN rate_limit.arrival ELSE :now END + :interval "
    "WHERE rate_limit.arrival - :now <= :room RETURNING arrival"
)


@dataclass(frozen=True)
class Limit:
    """``key``'s limit: a request every ``interval`` microseconds, after a burst of as many as fit in ``room`` (how
    far ahead of now the arrival time may stand for a request to be admitted) and one."""

    key: str
    interval: int
    room: int

    @classmethod
    def of(cls, key: str, count: int, seconds: float) -> Limit:
        """``count`` requests per ``seconds`` under ``key``."""
        interval = max(1, round(seconds * MICROSECONDS) // count)
        return cls(key, interval, (count - 1) * interval)


@dataclass(frozen=True)
class Decision:
    """``wait``: None when the request was admitted (and counted), else the seconds until the refusing limit has
    room; ``ahead``: how far the first limit's arrival time stands ahead of now after the decision, in seconds."""

    wait: float | None
    ahead: float


class _Refused(Exception):
    def __init__(self, decision: Decision) -> None:
        self.decision = decision


def now() -> int:
    """The limits' clock: microseconds since the epoch."""
    return time.time_ns() // 1000


async def admit(limits: Sequence[Limit], at: int) -> Decision:
    """Count a request at ``at`` against every limit of ``limits``, or, when one has no room, against none."""
    try:
        return await sql.transaction(lambda: _admitting(limits, at))
    except _Refused as refused:
        return refused.decision


def _admitting(limits: Sequence[Limit], at: int) -> Program[Decision]:
    arrivals: list[int] = []
    for limit in limits:
        key = _digest(limit.key)
        moved = yield Statement(_ADMIT, {"key": key, "first": at + limit.interval, "now": at,
                                         "interval": limit.interval, "room": limit.room})
        if not moved.rows:
            stored = yield Statement("SELECT arrival FROM rate_limit WHERE key = :key", {"key": key})
            arrival = stored.rows[0]["arrival"]
            first = arrivals[0] - limits[0].interval if arrivals else arrival  # where it stood before
            raise _Refused(Decision(wait=(arrival - at - limit.room) / MICROSECONDS,
                                    ahead=max(first - at, 0) / MICROSECONDS))
        arrivals.append(moved.rows[0]["arrival"])
    return Decision(wait=None, ahead=(arrivals[0] - at) / MICROSECONDS)


async def sweep(at: int) -> int:
    """Delete the keys whose limit has fully recovered by ``at`` (they mean the same as none); how many went."""
    return await sql.execute("DELETE FROM rate_limit WHERE arrival < :at", at=at)


def _digest(key: str) -> str:
    """A limit's key as stored: its SHA-256, a fixed length whatever the key (a client's address, an API key id
    and a route's name) is made of."""
    return hashlib.sha256(key.encode()).hexdigest()
