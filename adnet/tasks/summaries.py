"""A task's settings in a sentence for a person: what an operator reads in the review queue instead of the stored
JSON and the prepared call's hex ("Quiz: “Which token…?” — answer G$ of G$, SOV, ETH"; "On-chain: Send G$ …; the
embed prepares a transfer of 1 G$ to 0x…").

Pure: it reads the config as ``adnet.tasks.config.parse_config`` has it (every stored config is valid) and the
on-chain actions of adnet's deployment (``adnet.tasks.choices``), which name a known contract and event and say
which token a prepared transfer moves. A contract or an event adnet does not know is named by its address or
topic; a prepared call that is not an ERC-20 ``transfer`` is named by its size.
"""

from __future__ import annotations

from typing import Any

from eth_abi import decode
from eth_abi.exceptions import DecodingError
from eth_hash.auto import keccak

from adnet.core.amounts import to_decimal_string
from adnet.core.wallets import checksummed
from adnet.tasks.choices import OnchainChoice, event_topic
from adnet.tasks.config import (
    FeedbackConfig,
    OnchainEventConfig,
    PollConfig,
    PreparedCall,
    QuizConfig,
    SignMessageConfig,
    SurveyConfig,
    VisitUrlConfig,
    parse_config,
)
from adnet.tasks.models import TaskKind

_TRANSFER = keccak(b"transfer(address,uint256)")[:4]
# The deployment's token transfer actions (``adnet.tasks.choices``) and the token each moves.
_TOKEN_OF_ACTION = {"gs-transfer": "G$", "sov-transfer": "SOV"}


def task_summary(kind: TaskKind, config: dict[str, Any], choices: list[OnchainChoice]) -> str:
    """The task of ``kind`` whose stored config is ``config``, in one sentence."""
    parsed = parse_config(kind, config)
    if isinstance(parsed, VisitUrlConfig):
        return f"Visit a page: {parsed.url}, staying at least {parsed.min_dwell_ms / 1000:g} seconds."
    if isinstance(parsed, SignMessageConfig):
        return f"Sign a message: “{parsed.message}”."
    if isinstance(parsed, QuizConfig):
        return _quiz(parsed)
    if isinstance(parsed, PollConfig):
        return f"Poll: “{parsed.question}” — options {', '.join(option.label for option in parsed.options)}."
    if isinstance(parsed, FeedbackConfig):
        return _feedback(parsed)
    if isinstance(parsed, SurveyConfig):
        prompts = "; ".join(f"“{question.prompt}”" for question in parsed.questions)
        return f"Survey of {len(parsed.questions)} question{'s' if len(parsed.questions) != 1 else ''}: {prompts}."
    if isinstance(parsed, OnchainEventConfig):
        return _onchain(parsed, choices)
    raise AssertionError(f"no summary for {kind}")


def _quiz(quiz: QuizConfig) -> str:
    answers = " or ".join(quiz.answers)
    if quiz.choices:
        return f"Quiz: “{quiz.question}” — answer {answers} of {', '.join(quiz.choices)}."
    return f"Quiz: “{quiz.question}” — answer {answers}, typed."


def _feedback(feedback: FeedbackConfig) -> str:
    parts = []
    if feedback.rating is not None:
        parts.append(f"a rating from {feedback.rating.min} to {feedback.rating.max}"
                     + ("" if feedback.rating.required else " (optional)"))
    if feedback.text is not None:
        parts.append(f"a text of up to {feedback.text.max_length} characters"
                     + (" (required)" if feedback.text.required else ""))
    return f"Feedback: “{feedback.question}” — {' and '.join(parts)}."


def _onchain(onchain: OnchainEventConfig, choices: list[OnchainChoice]) -> str:
    choice = next((known for known in choices if known.contract == onchain.contract
                   and event_topic(known.event) == onchain.event_topic), None)
    action = (choice.label if choice else
              f"a transaction to {checksummed(onchain.contract)} that emits the event {onchain.event_topic}")
    sentence = f"On-chain: {action}, {onchain.confirmations} confirmation{'s' if onchain.confirmations != 1 else ''}"
    if onchain.call is not None:
        token = _token_of(onchain.contract, choices)
        sentence += f"; the embed prepares {_call(onchain.call, token)}"
    return sentence + "."


def _token_of(contract: str, choices: list[OnchainChoice]) -> str | None:
    """The symbol of the token at ``contract`` when it is one of the deployment's."""
    return next((_TOKEN_OF_ACTION[choice.key] for choice in choices
                 if choice.contract == contract and choice.key in _TOKEN_OF_ACTION), None)


def _call(call: PreparedCall, token: str | None) -> str:
    """A prepared call: an ERC-20 transfer by its amount (in the token's units when the token is known, else in
    the smallest unit) and recipient, anything else by its size."""
    data = bytes.fromhex(call.data[2:])
    if data[:4] == _TRANSFER and len(data) == 68:
        try:
            recipient, amount = decode(["address", "uint256"], data[4:])
        except DecodingError:
            pass
        else:
            shown = f"{to_decimal_string(amount)} {token}" if token else f"{amount} smallest units of a token"
            return f"a transfer of {shown} to {checksummed(recipient)}"
    return f"a call of {len(data)} bytes" + (f" sending {call.value} wei" if call.value != "0" else "")
