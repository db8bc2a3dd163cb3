"""Sending transactions signed by a local key (deployment, development funding, tests).

adnet itself never sends a transaction in production: wallets send deposits and claims. These helpers serve the
operator's one-off deployment and the development chain's faucet.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from eth_account.signers.local import LocalAccount
from web3 import AsyncWeb3
from web3.types import TxParams, TxReceipt

RECEIPT_TIMEOUT_SECONDS = 120.0


class TransactionReverted(Exception):
    """A transaction was mined with status 0."""

    def __init__(self, receipt: TxReceipt) -> None:
        super().__init__(f"transaction {receipt['transactionHash'].to_0x_hex()} reverted")
        self.receipt = receipt


async def send_transaction(w3: AsyncWeb3, account: LocalAccount, transaction: Mapping[str, Any]) -> TxReceipt:
    """Sign ``transaction`` (``to``, ``data``, optional ``value`` and ``gas``; quantities as ints or hex strings)
    with ``account``, send it, and return its receipt once mined; raise TransactionReverted on status 0.

    Fills nonce, chain id, gas and EIP-1559 fees from the node. One sender must not send concurrently."""
    prepared: dict[str, Any] = {
        "from": account.address,
        "data": transaction.get("data", "0x"),
        "value": _int(transaction.get("value", 0)),
        "chainId": await w3.eth.chain_id,
        "nonce": await w3.eth.get_transaction_count(account.address, "pending"),
    }
    if transaction.get("to"):
        prepared["to"] = AsyncWeb3.to_checksum_address(transaction["to"])
    latest = await w3.eth.get_block("latest")
    tip = await w3.eth.max_priority_fee
    prepared["maxPriorityFeePerGas"] = tip
    prepared["maxFeePerGas"] = 2 * latest.get("baseFeePerGas", 0) + tip
    prepared["gas"] = _int(transaction["gas"]) if transaction.get("gas") else (
        await w3.eth.estimate_gas(cast(TxParams, prepared)) * 6 // 5)
    signed = account.sign_transaction(prepared)
    tx_hash = await w3.eth.send_raw_transaction(signed.raw_transaction)
    receipt = await w3.eth.wait_for_transaction_receipt(tx_hash, timeout=RECEIPT_TIMEOUT_SECONDS, poll_latency=0.05)
    if receipt["status"] != 1:
        raise TransactionReverted(receipt)
    return receipt


def _int(value: int | str) -> int:
    return int(value, 16) if isinstance(value, str) else int(value)
