"""Field helpers shared by the models."""

from tortoise import fields


def token_amount(**kwargs) -> fields.DecimalField:
    """An integer token amount in the smallest unit (18 decimals), up to 40 digits, never a float."""
    return fields.DecimalField(max_digits=40, decimal_places=0, **kwargs)


def wallet(**kwargs) -> fields.CharField:
    """A wallet or contract address, stored lower-case (see adnet.wallets)."""
    return fields.CharField(max_length=42, **kwargs)


def identifier(**kwargs) -> fields.CharField:
    """A prefixed random identifier (see adnet.ids) used as a primary key."""
    return fields.CharField(max_length=48, primary_key=True, **kwargs)
