"""What an on-chain goal counts: an event a contract emits on adnet's chain, and where in it the converting wallet
and the amount are. Pure: the spellings a goal's fields take, their checks, and the reading of one log.

A goal names the contract (its address), the event's ``topic0`` (the keccak-256 of its signature, such as
``Transfer(address,address,uint256)``) and where its wallet is: ``topic1`` to ``topic3`` (an indexed ``address``
argument), ``data0`` to ``data63`` (the n-th 32-byte word of the log's data: a static argument not indexed), or
``tx.from`` (the account that sent the transaction). Optionally ``amountField`` (a topic or data word, read as a
uint256) and ``minAmount`` (in the event's own smallest unit): an event whose amount is below it does not count.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

TX_FROM = "tx.from"
MAX_DATA_WORD = 63
WALLET_FIELD = re.compile(r"^(tx\.from|topic[1-3]|data(?:[0-9]|[1-5][0-9]|6[0-3]))$")
AMOUNT_FIELD = re.compile(r"^(topic[1-3]|data(?:[0-9]|[1-5][0-9]|6[0-3]))$")
TOPIC = re.compile(r"^0x[0-9a-f]{64}$")
_WORD = 32


@dataclass(frozen=True)
class GoalEvent:
    """Where an on-chain goal reads its conversions (``contract`` and ``topic0`` lower-case)."""

    contract: str
    topic0: str
    wallet_field: str
    amount_field: str | None = None
    min_amount: int | None = None


@dataclass(frozen=True)
class Converted:
    """What one log says for a goal: the converting wallet (lower-case) and the amount (None without an
    ``amount_field``)."""

    wallet: str
    amount: int | None


def spec_refusal(*, onchain: bool, contract: str | None, topic0: str | None, wallet_field: str | None,
                 amount_field: str | None, min_amount: int | None) -> tuple[str, str] | None:
    """(field, message) of the first rule a goal's on-chain fields break, or None: an on-chain goal names its
    contract, topic0 and wallet field, and a minimum amount only with an amount field; an off-chain goal none of
    them."""
    given = {"contract": contract, "topic0": topic0, "walletField": wallet_field, "amountField": amount_field,
             "minAmount": min_amount}
    if not onchain:
        named = next((name for name, value in given.items() if value is not None), None)
        return None if named is None else (named, "only an onchain goal reads a contract's event")
    for name in ("contract", "topic0", "walletField"):
        if given[name] is None:
            return name, "an onchain goal names its contract, topic0 and walletField"
    if min_amount is not None and amount_field is None:
        return "minAmount", "a minimum amount needs the amountField it applies to"
    return None


def read_log(goal: GoalEvent, topics: Sequence[bytes], data: bytes, tx_from: str | None) -> Converted | None:
    """The wallet (and amount) of a log that is the goal's event, or None: another event or contract's topic0, a
    field the log lacks, a wallet word that is no address (its upper 12 bytes not zero), or an amount below the
    goal's minimum. The caller passes the log of the goal's contract; ``tx_from`` is read only for ``tx.from``."""
    if not topics or "0x" + bytes(topics[0]).hex() != goal.topic0:
        return None
    if goal.wallet_field == TX_FROM:
        wallet = tx_from.lower() if tx_from else None
    else:
        word = _word(goal.wallet_field, topics, data)
        wallet = None if word is None or any(word[:12]) else "0x" + word[12:].hex()
    if wallet is None:
        return None
    amount = None
    if goal.amount_field is not None:
        word = _word(goal.amount_field, topics, data)
        if word is None:
            return None
        amount = int.from_bytes(word, "big")
        if goal.min_amount is not None and amount < goal.min_amount:
            return None
    return Converted(wallet=wallet, amount=amount)


def _word(field: str, topics: Sequence[bytes], data: bytes) -> bytes | None:
    """The 32 bytes ``field`` names, or None when the log has no such topic or data word."""
    if field.startswith("topic"):
        index = int(field[5:])
        return bytes(topics[index]) if index < len(topics) and len(topics[index]) == _WORD else None
    start = int(field[4:]) * _WORD
    return data[start:start + _WORD] if len(data) >= start + _WORD else None
