"""Transaction objects (the parameter of ``eth_sendTransaction``, ``eth_call`` and ``eth_estimateGas``) read as
anvil reads them, for the development chain.

Wallet libraries and adnet's own prepared transactions write the same transaction in several ways: ``chainId`` as a
number or in hex, ``value`` as ``"0x0"``, ``"0"`` or ``0``, the calldata as ``data`` or ``input``, with keys a node
does not know beside it (adnet's prepared transactions carry their EIP-1193 ``request``). A node takes them all;
eth-tester takes only its own keys, hex quantities and a ``gas``. ``read_transaction`` turns any object anvil
accepts into the one canonical form the development chain hands to eth-tester, and refuses what anvil refuses with
anvil's error codes:

- unknown keys, and ``type`` (anvil chooses the type from the fee fields), are ignored;
- quantities are a JSON integer, a ``0x`` hex string or a decimal string (``""`` and ``"0x"`` are zero); floats,
  booleans and negative numbers are refused;
- ``input`` wins over ``data`` when both are given; hex data may omit its ``0x``;
- with ``gasPrice`` given, the EIP-1559 fee fields are dropped (a legacy transaction, as on anvil).

This module reads only; the chain checks the rest (the sender's nonce and funds, ``chainId``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

INVALID_PARAMS = -32602
# The code anvil and geth give a transaction the chain state refuses (nonce too low, fee below the base fee).
TRANSACTION_REJECTED = -32003

QUANTITIES = ("gas", "gasPrice", "maxFeePerGas", "maxPriorityFeePerGas", "value", "nonce")
_ADDRESS = re.compile(r"0x[0-9a-fA-F]{40}")
_HEX_DATA = re.compile(r"(?:0x)?((?:[0-9a-fA-F]{2})*)")
_HEX_QUANTITY = re.compile(r"0x[0-9a-fA-F]{0,64}")
_DECIMAL = re.compile(r"[0-9]{1,78}")
_UINT256_LIMIT = 2**256


class TransactionRefused(Exception):
    """A request the chain answers with a JSON-RPC error ``code`` (as anvil would), never an internal error."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class TransactionObject:
    """A transaction object in canonical JSON-RPC form (``fields``: known keys only, hex quantities, lower-case
    addresses, ``data``), and the ``chainId`` it named, if any."""

    fields: dict[str, Any]
    chain_id: int | None


def read_transaction(value: Any) -> TransactionObject:
    """The canonical form of a transaction object anvil accepts; TransactionRefused (invalid params) otherwise."""
    if not isinstance(value, dict):
        raise TransactionRefused(INVALID_PARAMS, "invalid type: the transaction must be an object")
    fields: dict[str, Any] = {}
    for key in ("from", "to"):
        if value.get(key) is not None:
            fields[key] = _address(key, value[key])
    for key in QUANTITIES:
        if key in value and value[key] is not None:
            fields[key] = hex(quantity(key, value[key]))
    calldata = value.get("input") if value.get("input") is not None else value.get("data")
    if calldata is not None:
        fields["data"] = _data(calldata)
    if value.get("accessList") is not None:
        fields["accessList"] = _access_list(value["accessList"])
    if "gasPrice" in fields:
        fields.pop("maxFeePerGas", None)
        fields.pop("maxPriorityFeePerGas", None)
    if value.get("type") is not None:
        quantity("type", value["type"])
    chain_id = quantity("chainId", value["chainId"]) if value.get("chainId") is not None else None
    return TransactionObject(fields=fields, chain_id=chain_id)


def quantity(key: str, value: Any) -> int:
    """An unsigned 256-bit quantity written as anvil takes it: a JSON integer, hex, or decimal digits."""
    if isinstance(value, int) and not isinstance(value, bool):
        number = value
    elif isinstance(value, str) and _HEX_QUANTITY.fullmatch(value):
        number = int(value[2:] or "0", 16)
    elif isinstance(value, str) and (value == "" or _DECIMAL.fullmatch(value)):
        number = int(value or "0")
    else:
        raise TransactionRefused(INVALID_PARAMS, f"invalid {key}: {value!r} is not a quantity")
    if not 0 <= number < _UINT256_LIMIT:
        raise TransactionRefused(INVALID_PARAMS, f"invalid {key}: {value!r} is not an unsigned 256-bit quantity")
    return number


def _address(key: str, value: Any) -> str:
    if not isinstance(value, str) or not _ADDRESS.fullmatch(value):
        raise TransactionRefused(INVALID_PARAMS, f"invalid {key}: {value!r} is not an address")
    return value.lower()


def _data(value: Any) -> str:
    match = _HEX_DATA.fullmatch(value) if isinstance(value, str) else None
    if match is None:
        raise TransactionRefused(INVALID_PARAMS, "invalid input: the calldata must be hex bytes")
    return "0x" + match.group(1).lower()


def _access_list(value: Any) -> list[dict[str, Any]]:
    if not isinstance(value, list) or not all(
            isinstance(entry, dict) and isinstance(entry.get("storageKeys", []), list) for entry in value):
        raise TransactionRefused(INVALID_PARAMS, "invalid accessList: a list of {address, storageKeys}")
    return [{"address": _address("accessList address", entry.get("address")),
             "storageKeys": [_storage_key(key) for key in entry.get("storageKeys", [])]} for entry in value]


def _storage_key(value: Any) -> str:
    if not isinstance(value, str) or not re.fullmatch(r"0x[0-9a-fA-F]{64}", value):
        raise TransactionRefused(INVALID_PARAMS, f"invalid accessList storage key: {value!r}")
    return value.lower()
