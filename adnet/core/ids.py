"""Opaque identifiers: a type prefix and 128 random bits, so none can be guessed or collide after a delete."""

from __future__ import annotations

import secrets

PREFIXES = frozenset(
    {"pub", "site", "adv", "cmp", "ad", "task", "tc", "ev", "int", "srv", "wd", "dep", "ex", "ltx", "clm"}
)


def new_id(prefix: str) -> str:
    """A fresh identifier such as ``site_3Jc9...`` (URL-safe, 22 random characters)."""
    if prefix not in PREFIXES:
        raise ValueError(f"unknown identifier prefix {prefix!r}")
    return f"{prefix}_{secrets.token_urlsafe(16)}"


def has_prefix(identifier: str, prefix: str) -> bool:
    """Whether ``identifier`` looks like one of ours of the given type (cheap check before a lookup)."""
    return (
        isinstance(identifier, str)
        and identifier.startswith(prefix + "_")
        and 8 <= len(identifier) - len(prefix) - 1 <= 40
    )
