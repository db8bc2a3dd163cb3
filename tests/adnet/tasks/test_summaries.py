"""Each kind of task in words (``adnet.tasks.summaries``), as the review queue shows it: the question and the
accepted answers among the choices, the prepared transfer by its amount, token and recipient instead of its
calldata, an unknown contract by its address."""

from __future__ import annotations

import pytest

from adnet.core.wallets import checksummed
from adnet.tasks.choices import OnchainChoice, event_topic, transfer_call
from adnet.tasks.models import TaskKind
from adnet.tasks.summaries import task_summary

GS = "0x" + "11" * 20
RECIPIENT = "0x" + "ab" * 20
CHOICES = [OnchainChoice("gs-transfer", "Send G$ (a Transfer of the G$ token)", GS,
                         "Transfer(address,address,uint256)")]
SHOWN = checksummed(RECIPIENT)
TRANSFER_TOPIC = event_topic("Transfer(address,address,uint256)")


@pytest.mark.parametrize(("kind", "config", "words"), [
    (TaskKind.QUIZ, {"question": "Which token…?", "answers": ["G$"], "choices": ["G$", "SOV", "ETH"]},
     "Quiz: “Which token…?” — answer G$ of G$, SOV, ETH."),
    (TaskKind.QUIZ, {"question": "Name it", "answers": ["adnet", "AdNet"]},
     "Quiz: “Name it” — answer adnet or AdNet, typed."),
    (TaskKind.VISIT_URL, {"url": "https://shop.example/", "minDwellMs": 8000},
     "Visit a page: https://shop.example/, staying at least 8 seconds."),
    (TaskKind.SIGN_MESSAGE, {"message": "I like adnet {nonce}"}, "Sign a message: “I like adnet {nonce}”."),
    (TaskKind.POLL, {"question": "Best chain?",
                     "options": [{"id": "a", "label": "Celo"}, {"id": "b", "label": "Base"}]},
     "Poll: “Best chain?” — options Celo, Base."),
    (TaskKind.FEEDBACK, {"question": "How was it?"},
     "Feedback: “How was it?” — a rating from 1 to 5 and a text of up to 1000 characters."),
    (TaskKind.SURVEY, {"questions": [{"id": "q1", "type": "text", "prompt": "Why?"}]}, "Survey of 1 question: “Why?”."),
    (TaskKind.ONCHAIN_EVENT, {"contract": GS, "eventTopic": TRANSFER_TOPIC, "call": transfer_call(RECIPIENT, 10**18)},
     "On-chain: Send G$ (a Transfer of the G$ token), 1 confirmation; the embed prepares a transfer of 1 G$ to "
     f"{SHOWN}."),
    (TaskKind.ONCHAIN_EVENT, {"contract": RECIPIENT, "eventTopic": TRANSFER_TOPIC, "confirmations": 3,
                              "call": {"data": "0xdeadbeef", "value": "5"}},
     f"On-chain: a transaction to {SHOWN} that emits the event {TRANSFER_TOPIC}, "
     "3 confirmations; the embed prepares a call of 4 bytes sending 5 wei."),
])
def test_each_kind_reads_in_words(kind, config, words):
    assert task_summary(kind, config, CHOICES) == words
