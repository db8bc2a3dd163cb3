"""Operators: the wallets listed in ``ADNET_OPERATORS``, who review campaigns and manage the vault's rate.

Over HTTP an operator proves its wallet with its SIWE session, like any wallet, and every operator action first
checks the list. The ``adnet operators`` command runs the same actions for someone with shell access to the server.
"""

from __future__ import annotations

from adnet.config import Settings
from adnet.core.errors import Forbidden
from adnet.core.wallets import InvalidWallet, normalize_wallet


def check_operator(settings: Settings, wallet: str) -> str:
    """``wallet`` when it is one of the configured operators; Forbidden ``not_operator`` otherwise."""
    try:
        wallet = normalize_wallet(wallet)
    except InvalidWallet:
        raise _not_operator() from None
    if wallet not in settings.operators:
        raise _not_operator()
    return wallet


def _not_operator() -> Forbidden:
    return Forbidden("not_operator", "Only adnet's operators (ADNET_OPERATORS) may do this.")
