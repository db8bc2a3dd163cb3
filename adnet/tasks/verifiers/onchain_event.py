"""ONCHAIN_EVENT: the wallet did something on the chain: a transaction it sent to the configured contract
succeeded, emitted the configured event from the configured address, was mined after the task started, and has the
configured number of confirmations.

Everything is read from the chain's receipt of ``txHash``; nothing the client says about the transaction is
believed. A transaction counts for one completion only: ``Completion.tx_hash`` is a unique key across all tasks.
"""

from __future__ import annotations

from typing import Any

from hexbytes import HexBytes

from adnet.chain.client import ChainUnavailable
from adnet.core.errors import Conflict, Invalid, NotFound
from adnet.core.inputs import TX_HASH
from adnet.tasks.config import OnchainEventConfig
from adnet.tasks.models import Completion, TaskKind
from adnet.tasks.verifiers.base import Attempt, ProofRejected, Verified, proof_needs_chain

# Roughly one block on the chains adnet runs on: when to ask again for missing confirmations.
CONFIRMATION_RETRY_SECONDS = 5


def tx_already_used() -> Conflict:
    return Conflict("tx_already_used", "This transaction already counted for a completion.")


class OnchainEventVerifier:
    """Checks the receipt of ``proof.txHash`` on the bound chain."""

    kind = TaskKind.ONCHAIN_EVENT

    async def verify(self, attempt: Attempt) -> Verified:
        config: OnchainEventConfig = attempt.config
        tx_hash = attempt.proof["txHash"]
        if not isinstance(tx_hash, str) or not TX_HASH.match(tx_hash):
            raise Invalid("invalid_tx_hash", "txHash is 0x followed by 64 hexadecimal digits.",
                          field="proof.txHash")
        tx_hash = tx_hash.lower()
        if await Completion.exists(tx_hash=tx_hash):
            raise tx_already_used()
        chain = attempt.chain
        try:
            receipt = await chain.get_receipt(tx_hash)
            if receipt is None:
                raise NotFound("transaction_not_found", "No mined transaction has this hash on adnet's chain; "
                                                             "if it was just sent, retry once it is mined.")
            _check_receipt(receipt, config, attempt.wallet)
            mined_at = await chain.block_timestamp(int(receipt["blockNumber"]))
            head = await chain.block_number()
        except ChainUnavailable:
            raise proof_needs_chain() from None
        if mined_at < attempt.task.starts_at.timestamp():
            raise ProofRejected("mined_before_start", "The transaction was mined before the task started.",
                                field="proof.txHash")
        missing = config.confirmations - (head - int(receipt["blockNumber"]))
        if missing > 0:
            raise Conflict("not_confirmed", f"The transaction needs {missing} more confirmation(s); retry shortly.",
                           retryAfter=CONFIRMATION_RETRY_SECONDS * missing)
        return Verified(tx_hash=tx_hash)


def _check_receipt(receipt: Any, config: OnchainEventConfig, wallet: str) -> None:
    if receipt["status"] != 1:
        raise ProofRejected("tx_failed", "The transaction failed on the chain.", field="proof.txHash")
    if str(receipt["from"]).lower() != wallet:
        raise ProofRejected("wrong_sender", "The transaction was not sent by this wallet.", field="proof.txHash")
    if str(receipt.get("to") or "").lower() != config.contract:
        raise ProofRejected("wrong_contract", "The transaction did not call the task's contract.",
                            field="proof.txHash")
    emitter = config.emitter or config.contract
    if not any(_emitted(entry, emitter, config.event_topic) for entry in receipt["logs"]):
        raise ProofRejected("event_missing", "The transaction did not emit the task's event.", field="proof.txHash")


def _emitted(entry: Any, emitter: str, topic: str) -> bool:
    topics = entry["topics"]
    return str(entry["address"]).lower() == emitter and bool(topics) and HexBytes(topics[0]).to_0x_hex() == topic


VERIFIER = OnchainEventVerifier()
