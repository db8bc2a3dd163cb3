"""The database itself refuses the duplicates that would count or pay something twice."""

from __future__ import annotations

import secrets
from datetime import timedelta
from decimal import Decimal

import pytest
from tortoise.exceptions import IntegrityError
from tortoise.transactions import in_transaction

from adnet.accounts.models import Publisher, Site, VerifiedDomain
from adnet.core.ids import new_id
from adnet.delivery.models import DedupKey, EventType
from adnet.interactions.models import Interaction
from adnet.money.models import Claim, ClaimPurpose, Deposit, LedgerTransaction
from adnet.tasks.models import Completion, TaskAttempt, TaskKind
from tests.factories import make_campaign, make_publisher, make_site, make_task, wallet_address

TX_HASH = "0x" + "ab" * 32


async def insert_twice(create) -> None:
    """The first insert succeeds; the second, in its own transaction, is refused by a unique key."""
    await create()
    with pytest.raises(IntegrityError):
        async with in_transaction():
            await create()


async def test_dedup_key_is_unique_per_fingerprint_campaign_and_type(app, clock):
    campaign = await make_campaign()

    async def key(event_type=EventType.IMPRESSION):
        return await DedupKey.create(fingerprint="fp-1", campaign_id=campaign.id, type=event_type,
                                     last_accepted_at=clock.now())

    await insert_twice(key)
    await key(EventType.CLICK)
    assert await DedupKey.all().count() == 2


def claim_fields(clock, **overrides):
    fields = {
        "id": new_id("clm"), "claim_ref": "0x" + "01" * 32, "purpose": ClaimPurpose.COMPLETION, "chain_id": 1,
        "vault": "0x" + "aa" * 20, "signer": "0x" + "bb" * 20, "nonce": 7, "recipient": wallet_address(),
        "token": "0x" + "cc" * 20, "token_symbol": "G$", "amount": Decimal(10**18),
        "deadline": int((clock.now() + timedelta(days=7)).timestamp()), "signature": "0x" + "00" * 65,
        "created_at": clock.now(),
    }
    return {**fields, **overrides}


async def test_a_claim_ref_is_stored_once(app, clock):
    nonces = iter(range(100))
    await insert_twice(lambda: Claim.create(**claim_fields(clock, id=new_id("clm"), nonce=next(nonces))))


async def test_a_signer_never_uses_a_nonce_twice(app, clock):
    claim_refs = (f"0x{index:064x}" for index in range(100))
    await insert_twice(lambda: Claim.create(**claim_fields(clock, id=new_id("clm"), claim_ref=next(claim_refs))))


async def test_a_deposit_transaction_is_recorded_once(app, clock):
    site = await make_site()

    async def deposit():
        return await Deposit.create(
            id=new_id("dep"), tx_hash=TX_HASH, log_index=0, block_number=5, sender=wallet_address(),
            token="0x" + "cc" * 20, token_symbol="G$", amount=Decimal(10**18), account_ref="0x" + "dd" * 32,
            site=site, created_at=clock.now())

    await insert_twice(deposit)


async def test_one_completion_per_wallet_and_task_by_default(app, clock):
    task = await make_task(kind=TaskKind.QUIZ, campaign=await make_campaign(),
                           config={"question": "Q?", "answers": ["a"]})
    wallet = wallet_address()

    async def completion(fingerprint: str):
        return await Completion.create(id=new_id("tc"), task=task, wallet=wallet, fingerprint=fingerprint,
                                       points=10, gs_amount=Decimal(0), created_at=clock.now())

    await completion("fp-1")
    with pytest.raises(IntegrityError):
        async with in_transaction():
            await completion("fp-2")


async def test_one_completion_per_fingerprint_and_task_by_default(app, clock):
    task = await make_task(kind=TaskKind.QUIZ, campaign=await make_campaign(),
                           config={"question": "Q?", "answers": ["a"]})

    await insert_twice(lambda: Completion.create(id=new_id("tc"), task=task, wallet=wallet_address(),
                                                 fingerprint="fp-1", points=10, gs_amount=Decimal(0),
                                                 created_at=clock.now()))


async def test_an_onchain_proof_transaction_counts_once(app, clock):
    task = await make_task(kind=TaskKind.ONCHAIN_EVENT, campaign=await make_campaign(), config={
        "contract": "0x" + "ee" * 20, "eventTopic": "0x" + "ff" * 32})

    await insert_twice(lambda: Completion.create(id=new_id("tc"), task=task, wallet=wallet_address(),
                                                 fingerprint=secrets.token_hex(8), tx_hash=TX_HASH, points=10,
                                                 gs_amount=Decimal(0), created_at=clock.now()))


async def test_one_interaction_per_unit_and_respondent(app, clock):
    site = await make_site()
    unit = await make_task(kind=TaskKind.POLL, config={"question": "Q?", "options": [
        {"id": "a", "label": "A"}, {"id": "b", "label": "B"}]})

    await insert_twice(lambda: Interaction.create(id=new_id("int"), unit=unit, site=site, respondent="fp:abc",
                                                  fingerprint="abc", answers={"optionId": "a"},
                                                  created_at=clock.now()))


async def test_one_interaction_per_unit_device_and_slot(app, clock):
    site = await make_site()
    unit = await make_task(kind=TaskKind.POLL, max_per_fingerprint=2, config={"question": "Q?", "options": [
        {"id": "a", "label": "A"}, {"id": "b", "label": "B"}]})

    async def response(slot: int):
        return await Interaction.create(id=new_id("int"), unit=unit, site=site, respondent=wallet_address(),
                                        fingerprint="abc", fingerprint_slot=slot, answers={"optionId": "a"},
                                        created_at=clock.now())

    await insert_twice(lambda: response(0))
    await response(1)  # the device's next slot, another wallet
    assert await Interaction.filter(unit_id=unit.id, fingerprint="abc").count() == 2


async def test_a_quiz_try_holds_a_number_of_its_wallet_and_one_of_its_device(app, clock):
    task = await make_task(kind=TaskKind.QUIZ, config={"question": "Q?", "answers": ["a"]})
    wallet = wallet_address()
    await TaskAttempt.create(task=task, wallet=wallet, attempt=1, fingerprint="fp", fingerprint_attempt=1,
                             created_at=clock.now())
    for other_wallet, other_fingerprint in ((wallet, "fp-2"), (wallet_address(), "fp")):
        with pytest.raises(IntegrityError):
            async with in_transaction():
                await TaskAttempt.create(task=task, wallet=other_wallet, attempt=1, fingerprint=other_fingerprint,
                                         fingerprint_attempt=1, created_at=clock.now())
    assert await TaskAttempt.filter(task_id=task.id).count() == 1


async def test_a_ledger_transaction_is_booked_once_per_reference(app, clock):
    await insert_twice(lambda: LedgerTransaction.create(id=new_id("ltx"), kind="billing", reference="ev_1",
                                                        created_at=clock.now()))


async def test_a_wallet_is_one_publisher_and_a_domain_one_site_per_publisher(app, clock):
    wallet = wallet_address()
    await insert_twice(lambda: Publisher.create(id=new_id("pub"), wallet=wallet, created_at=clock.now()))
    publisher = await make_publisher()
    await insert_twice(lambda: Site.create(id=new_id("site"), publisher=publisher, domain="news.example",
                                           created_at=clock.now()))
    await Site.create(id=new_id("site"), publisher=await make_publisher(), domain="news.example",
                      created_at=clock.now())  # another publisher's registration of it is no duplicate


async def test_one_site_holds_a_domain_verified(app, clock):
    sites = [await make_site(domain="news.example", verified=False) for _ in range(2)]
    await insert_twice(lambda: VerifiedDomain.create(domain="news.example", site_id=sites[0].id,
                                                     verified_at=clock.now()))
    with pytest.raises(IntegrityError):
        async with in_transaction():
            await VerifiedDomain.create(domain="news.example", site_id=sites[1].id, verified_at=clock.now())
