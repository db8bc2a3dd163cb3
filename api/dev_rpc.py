"""``POST /dev/rpc``: the development chain's JSON-RPC on the app's own origin, so a browser wallet can add it as
a network (``http://127.0.0.1:8000/dev/rpc``) and the portal can read the chain without CORS.

Only what a wallet needs is relayed: reads, ``eth_sendRawTransaction`` (the wallet signs), nothing that would let
a page spend the unlocked development accounts or rewind the chain under the database (``eth_sendTransaction``,
``evm_*``, ``anvil_*``). The app registers it outside production only.
"""

from __future__ import annotations

from typing import Any

from quart import Blueprint, Response, jsonify, request
from quart_schema import hide

from adnet.chain.client import ChainUnavailable
from adnet.services import Services
from web.context import injected

blueprint = Blueprint("api_dev_rpc", __name__)

RELAYED = frozenset({
    "eth_chainId", "net_version", "web3_clientVersion", "eth_blockNumber", "eth_getBalance", "eth_getCode",
    "eth_getStorageAt", "eth_getTransactionCount", "eth_getBlockByNumber", "eth_getBlockByHash",
    "eth_getTransactionByHash", "eth_getTransactionReceipt", "eth_getLogs", "eth_call", "eth_estimateGas",
    "eth_gasPrice", "eth_maxPriorityFeePerGas", "eth_feeHistory", "eth_syncing", "eth_sendRawTransaction",
})


@blueprint.post("/dev/rpc")
@hide
@injected
async def dev_rpc(run: Services) -> Response | tuple[Response, int]:
    """Relay a JSON-RPC request or batch to the development chain (development and tests only)."""
    body = await request.get_json(force=True, silent=True)
    if not isinstance(body, dict | list) or body == []:
        return jsonify(_error(None, -32700, "expected a JSON-RPC request or batch")), 400
    items = body if isinstance(body, list) else [body]
    relayed = [item for item in items if isinstance(item, dict) and item.get("method") in RELAYED]
    refused = [_error(item.get("id") if isinstance(item, dict) else None, -32601,
                      "method not available through /dev/rpc") for item in items if item not in relayed]
    answers: list[Any] = []
    if relayed:
        try:
            answer = await run.chain.relay(relayed if isinstance(body, list) else relayed[0])
        except ChainUnavailable:
            return jsonify(_error(None, -32603, "the development chain does not answer")), 503
        answers = answer if isinstance(answer, list) else [answer]
    merged = answers + refused
    return jsonify(merged if isinstance(body, list) else merged[0])


def _error(request_id: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}
