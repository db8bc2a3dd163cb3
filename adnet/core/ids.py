"""Opaque identifiers: a type prefix and 128 random bits, so none can be guessed or collide after a delete; or, for
rows written at a high rate, the time first and 96 random bits (``new_ordered_id``)."""

from __future__ import annotations

import re
import secrets
import time

PREFIXES = frozenset(
    {"pub", "site", "adv", "cmp", "ad", "task", "tc", "ev", "int", "srv", "wd", "dep", "ex", "ltx", "clm", "key",
     "wh", "whe", "whd", "wha", "mem", "au", "house", "goal", "cv"}
)


def new_id(prefix: str) -> str:
    """A fresh identifier such as ``site_3Jc9...`` (URL-safe, 22 random characters)."""
    if prefix not in PREFIXES:
        raise ValueError(f"unknown identifier prefix {prefix!r}")
    return f"{prefix}_{secrets.token_urlsafe(16)}"


def new_ordered_id(prefix: str) -> str:
    """A fresh identifier whose text sorts by the time it was made (to the millisecond), such as
    ``ev_0196f3a2c4e1Xb3…``: 12 hex digits of the Unix time in milliseconds, then 96 random bits. Rows keyed by it
    are appended at the end of their primary-key index instead of at random places in it: a tracking batch
    inserts its events into one page of the index instead of one page each, which the database must then write."""
    if prefix not in PREFIXES:
        raise ValueError(f"unknown identifier prefix {prefix!r}")
    return f"{prefix}_{time.time_ns() // 1_000_000:012x}{secrets.token_urlsafe(12)}"


# What follows an id's prefix: the URL-safe base64 of ``secrets.token_urlsafe`` (and hex digits), 8 to 40 of them.
ID_CHARACTERS = "A-Za-z0-9_-"
MIN_RANDOM = 8
MAX_RANDOM = 40
_RANDOM_PART = re.compile(f"[{ID_CHARACTERS}]{{{MIN_RANDOM},{MAX_RANDOM}}}")


def has_prefix(identifier: object, prefix: str) -> bool:
    """Whether ``identifier`` is shaped as one of ours of the given type: the check before any lookup, so that no
    query is ever made with another string (too long for the column, a NUL byte, a character no id has)."""
    return (
        isinstance(identifier, str)
        and identifier.startswith(prefix + "_")
        and _RANDOM_PART.fullmatch(identifier, len(prefix) + 1) is not None
    )
