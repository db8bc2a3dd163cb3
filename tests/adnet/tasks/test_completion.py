"""Reward reservation and completion limits without HTTP: which budget pays, all or nothing, a record paid once,
and exactly one completion out of many identical ones."""

from __future__ import annotations

import asyncio

import pytest
from tortoise.transactions import in_transaction

from adnet.core.errors import DomainError, NotFound
from adnet.core.ids import new_id
from adnet.money import ledger
from adnet.money.claims import claim_ref_for
from adnet.money.models import Claim, ClaimPurpose, LedgerTransaction
from adnet.money.rewards import Reward, reserve_and_claim, reserve_and_claim_many
from adnet.tasks.commands import CompleteTask
from adnet.tasks.completion import complete_task, reward_sources
from adnet.tasks.models import Completion, TaskKind
from tests.factories import G, fund, make_campaign, make_site, make_task, wallet_address
from tests.sql import recorded_statements


async def reserve(chain, clock, sources, amount=G, record_id=None, recipient=None):
    async with in_transaction():
        return await reserve_and_claim(purpose=ClaimPurpose.COMPLETION, record_id=record_id or new_id("tc"),
                                       recipient=recipient or wallet_address(), amount=amount, sources=sources,
                                       now=clock.now(), chain=chain)


async def test_the_first_source_holding_the_whole_amount_pays(app, clock):
    chain = app.extensions["adnet"].chain
    pool, budget = ledger.task_pool(new_id("task")), ledger.campaign(new_id("cmp"))
    await fund(pool, G // 2, now=clock.now())
    await fund(budget, 2 * G, now=clock.now())
    record_id = new_id("tc")
    claim = await reserve(chain, clock, [pool, budget], record_id=record_id)
    assert claim is not None and claim.claim_ref == claim_ref_for("completion", record_id)
    # A pool that cannot pay the whole reward pays nothing: no partial payments.
    assert await ledger.balance(pool) == G // 2
    assert await ledger.balance(budget) == G


async def test_no_claim_when_nothing_can_pay_or_nothing_is_owed(app, clock):
    chain = app.extensions["adnet"].chain
    pool = ledger.task_pool(new_id("task"))
    await fund(pool, G - 1, now=clock.now())
    assert await reserve(chain, clock, [pool]) is None
    assert await reserve(chain, clock, []) is None
    assert await reserve(chain, clock, [pool], amount=0) is None
    assert await Claim.all().count() == 0
    assert not await LedgerTransaction.filter(kind="claim_issue").exists()
    assert await ledger.balance(pool) == G - 1


async def test_a_record_is_paid_once(app, clock):
    chain = app.extensions["adnet"].chain
    pool = ledger.task_pool(new_id("task"))
    await fund(pool, 5 * G, now=clock.now())
    record_id, recipient = new_id("tc"), wallet_address()
    first = await reserve(chain, clock, [pool], record_id=record_id, recipient=recipient)
    again = await reserve(chain, clock, [pool], record_id=record_id, recipient=recipient)
    assert first is not None and again is not None and first.id == again.id
    assert await ledger.balance(pool) == 4 * G


async def test_rewards_reserved_together_are_paid_as_one_by_one(app, clock):
    """In turn, each reward from the first source that still holds all of it: the pool pays two, the budget the
    third, nothing the fourth; nothing is owed for the fifth."""
    chain = app.extensions["adnet"].chain
    pool, budget = ledger.task_pool(new_id("task")), ledger.campaign(new_id("cmp"))
    await fund(pool, 2 * G + G // 2, now=clock.now())
    await fund(budget, G, now=clock.now())
    rewards = [Reward(new_id("tc"), wallet_address(), amount, [pool, budget], clock.now())
               for amount in (G, G, G, G, 0)]
    async with in_transaction():
        claims = await reserve_and_claim_many(ClaimPurpose.COMPLETION, rewards, chain=chain)
    assert [claim is not None for claim in claims] == [True, True, True, False, False]
    assert [claim.claim_ref for claim in claims[:3]] == [claim_ref_for("completion", reward.record_id)
                                                         for reward in rewards[:3]]
    assert await ledger.balance(pool) == G // 2 and await ledger.balance(budget) == 0
    async with in_transaction():
        assert await reserve_and_claim_many(ClaimPurpose.COMPLETION, rewards[3:], chain=chain) == [None, None]


async def test_a_task_pays_from_its_pool_then_its_campaign(app):
    campaign = await make_campaign()
    attached = await make_task(kind=TaskKind.QUIZ, campaign=campaign, config={"question": "Q?", "answers": ["a"]})
    alone = await make_task(kind=TaskKind.QUIZ, config={"question": "Q?", "answers": ["a"]})
    assert reward_sources(attached) == [ledger.task_pool(attached.id), ledger.campaign(campaign.id)]
    assert reward_sources(alone) == [ledger.task_pool(alone.id)]


async def test_thirty_identical_completions_at_once_make_one(app, clock):
    chain = app.extensions["adnet"].chain
    task = await make_task(kind=TaskKind.QUIZ, config={"question": "Q?", "answers": ["a"]}, pool=10 * G)
    wallet = wallet_address()

    async def attempt():
        try:
            return await complete_task(CompleteTask(task_id=task.id, wallet=wallet, fingerprint="fp",
                                                    proof={"answer": "a"}),
                                       now=clock.now(), chain=chain)
        except DomainError as refusal:
            return refusal

    results = await asyncio.gather(*(attempt() for _ in range(30)))
    refusals = [result for result in results if isinstance(result, DomainError)]
    assert len(results) - len(refusals) == 1
    assert {refusal.code for refusal in refusals} <= {"already_completed", "too_many_attempts"}
    assert await Completion.filter(task_id=task.id).count() == 1
    assert await Claim.all().count() == 1
    assert await ledger.balance(ledger.task_pool(task.id)) == 9 * G


async def test_a_completion_reads_once_before_its_write(app, clock):
    """The task, its campaign's window, the site and the wallet's and device's earlier completions are one read."""
    chain = app.extensions["adnet"].chain
    campaign = await make_campaign()
    task = await make_task(kind=TaskKind.QUIZ, campaign=campaign, config={"question": "Q?", "answers": ["a"]},
                           pool=10 * G, max_per_wallet=2)
    site, wallet = await make_site(), wallet_address()
    for fingerprint in ("fp-1", "fp-2"):
        with recorded_statements() as sent:
            await complete_task(CompleteTask(task_id=task.id, wallet=wallet, fingerprint=fingerprint,
                                             proof={"answer": "a"},
                                site_id=site.id), now=clock.now(), chain=chain)
        first_write = next(number for number, sql in enumerate(sent) if not sql.startswith("SELECT"))
        assert first_write == 1, sent[:first_write]
    slots = await Completion.filter(task_id=task.id).order_by("wallet_slot").values_list("wallet_slot", "site_id")
    assert slots == [(0, site.id), (1, site.id)]
    with pytest.raises(DomainError) as repeat:
        await complete_task(CompleteTask(task_id=task.id, wallet=wallet, fingerprint="fp-3", proof={"answer": "a"}),
                            now=clock.now(), chain=chain)
    assert repeat.value.code == "already_completed"


async def test_an_unknown_site_is_refused_before_anything_of_the_task(app, clock):
    chain = app.extensions["adnet"].chain
    task = await make_task(kind=TaskKind.QUIZ, config={"question": "Q?", "answers": ["a"]}, active=False)
    site = await make_site()
    for task_id, site_id in ((task.id, "site_unknownunknownunkn"), ("task_unknownunknownunk", "site_unknownunknown"),
                             ("nottask", "site_unknownunknown"), (task.id, "notasite")):
        with pytest.raises(DomainError) as refused:
            await complete_task(CompleteTask(task_id=task_id, wallet=wallet_address(), fingerprint="fp",
                                             proof={"answer": "a"},
                                site_id=site_id), now=clock.now(), chain=chain)
        assert (type(refused.value), refused.value.message) == (NotFound, "No such site."), refused.value
    for task_id, expected in ((task.id, "task_inactive"), ("task_unknownunknownunk", "not_found")):
        with pytest.raises(DomainError) as refused:
            await complete_task(CompleteTask(task_id=task_id, wallet=wallet_address(), fingerprint="fp",
                                             proof={"answer": "a"},
                                site_id=site.id), now=clock.now(), chain=chain)
        assert refused.value.code == expected
