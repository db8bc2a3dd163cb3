"""Where an on-chain goal reads its wallet and amount in a log, and which goals' fields are refused: pure rules."""

import pytest
from eth_utils import keccak

from adnet.campaigns.goal_events import GoalEvent, read_log, spec_refusal

TRANSFER = "0x" + keccak(text="Transfer(address,address,uint256)").hex()
TOKEN = "0x" + "11" * 20
SENDER, RECIPIENT = "0x" + "aa" * 20, "0x" + "bb" * 20


def word(value: int | str) -> bytes:
    return (int(value, 16) if isinstance(value, str) else value).to_bytes(32, "big")


TOPICS = [bytes.fromhex(TRANSFER[2:]), word(SENDER), word(RECIPIENT)]
DATA = word(500)


def goal(**fields) -> GoalEvent:
    return GoalEvent(**{"contract": TOKEN, "topic0": TRANSFER, "wallet_field": "topic1", **fields})


def test_the_wallet_is_read_from_a_topic_a_data_word_or_the_sender():
    assert read_log(goal(), TOPICS, DATA, None).wallet == SENDER
    assert read_log(goal(wallet_field="topic2"), TOPICS, DATA, None).wallet == RECIPIENT
    assert read_log(goal(wallet_field="tx.from"), TOPICS, DATA, "0x" + "CC" * 20).wallet == "0x" + "cc" * 20
    assert read_log(goal(wallet_field="data1"), TOPICS, DATA + word(SENDER), None).wallet == SENDER


def test_the_amount_is_read_and_a_minimum_applies():
    assert read_log(goal(amount_field="data0"), TOPICS, DATA, None).amount == 500
    assert read_log(goal(amount_field="data0", min_amount=500), TOPICS, DATA, None).amount == 500
    assert read_log(goal(amount_field="data0", min_amount=501), TOPICS, DATA, None) is None
    assert read_log(goal(), TOPICS, DATA, None).amount is None


@pytest.mark.parametrize(("fields", "topics", "data", "tx_from"), [
    ({}, [word(1), *TOPICS[1:]], DATA, None),  # another event
    ({}, [], DATA, None),  # an anonymous event
    ({"wallet_field": "topic3"}, TOPICS, DATA, None),  # a topic the log lacks
    ({"wallet_field": "data1"}, TOPICS, DATA, None),  # a data word the log lacks
    ({"wallet_field": "data0"}, TOPICS, word(2**200), None),  # a word that is no address
    ({"wallet_field": "tx.from"}, TOPICS, DATA, None),  # no sender known
    ({"amount_field": "data3"}, TOPICS, DATA, None),  # no amount where it is said to be
])
def test_a_log_that_is_not_the_goals_event_counts_for_nobody(fields, topics, data, tx_from):
    assert read_log(goal(**fields), topics, data, tx_from) is None


def test_an_onchain_goal_names_its_event_and_an_offchain_goal_none():
    onchain = {"contract": TOKEN, "topic0": TRANSFER, "wallet_field": "topic1", "amount_field": None,
               "min_amount": None}
    assert spec_refusal(onchain=True, **onchain) is None
    assert spec_refusal(onchain=True, **{**onchain, "contract": None})[0] == "contract"
    assert spec_refusal(onchain=True, **{**onchain, "topic0": None})[0] == "topic0"
    assert spec_refusal(onchain=True, **{**onchain, "wallet_field": None})[0] == "walletField"
    assert spec_refusal(onchain=True, **{**onchain, "min_amount": 5})[0] == "minAmount"
    assert spec_refusal(onchain=True, **{**onchain, "min_amount": 5, "amount_field": "data0"}) is None
    assert spec_refusal(onchain=False, **{key: None for key in onchain}) is None
    assert spec_refusal(onchain=False, **{**{key: None for key in onchain}, "topic0": TRANSFER})[0] == "topic0"
