"""Many reads of the chain at once, for jobs that ask the same question of many wallets (``adnet.audiences``).

- ``call_many``: read-only contract calls, through Multicall3's ``aggregate3`` in one ``eth_call`` per
  ``CALLS_PER_MULTICALL`` where the chain has Multicall3 at ``MULTICALL3`` (most chains do; a development chain may
  not), else as batched JSON-RPC requests (``REQUESTS_PER_BATCH`` to a batch). A call that reverts or answers
  nothing reads as None, so one odd contract spoils no other answer.
- ``transaction_counts``: each wallet's nonce (``eth_getTransactionCount``), as batched JSON-RPC.
- ``logs_naming``: the logs of an event of a contract naming any of many wallets in one topic (the wallets in one
  filter; the block range in parts a node accepts, sent as batches).
- ``first_block_since``: the first block stamped at or after a time (a binary search over block headers).

Batches go through ``ChainClient.relay``: the node's JSON-RPC endpoint, or the in-process development chain.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from eth_abi import decode, encode
from hexbytes import HexBytes

from adnet.chain.client import ChainClient, ChainLog, ChainUnavailable
from adnet.chain.watcher import MAX_BLOCK_RANGE

log = logging.getLogger(__name__)

# Multicall3's address, the same on every chain it was deployed to (github.com/mds1/multicall).
MULTICALL3 = "0xca11bde05977b3631167028862be2a173976ca11"
_AGGREGATE3 = bytes.fromhex("82ad56cb")
CALLS_PER_MULTICALL = 200
REQUESTS_PER_BATCH = 100


@dataclass(frozen=True)
class ReadCall:
    """A read-only call: the contract and the ABI-encoded call data."""

    to: str
    data: bytes


async def has_code(chain: ChainClient, address: str) -> bool:
    """Whether a contract is deployed at ``address``."""
    (answer,) = await _batch(chain, [("eth_getCode", [address, "latest"])])
    return isinstance(answer, str) and len(answer) > 2


async def call_many(chain: ChainClient, calls: Sequence[ReadCall], *, multicall: bool) -> list[bytes | None]:
    """What each call returns (None when it reverted), in order: through Multicall3 when ``multicall`` (the chain
    has it at ``MULTICALL3``), else as batched ``eth_call`` requests."""
    if multicall:
        answers: list[bytes | None] = []
        for start in range(0, len(calls), CALLS_PER_MULTICALL):
            answers.extend(await _aggregate3(chain, calls[start:start + CALLS_PER_MULTICALL]))
        return answers
    raw = await _batch(chain, [("eth_call", [{"to": call.to, "data": "0x" + call.data.hex()}, "latest"])
                               for call in calls])
    return [bytes(HexBytes(answer)) if isinstance(answer, str) and len(answer) > 2 else None for answer in raw]


async def transaction_counts(chain: ChainClient, wallets: Sequence[str]) -> dict[str, int]:
    """Each wallet's transaction count (its nonce at the latest block); a wallet the node did not answer for is
    left out."""
    raw = await _batch(chain, [("eth_getTransactionCount", [wallet, "latest"]) for wallet in wallets])
    return {wallet: int(answer, 16) for wallet, answer in zip(wallets, raw, strict=True) if isinstance(answer, str)}


async def logs_naming(chain: ChainClient, contract: str, topic0: str, position: int, wallets: Sequence[str],
                      from_block: int, to_block: int) -> list[ChainLog]:
    """The logs of ``contract`` with ``topic0`` whose topic ``position`` (1 to 3) is one of ``wallets``, in a block
    range: one ``eth_getLogs`` per ``MAX_BLOCK_RANGE`` blocks (what public nodes accept), sent as batches."""
    topics: list[Any] = [topic0, None, None, None][:position + 1]
    topics[position] = ["0x" + "0" * 24 + wallet.removeprefix("0x").lower() for wallet in wallets]
    answers = await _batch(chain, [
        ("eth_getLogs", [{"address": contract, "topics": topics, "fromBlock": hex(start),
                          "toBlock": hex(min(start + MAX_BLOCK_RANGE - 1, to_block))}])
        for start in range(from_block, to_block + 1, MAX_BLOCK_RANGE)], strict=True)
    return [ChainLog(address=str(entry["address"]).lower(), topics=tuple(bytes(HexBytes(topic))
                                                                         for topic in entry["topics"]),
                     data=bytes(HexBytes(entry["data"])), tx_hash=str(entry["transactionHash"]).lower(),
                     log_index=int(entry["logIndex"], 16), block_number=int(entry["blockNumber"], 16))
            for answer in answers for entry in answer]


async def first_block_since(chain: ChainClient, timestamp: int, head: int) -> int:
    """The first block up to ``head`` stamped at or after ``timestamp`` (``head + 1`` when none is)."""
    low, high = 0, head + 1
    while low < high:
        middle = (low + high) // 2
        if await chain.block_timestamp(middle) >= timestamp:
            high = middle
        else:
            low = middle + 1
    return low


async def _aggregate3(chain: ChainClient, calls: Sequence[ReadCall]) -> list[bytes | None]:
    data = _AGGREGATE3 + encode(["(address,bool,bytes)[]"], [[(call.to, True, call.data) for call in calls]])
    (answer,) = await _batch(chain, [("eth_call", [{"to": MULTICALL3, "data": "0x" + data.hex()}, "latest"])],
                             strict=True)
    (results,) = decode(["(bool,bytes)[]"], bytes(HexBytes(answer)))
    return [bytes(returned) if success and returned else None for success, returned in results]


async def _batch(chain: ChainClient, requests: Sequence[tuple[str, list[Any]]], *, strict: bool = False
                 ) -> list[Any]:
    """The results of JSON-RPC ``requests`` sent as batches, in order; a request answered with an error reads as
    None, or raises ChainUnavailable when ``strict``."""
    results: list[Any] = []
    for start in range(0, len(requests), REQUESTS_PER_BATCH):
        part = requests[start:start + REQUESTS_PER_BATCH]
        answer = await chain.relay([{"jsonrpc": "2.0", "id": index, "method": method, "params": params}
                                    for index, (method, params) in enumerate(part)])
        if not isinstance(answer, list):
            raise ChainUnavailable(f"the chain's node did not answer the batch: {str(answer)[:200]}")
        by_id = {item.get("id"): item for item in answer if isinstance(item, dict)}
        for index, (method, _) in enumerate(part):
            item = by_id.get(index) or {}
            if "result" not in item and strict:
                raise ChainUnavailable(f"the chain's node refused {method}: {str(item.get('error'))[:200]}")
            results.append(item.get("result"))
    return results
