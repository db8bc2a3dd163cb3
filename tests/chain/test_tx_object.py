"""Transaction objects read as anvil reads them (``adnet.chain.tx_object``): every way a library writes a quantity,
the calldata as ``data`` or ``input``, keys a node does not know ignored, and what anvil refuses refused with its
error code. The chains' answers to the same objects are compared in ``tests/chain/test_devchain.py``."""

from __future__ import annotations

import pytest

from adnet.chain.tx_object import INVALID_PARAMS, TransactionRefused, read_transaction

SENDER = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"
TO = "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC"


def test_a_prepared_object_keeps_what_a_node_reads_and_nothing_else():
    prepared = {"from": SENDER, "to": TO, "data": "0x095EA7B3", "chainId": 42220,
                "request": {"method": "eth_sendTransaction", "params": [{}]}, "type": "0x2", "blobs": []}
    read = read_transaction(prepared)
    assert read.fields == {"from": SENDER.lower(), "to": TO.lower(), "data": "0x095ea7b3"}
    assert read.chain_id == 42220


@pytest.mark.parametrize(("written", "value"), [
    (0, 0), (16, 16), ("0x10", 16), ("0x0", 0), ("0x", 0), ("", 0), ("10", 10), ("0", 0), ("0x" + "f" * 64, 2**256 - 1),
])
def test_quantities_as_numbers_hex_or_decimal_strings(written, value):
    fields = read_transaction({"to": TO, "value": written, "gas": written, "nonce": written}).fields
    assert fields["value"] == fields["gas"] == fields["nonce"] == hex(value)
    assert read_transaction({"chainId": written}).chain_id == value


@pytest.mark.parametrize("written", [1.5, True, "-1", "1e3", "0x1g", "ten", [], {}, "0x1" + "0" * 64, 2**256, -1])
def test_what_is_not_a_quantity_is_invalid_params(written):
    with pytest.raises(TransactionRefused) as refused:
        read_transaction({"to": TO, "value": written})
    assert refused.value.code == INVALID_PARAMS and "value" in str(refused.value)


def test_input_wins_over_data_and_hex_may_omit_its_prefix():
    assert read_transaction({"data": "0x12", "input": "0x34"}).fields["data"] == "0x34"
    assert read_transaction({"data": "12"}).fields["data"] == "0x12"
    assert read_transaction({"input": None, "data": "0x56"}).fields["data"] == "0x56"
    for odd in ("0x1", "0xzz", 12):
        with pytest.raises(TransactionRefused):
            read_transaction({"data": odd})


def test_a_gas_price_makes_a_legacy_transaction():
    fields = read_transaction({"gasPrice": 7, "maxFeePerGas": 9, "maxPriorityFeePerGas": 1}).fields
    assert fields == {"gasPrice": "0x7"}
    assert read_transaction({"maxFeePerGas": 9}).fields == {"maxFeePerGas": "0x9"}


def test_addresses_and_access_lists_are_checked():
    for bad in ({"to": "0x1234"}, {"from": 5}, {"accessList": "x"}, {"accessList": [{"address": TO,
                                                                                      "storageKeys": ["0x01"]}]}):
        with pytest.raises(TransactionRefused) as refused:
            read_transaction(bad)
        assert refused.value.code == INVALID_PARAMS
    assert read_transaction({"to": None}).fields == {}  # a contract creation
    key = "0x" + "0A" * 32
    assert read_transaction({"accessList": [{"address": TO, "storageKeys": [key]}]}).fields["accessList"] == [
        {"address": TO.lower(), "storageKeys": [key.lower()]}]
    with pytest.raises(TransactionRefused):
        read_transaction(["not", "an", "object"])
