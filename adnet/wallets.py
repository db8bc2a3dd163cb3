"""Wallet addresses: one canonical form, so the same wallet is never two accounts.

Accepted in any case; a mixed-case address must carry a valid EIP-55 checksum. Stored and compared lower-case.
"""

from __future__ import annotations

import re

from eth_utils import is_checksum_address

_ADDRESS = re.compile(r"^0x[0-9a-fA-F]{40}$")


class InvalidWallet(ValueError):
    """Not a wallet address, or a mixed-case address with a wrong checksum."""


def normalize_wallet(text: str) -> str:
    """Return the lower-case form of ``text`` or raise InvalidWallet."""
    if not isinstance(text, str) or not _ADDRESS.match(text):
        raise InvalidWallet("a wallet is 0x followed by 40 hexadecimal digits")
    body = text[2:]
    if body != body.lower() and body != body.upper() and not is_checksum_address(text):
        raise InvalidWallet("the wallet's mixed-case checksum (EIP-55) is wrong")
    return text.lower()
