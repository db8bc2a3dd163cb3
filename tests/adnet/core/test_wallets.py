"""Wallet addresses have one canonical form inside and their EIP-55 form outside."""

import random

from eth_utils import to_checksum_address

from adnet.core.wallets import checksummed


def test_checksummed_addresses_are_eip55():
    rng = random.Random(55)
    for address in [f"0x{rng.getrandbits(160):040x}" for _ in range(200)] + ["0x" + "0" * 40, "0x" + "f" * 40]:
        assert checksummed(address) == checksummed(address.upper().replace("0X", "0x")) == to_checksum_address(address)
