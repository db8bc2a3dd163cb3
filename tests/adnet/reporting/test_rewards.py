"""A wallet's rewards without HTTP: its completions and answers newest first with their claims, its points and G$
in total, and as redeemable only its own issued reward claims whose deadline is ahead."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

from adnet.core.ids import new_id
from adnet.interactions.models import Interaction
from adnet.money import ledger
from adnet.money.claims import claim_ref_for, issue_claim
from adnet.money.models import ClaimPurpose
from adnet.reporting.rewards import wallet_rewards
from adnet.tasks.models import Completion, TaskKind
from tests.chain.helpers import funded_claim
from tests.factories import G, fund, make_site, make_task, wallet_address


async def completed(task, wallet: str, now, *, points: int, claim=None) -> Completion:
    """A completion of ``task`` by ``wallet`` (each in a slot of its own, as a task allowing repeats gives)."""
    slot = await Completion.filter(task=task, wallet=wallet).count()
    return await Completion.create(id=new_id("tc"), task=task, wallet=wallet, wallet_slot=slot,
                                   fingerprint=f"fp-{wallet}-{slot}", points=points,
                                   gs_amount=Decimal(int(claim.amount) if claim else 0), claim=claim, created_at=now)


async def test_a_wallets_rewards_totals_and_redeemable_claims(app, chain, clock):
    wallet, stranger = wallet_address(), wallet_address()
    task = await make_task(kind=TaskKind.VISIT_URL, config={"url": "https://advertiser.example/"})
    unit = await make_task(kind=TaskKind.POLL, config={"question": "?", "options": []})
    old_claim = await funded_claim(chain, clock, recipient=wallet, amount=G)
    first = await completed(task, wallet, clock.now(), points=5, claim=old_claim)
    clock.advance(days=8)  # the first claim's deadline has passed
    fresh_claim = await funded_claim(chain, clock, recipient=wallet, amount=2 * G)
    second = await completed(task, wallet, clock.now(), points=7, claim=fresh_claim)
    clock.advance(seconds=1)
    answer = await Interaction.create(id=new_id("int"), unit=unit, site=await make_site(), respondent=wallet,
                                      wallet=wallet, fingerprint="fp-x", answers={}, points=3, created_at=clock.now())
    await completed(task, stranger, clock.now(), points=100,
                    claim=await funded_claim(chain, clock, recipient=stranger, amount=G))
    await fund(ledger.site("site_x"), G)
    await issue_claim(purpose=ClaimPurpose.WITHDRAWAL, recipient=wallet, token_symbol="G$", amount=G,
                      claim_ref=claim_ref_for("withdrawal", new_id("wd")), sources=[(ledger.site("site_x"), G)],
                      now=clock.now(), chain=chain)  # a publisher's withdrawal is no viewer's reward

    found = await wallet_rewards(wallet, clock.now())
    assert (found.points, found.gs_earned) == (15, 3 * G)
    assert [(reward.source, reward.record_id) for reward in found.rewards] == [
        ("unit", answer.id), ("task", second.id), ("task", first.id)]
    assert [reward.redeemable for reward in found.rewards] == [False, True, False]
    assert [claim.claim_ref for claim in found.redeemable] == [fresh_claim.claim_ref]
    assert found.rewards[2].claim.claim_ref == old_claim.claim_ref

    nobody = await wallet_rewards(wallet_address(), clock.now() + timedelta(seconds=1))
    assert (nobody.points, nobody.gs_earned, nobody.rewards, nobody.redeemable) == (0, 0, [], [])
