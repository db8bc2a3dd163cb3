"""The completion writer's batches without HTTP: a batch shares its statements, and one whose shared transaction
fails is written again one completion per transaction, so only the completion that really fails is refused."""

from __future__ import annotations

import asyncio

from adnet.core.errors import DomainError
from adnet.money import ledger
from adnet.money.models import Claim
from adnet.tasks.commands import CompleteTask
from adnet.tasks.completion import CompletionWriter, complete_task
from adnet.tasks.models import Completion, TaskKind
from adnet.tasks.verifiers import VERIFIERS
from adnet.tasks.verifiers.base import Verified
from tests.factories import G, make_task, wallet_address
from tests.sql import recorded_statements

QUIZ = {"question": "Which token pays adnet rewards?", "answers": ["G$"], "choices": ["G$", "SOV"]}


async def completions_at_once(chain, clock, writer, task, wallets):
    return await asyncio.gather(*(complete_task(CompleteTask(task_id=task.id, wallet=wallet, fingerprint=f"fp-{number}",
                                                proof={"answer": "G$"}), now=clock.now(), chain=chain, writer=writer)
                                  for number, wallet in enumerate(wallets)), return_exceptions=True)


async def test_a_failed_shared_transaction_is_written_again_one_by_one(app, clock, monkeypatch):
    """The first write of one wallet's completion fails with an unexpected error: its batch's transaction rolls
    back, the batch is written again completion by completion, and all ten complete, each paid once."""
    chain = app.extensions["adnet"].chain
    task = await make_task(kind=TaskKind.QUIZ, config=QUIZ, pool=20 * G)
    before = await ledger.balance(ledger.task_pool(task.id))
    wallets = [wallet_address() for _ in range(10)]
    failed_once: set[str] = set()
    verifier = VERIFIERS[TaskKind.QUIZ]
    verify = verifier.verify

    async def flaky_verify(attempt):
        verified = await verify(attempt)
        if attempt.wallet != wallets[3]:
            return verified

        async def consume():
            await verified.consume()
            if attempt.wallet not in failed_once:
                failed_once.add(attempt.wallet)
                raise RuntimeError("lost the connection")

        return Verified(tx_hash=verified.tx_hash, consume=consume)

    monkeypatch.setattr(verifier, "verify", flaky_verify)
    writer = CompletionWriter()
    writer.committer.start()
    try:
        results = await completions_at_once(chain, clock, writer, task, wallets)
    finally:
        await writer.committer.stop()
    assert failed_once == {wallets[3]}
    assert not [result for result in results if isinstance(result, Exception)]
    assert await Completion.filter(task_id=task.id).count() == 10
    assert await Claim.all().count() == 10
    assert await ledger.balance(ledger.task_pool(task.id)) == before - 10 * G


async def test_a_refusal_in_a_batch_refuses_only_its_own_completion(app, clock):
    chain = app.extensions["adnet"].chain
    task = await make_task(kind=TaskKind.QUIZ, config=QUIZ, pool=20 * G)
    repeated = wallet_address()
    writer = CompletionWriter()
    writer.committer.start()
    try:
        results = await completions_at_once(chain, clock, writer, task, [repeated] * 5 + [
            wallet_address() for _ in range(5)])
    finally:
        await writer.committer.stop()
    refused = [result for result in results if isinstance(result, DomainError)]
    assert all(result.code == "already_completed" for result in refused)
    assert len(refused) == 4
    assert await Completion.filter(task_id=task.id).count() == 6
    assert await Claim.all().count() == 6


async def test_a_batch_writes_its_claims_bookings_and_completions_in_a_few_statements(app, clock):
    """Besides what each proof uses up (a right quiz answer: its attempt taken and given back), a batch of any size
    writes with seven statements: the nonces, the claims, the ledger transactions, the two accounts, the postings
    and the completions."""
    chain = app.extensions["adnet"].chain
    task = await make_task(kind=TaskKind.QUIZ, config=QUIZ, pool=20 * G)
    await complete_task(CompleteTask(task_id=task.id, wallet=wallet_address(), fingerprint="first",
                                     proof={"answer": "G$"}),
                        now=clock.now(), chain=chain)  # the signer's nonce row and the claims account exist now
    writer = CompletionWriter()
    commit, batches = writer.committer._commit, []

    async def counted(batch):
        with recorded_statements() as sent:
            results = await commit(batch)
        # Reads of other requests run meanwhile; the batch's own writes are the statements that are not reads.
        batches.append((len(batch), [sql for sql in sent if not sql.startswith("SELECT")]))
        return results

    writer.committer._commit = counted
    writer.committer.start()
    try:
        results = await completions_at_once(chain, clock, writer, task, [wallet_address() for _ in range(10)])
    finally:
        await writer.committer.stop()
    assert not [result for result in results if isinstance(result, Exception)]
    assert max(size for size, _ in batches) > 1
    for size, writes in batches:
        assert len(writes) == 2 * size + 7, writes
    assert await Completion.filter(task_id=task.id).count() == 11
    assert await ledger.balance(ledger.task_pool(task.id)) == 9 * G
