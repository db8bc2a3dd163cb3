"""The tokens adnet moves and their amounts: integers in the smallest unit inside, exact decimal strings outside.

G$ (the payout token: budgets, earnings, rewards) and SOV (the platform token publishers may hold and exchange)
have 18 decimals. Nothing here touches a float.
"""

from __future__ import annotations

import re
from decimal import Decimal
from enum import StrEnum


class Token(StrEnum):
    """A token of the vault, by its symbol. ``Token.GS`` pays for everything billed and rewarded."""

    GS = "G$"
    SOV = "SOV"


DECIMALS = 18
UNIT: int = 10**DECIMALS
_AMOUNT = re.compile(r"^(0|[1-9][0-9]{0,21})(\.[0-9]{1,18})?$")


class InvalidAmount(ValueError):
    """Not a positive decimal token amount with at most 18 decimals."""


def to_decimal_string(amount: int) -> str:
    """``12500000000000000000`` → ``"12.5"``; exact for any integer."""
    text = format(Decimal(amount).scaleb(-DECIMALS), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def to_number(amount: int) -> int | float:
    """The decimal value as a JSON number, for the one field the interface makes a number (``awarded.gs``).
    Whole amounts stay integers; others are the nearest float, used for display only, never for accounting."""
    return amount // UNIT if amount % UNIT == 0 else float(Decimal(amount).scaleb(-DECIMALS))


def parse_amount(text: str, *, zero: bool = False) -> int:
    """``"12.5"`` → ``12500000000000000000``; refuses signs, exponents, more than 18 decimals, and (unless
    ``zero``) zero."""
    if not isinstance(text, str) or not _AMOUNT.match(text):
        raise InvalidAmount("an amount is a decimal string such as \"12.5\" with at most 18 decimals")
    whole, _, fraction = text.partition(".")
    amount = int(whole) * UNIT + int(fraction.ljust(DECIMALS, "0") or 0)
    if amount == 0 and not zero:
        raise InvalidAmount("the amount must be more than zero")
    return amount
