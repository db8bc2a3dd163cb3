"""Field helpers shared by every area's models: token amounts, wallet addresses and identifiers."""

import decimal

from tortoise import fields

# Token amounts are integers up to 40 digits held in decimals; the default 28-digit context would round them.
decimal.getcontext().prec = 80


def token_amount(**kwargs) -> fields.DecimalField:
    """An integer token amount in the smallest unit (18 decimals), up to 40 digits, never a float."""
    return fields.DecimalField(max_digits=40, decimal_places=0, **kwargs)


def wallet(**kwargs) -> fields.CharField:
    """A wallet or contract address, stored lower-case (see adnet.core.wallets)."""
    return fields.CharField(max_length=42, **kwargs)


def identifier(**kwargs) -> fields.CharField:
    """A prefixed random identifier (see adnet.core.ids) used as a primary key."""
    return fields.CharField(max_length=48, primary_key=True, **kwargs)
