"""Wallet addresses: one canonical form, so the same wallet is never two accounts; and the well-known development
accounts.

Accepted in any case; a mixed-case address must carry a valid EIP-55 checksum. Stored and compared lower-case.
"""

from __future__ import annotations

import re
from functools import cache

from eth_account import Account
from eth_account.hdaccount import key_from_seed, seed_from_mnemonic
from eth_account.signers.local import LocalAccount
from eth_hash.auto import keccak
from eth_utils import is_checksum_address

# The well-known development mnemonic of anvil and hardhat: the same ten funded accounts on every dev chain.
DEV_MNEMONIC = "test test test test test test test test test test test junk"
DEV_HD_PATH = "m/44'/60'/0'/0"
DEV_ACCOUNT_COUNT = 10

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


def checksummed(address: str) -> str:
    """The EIP-55 form of ``address`` (0x and 40 hex digits), as ``eth_utils.to_checksum_address`` gives it, at a
    third of its cost: each claim's answer carries its recipient's."""
    digits = address[2:].lower()
    mask = keccak(digits.encode()).hex()
    return "0x" + "".join(digit.upper() if nibble >= "8" else digit
                          for digit, nibble in zip(digits, mask, strict=False))


@cache
def dev_accounts() -> tuple[LocalAccount, ...]:
    """The development accounts of the well-known mnemonic, funded on every development chain; account 0 deploys and
    owns the development contracts. Their keys are public: production refuses them."""
    seed = seed_from_mnemonic(DEV_MNEMONIC, "")
    return tuple(Account.from_key(key_from_seed(seed, f"{DEV_HD_PATH}/{index}")) for index in range(DEV_ACCOUNT_COUNT))
