"""Verifier rules without HTTP: the registry, answer normalisation, attempt numbers under concurrency, message
rendering, and proofs used up at most once."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import pytest
from eth_account import Account

from adnet.tasks.config import PROOF_KEYS, parse_config
from adnet.tasks.messages import render_message, use_nonce
from adnet.tasks.models import TaskAttempt, TaskKind, TaskMessageNonce, TaskVisit
from adnet.tasks.verifiers import VERIFIERS, Attempt, ProofRejected
from adnet.tasks.verifiers.quiz import normalize_answer, take_attempt
from tests.factories import make_task, wallet_address

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def test_every_cta_kind_has_one_verifier_taking_the_spec_proof_keys():
    assert set(VERIFIERS) == set(PROOF_KEYS) == {TaskKind.VISIT_URL, TaskKind.SIGN_MESSAGE, TaskKind.ONCHAIN_EVENT,
                                                 TaskKind.QUIZ}
    assert all(verifier.kind is kind for kind, verifier in VERIFIERS.items())


@pytest.mark.parametrize(("given", "expected"), [
    ("  GoodDollar  ", "gooddollar"),
    ("\uff27\uff44", "gd"),  # fullwidth letters fold to ASCII under NFKC
    ("STRASSE", "strasse"),
    ("Straße", "strasse"),  # case folding, not just lower-casing
    ("ﬁve", "five"),  # the fi ligature
    ("\tG$\n", "g$"),
])
def test_answers_are_trimmed_case_folded_and_nfkc(given, expected):
    assert normalize_answer(given) == expected


async def test_attempt_numbers_hold_the_limit_under_concurrency(app):
    task = await make_task(kind=TaskKind.QUIZ, config={"question": "Q?", "answers": ["a"]})
    wallet = wallet_address()
    taken = await asyncio.gather(*(take_attempt(task.id, wallet, "fp", 3, NOW) for _ in range(12)))
    slots = sorted(result[0].attempt for result in taken if result is not None)
    assert slots == [1, 2, 3]
    assert await TaskAttempt.filter(task_id=task.id, wallet=wallet).count() == 3
    # A given-back number (a correct answer) is the next one taken.
    await TaskAttempt.filter(task_id=task.id, wallet=wallet, attempt=2).delete()
    result = await take_attempt(task.id, wallet, "fp", 3, NOW)
    assert result is not None and (result[0].attempt, result[0].fingerprint_attempt, result[1]) == (2, 2, 3)
    assert await take_attempt(task.id, wallet, "fp", 3, NOW) is None


async def test_a_devices_attempt_numbers_hold_the_limit_whatever_the_wallets(app):
    """Twelve tries at once from one device, each with a fresh wallet: three get a number of the device; the rest
    find none free, though each of their wallets has all its numbers."""
    task = await make_task(kind=TaskKind.QUIZ, config={"question": "Q?", "answers": ["a"]})
    taken = await asyncio.gather(*(take_attempt(task.id, wallet_address(), "fp", 3, NOW) for _ in range(12)))
    assert sorted(result[0].fingerprint_attempt for result in taken if result is not None) == [1, 2, 3]
    assert [result[0].attempt for result in taken if result is not None] == [1, 1, 1]
    assert await TaskAttempt.filter(task_id=task.id, fingerprint="fp").count() == 3
    assert await take_attempt(task.id, wallet_address(), "fp", 3, NOW) is None
    assert await take_attempt(task.id, wallet_address(), "another-fp", 3, NOW) is not None


def test_messages_show_the_wallet_in_its_checksum_form():
    account = Account.create()
    text = render_message("Wallet: {wallet}\nNonce: {nonce}\n{nonce}", account.address.lower(), "abc")
    assert text == f"Wallet: {account.address}\nNonce: abc\nabc"


async def test_a_nonce_is_used_once_and_only_by_its_wallet_and_task(app):
    task = await make_task(kind=TaskKind.SIGN_MESSAGE, config={"message": "{nonce}"})
    wallet = wallet_address()
    await TaskMessageNonce.create(nonce="n1", task=task, wallet=wallet, created_at=NOW,
                                  expires_at=NOW.replace(hour=1))
    assert await use_nonce("n1", task.id, wallet_address(), NOW) is False
    results = await asyncio.gather(*(use_nonce("n1", task.id, wallet, NOW) for _ in range(10)))
    assert results.count(True) == 1


async def test_a_visit_is_used_up_by_one_completion(app, clock):
    task = await make_task(kind=TaskKind.VISIT_URL, config={"url": "https://advertiser.example/"})
    await TaskVisit.create(task=task, fingerprint="fp", started_at=clock.now())
    clock.advance(seconds=10)
    attempt = Attempt(task=task, config=parse_config(task.kind, task.config), wallet=wallet_address(),
                      fingerprint="fp", proof={"dwellMs": 6000}, now=clock.now(), chain=None)  # type: ignore[arg-type]
    first = await VERIFIERS[TaskKind.VISIT_URL].verify(attempt)
    second = await VERIFIERS[TaskKind.VISIT_URL].verify(attempt)
    assert first.consume is not None and second.consume is not None
    await first.consume()
    with pytest.raises(ProofRejected) as refused:
        await second.consume()
    assert refused.value.reason == "visit_not_started"
