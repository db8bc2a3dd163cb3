"""The watcher applies each vault event once, after its confirmations, across restarts; the expired claims job
expires claims by the chain's own time; on the embedded development chain and on anvil."""

from __future__ import annotations

from adnet.chain.client import ChainClient
from adnet.chain.models import ChainCursor
from adnet.chain.watcher import Watcher
from adnet.money import claims, ledger, vault_events
from adnet.money.holders import account_ref
from adnet.money.models import Claim, ClaimStatus, Deposit, DepositStatus, LedgerTransaction
from tests.chain.conftest import ON_BOTH_CHAINS
from tests.chain.helpers import G, advance_chain_time, deposit, funded_claim, mine, redeem, user, watcher
from tests.factories import make_advertiser, make_site

pytestmark = ON_BOTH_CHAINS


def with_confirmations(chain: ChainClient, confirmations: int) -> ChainClient:
    return ChainClient(chain.w3, chain.deployment, signer=chain.signer,
                       claim_deadline_seconds=chain.claim_deadline_seconds, confirmations=confirmations)


async def test_a_deposit_is_credited_once_across_watcher_restarts(chain, clock):
    site = await make_site()
    await deposit(chain, user(2), 7 * G, account_ref(site.id))

    first = await watcher(chain, clock).run_once()
    assert first.deposits_credited == 1
    assert await ledger.balance(ledger.site(site.id)) == 7 * G

    restarted = await watcher(chain, clock).run_once()
    assert restarted.deposits_credited == 0
    await ChainCursor.all().delete()  # a watcher that lost its cursor reads everything again
    replayed = await watcher(chain, clock).run_once()
    assert replayed.deposits_credited == 0

    assert await ledger.balance(ledger.site(site.id)) == 7 * G
    assert await LedgerTransaction.filter(kind="deposit").count() == 1
    stored = await Deposit.get()
    assert (stored.status, stored.sender, int(stored.amount)) == (DepositStatus.CREDITED, user(2).address.lower(),
                                                                  7 * G)


async def test_a_pass_within_a_budget_stops_after_its_range_and_the_next_goes_on(chain, clock):
    site = await make_site()
    await deposit(chain, user(2), 7 * G, account_ref(site.id))
    confirmed = await chain.block_number() - chain.confirmations
    stepper = Watcher(chain, apply=lambda event: vault_events.apply(event, clock.now()), block_range=1)
    reports = [await stepper.run_once(budget=0.0)]
    while reports[-1].to_block is not None and reports[-1].to_block < confirmed:
        reports.append(await stepper.run_once(budget=0.0))

    assert [report.to_block for report in reports] == list(range(chain.deployment.deployed_block, confirmed + 1))
    assert sum(report.deposits_credited for report in reports) == 1
    assert await ledger.balance(ledger.site(site.id)) == 7 * G


async def test_deposits_wait_for_their_confirmations(chain, clock):
    site = await make_site()
    cautious = with_confirmations(chain, 2)
    await deposit(chain, user(2), G, account_ref(site.id))
    follower = watcher(cautious, clock)
    assert (await follower.run_once()).deposits_credited == 0
    await mine(chain)
    assert (await follower.run_once()).deposits_credited == 0
    await mine(chain)
    assert (await follower.run_once()).deposits_credited == 1
    assert await ledger.balance(ledger.site(site.id)) == G


async def test_advertiser_and_unknown_accounts(chain, clock):
    advertiser = await make_advertiser()
    await deposit(chain, user(3), 2 * G, account_ref(advertiser.id), symbol="SOV")
    await deposit(chain, user(3), G, "0x" + "00" * 31 + "01")
    report = await watcher(chain, clock).run_once()
    assert report.deposits_credited == 1
    assert await ledger.balance(ledger.advertiser(advertiser.id, "SOV")) == 2 * G
    unknown = await Deposit.get(account_ref="0x" + "00" * 31 + "01")
    assert unknown.status == DepositStatus.PENDING
    assert await LedgerTransaction.filter(kind="deposit").count() == 1


async def test_a_redeemed_claim_is_confirmed_from_the_chain_once(chain, clock):
    claim = await funded_claim(chain, clock, recipient=user(1).address, amount=2 * G)
    await redeem(chain, claim, user(1))
    assert (await watcher(chain, clock).run_once()).claims_redeemed == 1
    assert (await watcher(chain, clock).run_once()).claims_redeemed == 0
    await claim.refresh_from_db()
    assert claim.status == ClaimStatus.REDEEMED
    assert await ledger.balance(ledger.outstanding_claims("G$")) == 0
    assert await LedgerTransaction.filter(kind="claim_redeem").count() == 1


async def test_claims_expire_by_the_chain_time(chain, clock):
    pool = ledger.AccountKey("task", "task_expiring", "G$")
    claim = await funded_claim(chain, clock, recipient=user(1).address, amount=G, pool=pool)
    assert await claims.release_expired(chain) == 0
    await advance_chain_time(chain, chain.claim_deadline_seconds + 60)
    assert await claims.release_expired(chain) == 1
    assert await claims.release_expired(chain) == 0
    assert (await Claim.get(id=claim.id)).status == ClaimStatus.EXPIRED
    assert await ledger.balance(pool) == G
