"""Completions through the app's group commit (``CompletionWriter``): many at once share transactions, each stays
all or nothing on its own, and the books come out exact."""

from __future__ import annotations

import asyncio

from adnet.money import ledger
from adnet.money.models import Claim, LedgerTransaction
from adnet.tasks.models import Completion, TaskAttempt, TaskKind
from tests.api.test_tasks import complete
from tests.api.test_tasks_verifiers import QUIZ
from tests.factories import G, make_task, wallet_address


async def test_the_app_writes_completions_through_its_running_writer(app):
    writer = app.extensions["adnet"].completions
    assert writer is not None and writer.committer.running


async def test_sixty_different_completions_at_once_are_each_paid_once(client):
    task = await make_task(kind=TaskKind.QUIZ, config=QUIZ, pool=70 * G)
    before = await ledger.balance(ledger.task_pool(task.id))
    wallets = [wallet_address() for _ in range(60)]
    results = await asyncio.gather(*(complete(client, task, wallet, f"fp-{number}", answer="G$")
                                     for number, wallet in enumerate(wallets)))
    assert [status for status, _ in results] == [201] * 60
    assert len({body["completionId"] for _, body in results}) == 60
    claims = await Claim.filter(claim_ref__in=[body["transaction"]["claimRef"] for _, body in results])
    assert len(claims) == 60 and len({claim.nonce for claim in claims}) == 60
    assert {claim.recipient for claim in claims} == set(wallets)
    assert await ledger.balance(ledger.task_pool(task.id)) == before - 60 * G
    assert await LedgerTransaction.filter(kind="claim_issue").count() == 60
    assert await TaskAttempt.all().count() == 0


async def test_a_refused_completion_in_a_shared_transaction_leaves_the_others_whole(client):
    """Twenty repeats of one completion among twenty different ones, all at once: a batch holding a refused repeat
    is written again one completion per transaction, so exactly twenty-one completions, claims and debits remain."""
    task = await make_task(kind=TaskKind.QUIZ, config=QUIZ, pool=40 * G)
    before = await ledger.balance(ledger.task_pool(task.id))
    repeated = wallet_address()
    requests = [complete(client, task, repeated, "fp-repeated", answer="G$") for _ in range(20)]
    requests += [complete(client, task, wallet_address(), f"fp-{number}", answer="G$") for number in range(20)]
    results = await asyncio.gather(*requests)
    repeats, others = results[:20], results[20:]
    assert [status for status, _ in others] == [201] * 20
    assert sorted(status for status, _ in repeats) == [201] + [409] * 19
    first = next(body for status, body in repeats if status == 201)
    assert {body["completionId"] for status, body in repeats if status == 409} == {first["completionId"]}
    assert {body["transaction"]["claimRef"] for status, body in repeats if status == 409} == {
        first["transaction"]["claimRef"]}
    assert await Completion.filter(task_id=task.id).count() == 21
    assert await Claim.all().count() == 21
    assert await ledger.balance(ledger.task_pool(task.id)) == before - 21 * G
