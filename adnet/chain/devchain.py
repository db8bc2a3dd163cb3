"""The development chain: an in-process EVM (py-evm through eth-tester) that speaks standard JSON-RPC.

The same ``DevChain`` serves two uses:

- tests run it in the test process, in memory, behind ``InProcessProvider`` (no sockets, milliseconds per copy);
- ``adnet serve`` runs it as one separate process (``adnet.chain.devserver``) whose state lives in a SQLite file,
  so every worker sees one chain and a restart brings the same chain back.

State is py-evm's own key-value database (trie nodes, headers, receipts), kept in one SQLite table and committed
once per state-changing request, so a crash loses at most the request in flight and start-up time does not grow
with the chain's history. Requests and answers follow the Ethereum JSON-RPC conventions (hex quantities,
``{"code": 3, "message": "execution reverted", "data": ...}`` on a revert), so adnet talks to it exactly as it
talks to anvil or a Celo node.

Block timestamps follow the wall clock, or the clock a test gives (each block is stamped when it is mined, at
least one second after its parent); ``evm_increaseTime``, ``evm_setNextBlockTimestamp`` and ``evm_mine`` move
time forward as on anvil.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
import time
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any, cast

from eth.abc import SignedTransactionAPI
from eth.chains.base import MiningChain
from eth.db.atomic import AtomicDB
from eth.db.backends.base import BaseDB
from eth.db.backends.memory import MemoryDB
from eth.exceptions import CanonicalHeadNotFound, PyEVMError, Revert
from eth.exceptions import TransactionNotFound as EVMTransactionNotFound
from eth.vm.forks import PragueVM
from eth.vm.spoof import SpoofTransaction
from eth_tester import EthereumTester, PyEVMBackend
from eth_tester.backends.pyevm.main import _get_block_by_number, get_account_keys_from_mnemonic
from eth_tester.backends.pyevm.serializers import serialize_transaction, serialize_transaction_receipt
from eth_tester.exceptions import TransactionFailed, TransactionNotFound
from eth_tester.exceptions import ValidationError as TesterValidationError
from eth_typing import BlockNumber, Hash32
from eth_utils import ValidationError, to_canonical_address, to_hex
from eth_utils.toolz import assoc
from rlp.exceptions import RLPException
from web3._utils.encoding import Web3JsonEncoder
from web3.providers.async_base import AsyncBaseProvider
from web3.providers.eth_tester.defaults import API_ENDPOINTS
from web3.providers.eth_tester.middleware import request_formatters, result_formatters
from web3.types import RPCEndpoint, RPCResponse

from adnet.chain.tx_object import INVALID_PARAMS, TRANSACTION_REJECTED, TransactionRefused, read_transaction
from adnet.core.wallets import DEV_ACCOUNT_COUNT, DEV_HD_PATH, DEV_MNEMONIC

log = logging.getLogger(__name__)

# The chain id eth-tester has always used; kept so a wallet's network entry survives a reset of the chain.
DEV_CHAIN_ID = 131277322940537
CLIENT_VERSION = "adnet-devchain/1"

# Methods that change the chain (committed to the store after they run).
_WRITES = frozenset({
    "eth_sendRawTransaction", "eth_sendTransaction", "evm_mine", "evm_increaseTime", "evm_setNextBlockTimestamp",
})
# Read methods answered by eth-tester through web3's endpoint table.
_DELEGATED_READS = frozenset({
    "eth_blockNumber", "eth_getBalance", "eth_getCode", "eth_getStorageAt", "eth_getTransactionCount",
    "eth_getBlockByNumber", "eth_getBlockByHash", "eth_getBlockTransactionCountByNumber",
    "eth_getBlockTransactionCountByHash", "eth_getTransactionByBlockNumberAndIndex",
    "eth_getTransactionByBlockHashAndIndex", "eth_getTransactionByHash", "eth_getTransactionReceipt",
    "eth_getLogs", "eth_estimateGas", "eth_gasPrice", "eth_maxPriorityFeePerGas", "eth_feeHistory",
    "eth_syncing", "eth_accounts", "net_listening",
})
# anvil's default tip (1 gwei), for a transaction that names only its fee cap.
DEFAULT_PRIORITY_FEE = 10**9
_TRANSACTION_METHODS = frozenset({"eth_sendTransaction", "eth_call", "eth_estimateGas"})
_FEE_FIELDS = frozenset({"gas_price", "max_fee_per_gas", "max_priority_fee_per_gas"})
METHODS = _WRITES | _DELEGATED_READS | {"eth_chainId", "net_version", "web3_clientVersion", "eth_call"}


class _DevPosChain(MiningChain):
    """eth-tester's post-merge test chain: Prague rules from genesis and a constant gas limit."""

    chain_id = DEV_CHAIN_ID
    vm_configuration = ((BlockNumber(0), PragueVM),)

    def create_header_from_parent(self, parent_header, **header_params):
        return super().create_header_from_parent(parent_header, **assoc(header_params, "gas_limit",
                                                                         parent_header.gas_limit))

    def get_transaction_builder(self):
        return super().get_vm().get_transaction_builder()


class SqliteStore(BaseDB):
    """py-evm's key-value database in one SQLite table; writes become durable at ``commit``."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(path, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS kv (k BLOB PRIMARY KEY, v BLOB NOT NULL) WITHOUT ROWID")
        self._db.commit()

    def __getitem__(self, key: bytes) -> bytes:
        row = self._db.execute("SELECT v FROM kv WHERE k = ?", (key,)).fetchone()
        if row is None:
            raise KeyError(key)
        return row[0]

    def __setitem__(self, key: bytes, value: bytes) -> None:
        self._db.execute("INSERT OR REPLACE INTO kv (k, v) VALUES (?, ?)", (key, value))

    def __delitem__(self, key: bytes) -> None:
        if self._db.execute("DELETE FROM kv WHERE k = ?", (key,)).rowcount == 0:
            raise KeyError(key)

    def _exists(self, key: bytes) -> bool:
        return self._db.execute("SELECT 1 FROM kv WHERE k = ?", (key,)).fetchone() is not None

    def commit(self) -> None:
        self._db.commit()

    def rollback(self) -> None:
        self._db.rollback()

    def close(self) -> None:
        self._db.close()


class MemoryStore(MemoryDB):
    """The in-memory store of test chains; ``copy`` gives an independent chain in the same state."""

    def commit(self) -> None:
        pass

    def rollback(self) -> None:
        pass

    def close(self) -> None:
        pass

    def copy(self) -> MemoryStore:
        return MemoryStore(dict(self.kv_store))


class _Reverted(Exception):
    """A call or gas estimate that reverted, with the raw revert data."""

    def __init__(self, data: bytes) -> None:
        super().__init__("execution reverted")
        self.data = data


class _Backend(PyEVMBackend):
    """eth-tester's py-evm backend over a chain we open ourselves, with indexed transaction lookups (eth-tester
    scans every block), and calls and gas estimates that keep a revert's data."""

    def __init__(self, chain: MiningChain, account_keys: tuple) -> None:
        self.chain = chain
        self.account_keys = account_keys

    def _locate(self, transaction_hash: bytes):
        try:
            number, index = self.chain.chaindb.get_transaction_index(Hash32(transaction_hash))
        except EVMTransactionNotFound:
            raise TransactionNotFound(f"no transaction {to_hex(transaction_hash)}") from None
        block = self.chain.get_canonical_block_by_number(number)
        return block, block.transactions[index], index

    def get_transaction_by_hash(self, transaction_hash):
        block, transaction, index = self._locate(transaction_hash)
        return serialize_transaction(block, transaction, index, False)

    def get_transaction_receipt(self, transaction_hash):
        block, transaction, index = self._locate(transaction_hash)
        receipts = block.get_receipts(self.chain.chaindb)
        return serialize_transaction_receipt(block, receipts, transaction, index, False, self.chain.get_vm())

    def call(self, transaction, block_number="latest"):
        computation, _ = self._execute(transaction, block_number)
        return computation.output

    def estimate_gas(self, transaction, block_number="latest"):
        # One execution instead of py-evm's binary search (a dozen executions): the gas it consumed before
        # refunds, plus a quarter for the 63/64 rule of nested calls and for state that changes before mining.
        computation, gas_limit = self._execute(transaction, block_number, funded=True)
        needed = gas_limit - computation.get_gas_remaining()
        return min(needed + needed // 4, self.chain.header.gas_limit)

    def _execute(self, transaction, block_number, *, funded: bool = False):
        """Run ``transaction`` on the state of ``block_number`` and throw the changes away. As on geth and anvil,
        a call pays no fee, so any sender may call with the whole block's gas; ``funded`` (a gas estimate), as on
        anvil, the sender is lent the ``value`` it sends beyond its balance."""
        fee_free = {key: value for key, value in transaction.items() if key not in _FEE_FIELDS}
        fee_free.update(max_fee_per_gas=0, max_priority_fee_per_gas=0)
        fee_free.setdefault("gas", self.chain.header.gas_limit)
        unsigned = self._get_normalized_and_unsigned_evm_transaction(fee_free, block_number)
        header = _get_block_by_number(self.chain, block_number).header.copy(base_fee_per_gas=0)
        state = self.chain.get_vm(at_header=header).state
        snapshot = state.snapshot()
        sender = to_canonical_address(transaction["from"])
        if funded and state.get_balance(sender) < unsigned.value:
            state.set_balance(sender, unsigned.value)
        spoof = cast(SignedTransactionAPI, SpoofTransaction(unsigned, from_=transaction["from"]))
        computation = state.apply_transaction(spoof)
        state.revert(snapshot)
        if computation.is_error:
            error = computation.error
            raise _Reverted(error.args[0] if isinstance(error, Revert) and error.args else b"")
        return computation, fee_free["gas"]


@cache
def _dev_account_keys() -> tuple:
    """The private keys of the development accounts (``adnet.core.wallets.dev_accounts``), funded at genesis."""
    return get_account_keys_from_mnemonic(DEV_MNEMONIC, quantity=DEV_ACCOUNT_COUNT, hd_path=DEV_HD_PATH)


class DevChain:
    """One development chain: a py-evm chain over a store, answering JSON-RPC requests one at a time."""

    def __init__(self, store: SqliteStore | MemoryStore, *, time_source: Callable[[], float] = time.time) -> None:
        """``time_source`` gives the time new blocks are stamped with (tests pass their frozen clock); a new
        store gets a genesis block stamped with it too."""
        self._store = store
        self._time_source = time_source
        self._lock = threading.RLock()
        self._time_offset = 0
        self._next_timestamp: int | None = None
        self._open()

    @classmethod
    def open(cls, path: Path) -> DevChain:
        """The chain stored at ``path``, created with a fresh genesis when the file is new."""
        return cls(SqliteStore(path))

    @classmethod
    def in_memory(cls, *, time_source: Callable[[], float] = time.time) -> DevChain:
        return cls(MemoryStore(), time_source=time_source)

    def copy(self, *, time_source: Callable[[], float] = time.time) -> DevChain:
        """An independent in-memory chain in this chain's current state (for tests)."""
        if not isinstance(self._store, MemoryStore):
            raise TypeError("only an in-memory chain can be copied")
        with self._lock:
            return DevChain(self._store.copy(), time_source=time_source)

    def close(self) -> None:
        with self._lock:
            self._store.close()

    def _open(self) -> None:
        base = AtomicDB(self._store)
        try:
            chain = _DevPosChain(base)
        except CanonicalHeadNotFound:
            params = PyEVMBackend.generate_genesis_params({"timestamp": int(self._time_source())})
            state = PyEVMBackend.generate_genesis_state(
                mnemonic=DEV_MNEMONIC, num_accounts=DEV_ACCOUNT_COUNT, hd_path=DEV_HD_PATH
            )
            chain = cast(_DevPosChain, _DevPosChain.from_genesis(base, params, state))
            self._store.commit()
        self._backend = _Backend(chain, _dev_account_keys())
        self._tester = EthereumTester(self._backend)

    @property
    def chain_id(self) -> int:
        return DEV_CHAIN_ID

    @property
    def genesis_hash(self) -> str:
        return to_hex(self._backend.chain.get_canonical_block_header_by_number(BlockNumber(0)).hash)

    @property
    def block_number(self) -> int:
        return self._backend.chain.get_canonical_head().block_number

    def handle(self, request: Any) -> Any:
        """Answer one JSON-RPC request object, or a batch (list) of them."""
        if isinstance(request, list):
            return [self._answer(item) for item in request] if request else _error(None, -32600, "empty batch")
        return self._answer(request)

    def _answer(self, request: Any) -> dict[str, Any]:
        if not isinstance(request, dict) or not isinstance(request.get("method"), str):
            return _error(None, -32600, "invalid request")
        request_id = request.get("id")
        method = request["method"]
        params = request.get("params") or []
        if method not in METHODS:
            return _error(request_id, -32601, f"method {method} is not available on the development chain")
        if not isinstance(params, list):
            return _error(request_id, INVALID_PARAMS, "invalid params: expected a list")
        with self._lock:
            try:
                result = self._dispatch(method, params)
            except _Reverted as exc:
                return _revert(request_id, exc.data)
            except TransactionFailed as exc:
                return _revert(request_id, _revert_data(exc))
            except TransactionRefused as exc:
                self._discard_if_write(method)
                return _error(request_id, exc.code, str(exc))
            except (ValidationError, TesterValidationError, PyEVMError, RLPException, ValueError, TypeError,
                    KeyError) as exc:
                self._discard_if_write(method)
                return _error(request_id, -32000, str(exc) or type(exc).__name__)
            except Exception:
                self._discard_if_write(method)
                log.exception("devchain request failed method=%s", method)
                return _error(request_id, -32603, "internal error")
            if method in _WRITES:
                self._store.commit()
        return {"jsonrpc": "2.0", "id": request_id, "result": result}

    def _discard_if_write(self, method: str) -> None:
        """After a failed write, drop whatever it left half-done and reload the chain from the store."""
        if method in _WRITES:
            self._store.rollback()
            self._open()

    def _dispatch(self, method: str, params: list) -> Any:
        if method == "eth_chainId":
            return hex(DEV_CHAIN_ID)
        if method == "net_version":
            return str(DEV_CHAIN_ID)
        if method == "web3_clientVersion":
            return CLIENT_VERSION
        if method == "evm_increaseTime":
            self._time_offset += _quantity(params[0])
            return hex(self._time_offset)
        if method == "evm_setNextBlockTimestamp":
            self._next_timestamp = _quantity(params[0])
            return None
        if method == "evm_mine":
            if params and params[0] is not None:
                self._next_timestamp = _quantity(params[0])
            self._stamp_pending_block()
            self._tester.mine_blocks(1)
            return "0x0"
        if method in _TRANSACTION_METHODS:
            params = [self._transaction(method, params), *params[1:]]
        if method == "eth_call":
            return self._call(params)
        if method in ("eth_sendRawTransaction", "eth_sendTransaction"):
            self._stamp_pending_block()
        formatter: Callable | None = request_formatters.get(RPCEndpoint(method))
        if formatter is not None:
            params = formatter(params)
        namespace, _, endpoint = method.partition("_")
        result = API_ENDPOINTS[namespace][endpoint](self._tester, params)
        result_formatter: Callable | None = (result_formatters or {}).get(RPCEndpoint(method))
        if result_formatter is not None:
            result = result_formatter(result)
        if method == "eth_getTransactionReceipt" and result is not None:
            # eth-tester's receipt: a pre-Byzantium state root beside the status, and "" for "no recipient".
            result = {key: value for key, value in result.items() if key != "state_root"}
            result["to"] = result["to"] or None
        return _to_json_rpc(result)

    def _call(self, params: list) -> str:
        formatter = request_formatters[RPCEndpoint("eth_call")]
        block = params[1] if len(params) > 1 else "latest"
        transaction, block = formatter([params[0], block])
        return self._tester.call(transaction, block)

    def _transaction(self, method: str, params: list) -> dict[str, Any]:
        """The transaction object of ``params`` as anvil reads it (``adnet.chain.tx_object``), completed as anvil
        completes it: a call from the zero address; a transaction from development account 0 by default, its
        ``gas`` estimated when not given. The object's ``chainId``, when given, must be this chain's (a gas
        estimate ignores it, as on anvil); a nonce other than the sender's next one is refused, since every
        transaction is mined at once and none waits in a pool."""
        if not params:
            raise TransactionRefused(INVALID_PARAMS, "expected params sequence with length 1 but got 0")
        transaction = read_transaction(params[0])
        fields = transaction.fields
        if method == "eth_sendTransaction":
            if transaction.chain_id not in (None, DEV_CHAIN_ID):
                raise TransactionRefused(INVALID_PARAMS, f"transaction-provided chain ID ({transaction.chain_id}) "
                                                         f"does not match the signer's chain ID ({DEV_CHAIN_ID})")
            fields.setdefault("from", to_hex(self._backend.get_accounts()[0]))
            if fields["from"] not in {to_hex(account) for account in self._backend.get_accounts()}:
                raise TransactionRefused(INVALID_PARAMS, "No Signer available")
            self._check_nonce(fields)
            if "maxFeePerGas" in fields and "maxPriorityFeePerGas" not in fields:
                fields["maxPriorityFeePerGas"] = hex(min(DEFAULT_PRIORITY_FEE, int(fields["maxFeePerGas"], 16)))
            if "gas" not in fields:
                estimate = [{key: value for key, value in fields.items() if key != "nonce"}, "latest"]
                fields["gas"] = hex(self._tester.estimate_gas(*request_formatters[RPCEndpoint("eth_estimateGas")](
                    estimate)))
            return fields
        if method == "eth_call" and transaction.chain_id not in (None, DEV_CHAIN_ID):
            raise TransactionRefused(TRANSACTION_REJECTED, "invalid chain id for signer")
        fields.pop("nonce", None)  # a call or an estimate runs whatever the sender's nonce
        if method == "eth_estimateGas":
            fields.pop("gas", None)  # the estimate is what it needs, up to the block's gas limit
        return {"from": "0x" + "00" * 20, **fields}

    def _check_nonce(self, fields: dict[str, Any]) -> None:
        if "nonce" not in fields:
            return
        expected = self._tester.get_nonce(fields["from"])
        given = int(fields.pop("nonce"), 16)
        if given < expected:
            raise TransactionRefused(TRANSACTION_REJECTED, "nonce too low")
        if given > expected:
            raise TransactionRefused(TRANSACTION_REJECTED, f"nonce too high: the development chain mines every "
                                                           f"transaction at once, so the next is {expected}")

    def _stamp_pending_block(self) -> None:
        """Stamp the block about to be mined with our clock (py-evm stamped it with the wall clock when the previous
        block was mined), never earlier than one second after its parent. The pending block holds no transaction
        yet (each one is mined at once), so its time may still change."""
        chain = self._backend.chain
        parent = chain.get_canonical_head().timestamp
        wanted = self._next_timestamp if self._next_timestamp is not None else (
            int(self._time_source()) + self._time_offset)
        self._next_timestamp = None
        chain.set_header_timestamp(max(parent + 1, wanted))


class InProcessProvider(AsyncBaseProvider):
    """A web3 provider for a ``DevChain`` in this process. Requests go through JSON, as over HTTP, so web3 sees
    exactly what a node would send."""

    def __init__(self, chain: DevChain) -> None:
        super().__init__()
        self.chain = chain
        self._next_id = 0

    async def make_request(self, method: RPCEndpoint, params: Any) -> RPCResponse:
        self._next_id += 1
        request = json.loads(json.dumps({"jsonrpc": "2.0", "id": self._next_id, "method": method,
                                         "params": params}, cls=Web3JsonEncoder))
        return self.chain.handle(request)

    async def is_connected(self, show_traceback: bool = False) -> bool:
        return True


def _to_json_rpc(value: Any) -> Any:
    """eth-tester answers with Python ints; JSON-RPC wants hex quantities (and a 256-byte logs bloom)."""
    if isinstance(value, bool) or value is None or isinstance(value, str | float):
        return value
    if isinstance(value, int):
        return hex(value)
    if isinstance(value, bytes):
        return to_hex(value)
    if isinstance(value, dict):
        converted = {key: _to_json_rpc(item) for key, item in value.items()}
        if isinstance(value.get("logsBloom"), int):
            converted["logsBloom"] = "0x" + format(value["logsBloom"], "0512x")
        return converted
    if isinstance(value, list | tuple):
        return [_to_json_rpc(item) for item in value]
    return value


def _quantity(value: Any) -> int:
    return int(value, 16) if isinstance(value, str) else int(value)


def _revert_data(exc: TransactionFailed) -> bytes:
    cause = exc.args[0] if exc.args else b""
    if isinstance(cause, Revert) and cause.args and isinstance(cause.args[0], bytes):
        return cause.args[0]
    return cause if isinstance(cause, bytes) else b""


def _revert(request_id: Any, data: bytes) -> dict[str, Any]:
    error: dict[str, Any] = {"code": 3, "message": "execution reverted"}
    if data:
        error["data"] = to_hex(data)
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


def _error(request_id: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}
