"""The ledger audit passes on honest books and names each kind of damage; ``adnet audit`` exits non-zero on it."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from decimal import Decimal

from tortoise.transactions import in_transaction

from adnet.chain.deploy import DEV_VAULT_FUNDING
from adnet.core.ids import new_id
from adnet.money import ledger
from adnet.money.audit import audit
from adnet.money.models import ClaimPurpose, LedgerAccount, LedgerPosting, LedgerTransaction
from tests.chain.helpers import funded_claim, user
from tests.factories import G, fund, make_campaign, make_site


async def honest_books(clock) -> None:
    """A campaign paying a site and the platform, and a site balance."""
    campaign = await make_campaign(budget=50 * G, now=clock.now())
    site = await make_site(now=clock.now())
    async with in_transaction():
        await ledger.book("billing", new_id("ev"), [(ledger.campaign(campaign.id), -G),
                                                    (ledger.site(site.id), 7 * G // 10),
                                                    (ledger.platform("G$"), 3 * G // 10)], now=clock.now())


async def test_honest_books_covered_by_the_vault_pass(app, chain, clock):
    await honest_books(clock)
    await funded_claim(chain, clock, recipient=user(1).address)

    report = await audit(chain)

    assert report.ok, report.problems
    assert report.liabilities["G$"] == 51 * G
    assert report.vault_holdings["G$"] == DEV_VAULT_FUNDING
    assert report.transactions == 4


async def test_an_unbalanced_transaction_is_named(app, clock):
    await honest_books(clock)
    posting = await LedgerPosting.filter(amount=Decimal(3 * G // 10)).first()
    await LedgerPosting.filter(id=posting.id).update(amount=Decimal(G))

    problems = (await audit(None)).problems

    assert any("does not balance" in problem for problem in problems)
    assert any("platform::G$ holds" in problem for problem in problems)


async def test_a_balance_that_is_not_its_postings_is_named(app, clock):
    await honest_books(clock)
    await LedgerAccount.filter(kind="site").update(balance=Decimal(5 * G))

    problems = (await audit(None)).problems

    assert any(problem.startswith("account site:") and "postings sum to" in problem for problem in problems)


async def test_a_transaction_without_postings_is_named(app, clock):
    await LedgerTransaction.create(id=new_id("ltx"), kind="billing", reference="ev_orphan", created_at=clock.now())

    assert (await audit(None)).problems == ["transaction billing:ev_orphan has no postings"]


async def test_claims_account_must_match_outstanding_claims(app, chain, clock):
    claim = await funded_claim(chain, clock, recipient=user(2).address)
    assert claim.purpose is ClaimPurpose.COMPLETION
    await type(claim).filter(id=claim.id).update(amount=Decimal(2 * G))

    problems = (await audit(chain)).problems

    assert problems == [f"G$: outstanding claims total {2 * G} but the claims account holds {G}"]


async def test_more_owed_than_the_vault_holds_is_named(app, chain, clock):
    await fund(ledger.advertiser("adv_x"), DEV_VAULT_FUNDING + 1, now=clock.now())

    problems = (await audit(chain)).problems

    assert problems == [f"G$: adnet owes {DEV_VAULT_FUNDING + 1} but the vault holds only {DEV_VAULT_FUNDING}"]


async def test_the_command_exits_non_zero_on_damage(app, settings, clock):
    await honest_books(clock)
    env = {**os.environ, "ADNET_ENV": "test", "ADNET_DATABASE_URL": settings.database_url,
           "ADNET_DATA_DIR": str(settings.data_dir), "ADNET_SECRET_KEY": settings.secret_key,
           "ADNET_TRACKING_SECRET": settings.tracking_secret, "ADNET_SIGNER_KEY": settings.signer_key}

    def run_audit() -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "adnet", "audit", "--no-chain"],
                              env=env, capture_output=True, text=True, timeout=120, check=False)

    passed = await asyncio.to_thread(run_audit)
    await LedgerAccount.filter(kind="platform").update(balance=Decimal(0))
    failed = await asyncio.to_thread(run_audit)

    assert passed.returncode == 0, passed.stderr
    assert passed.stdout.strip().endswith("audit passed")
    assert failed.returncode == 1
    assert "PROBLEM: account platform::G$ holds 0" in failed.stdout
