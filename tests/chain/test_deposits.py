"""A top-up is credited from a transaction hash only after the chain shows it is a confirmed G$ deposit to the
vault by the wallet for the site, and only once (KNOWN-HOLES 3)."""

from __future__ import annotations

import asyncio

import pytest

from adnet.chain.client import ChainClient
from adnet.chain.service import http_web3
from adnet.chain.transact import TransactionReverted, send_transaction
from adnet.core.errors import Conflict, DomainError, Invalid, NotFound, Unavailable
from adnet.money import ledger
from adnet.money.deposits import credit
from adnet.money.holders import Holder
from adnet.money.models import Deposit, DepositStatus, LedgerTransaction
from tests.chain.conftest import ON_BOTH_CHAINS
from tests.chain.helpers import G, deposit, mine, user, watcher
from tests.factories import make_site
from tests.ports import free_port

pytestmark = ON_BOTH_CHAINS


async def refused(call) -> DomainError:
    with pytest.raises(DomainError) as raised:
        await call
    return raised.value


def site_holder(site_id: str, wallet: str) -> Holder:
    return Holder("site", site_id, wallet.lower())


async def test_a_top_up_is_credited_once(chain, clock):
    """Posted again by its holder, the hash answers the same deposit, credited once; by anyone else, a conflict."""
    site, other_site = await make_site(), await make_site()
    holder = site_holder(site.id, user(2).address)
    receipt = await deposit(chain, user(2), 5 * G, holder.account_ref)
    tx_hash = receipt["transactionHash"].to_0x_hex()

    credited = await credit(holder, tx_hash, chain, clock.now())
    assert (credited.deposit.status, credited.credited_now) == (DepositStatus.CREDITED, True)
    assert await ledger.balance(ledger.site(site.id)) == 5 * G

    again = await credit(holder, tx_hash.upper().replace("0X", "0x"), chain, clock.now())
    assert (again.deposit.id, again.deposit.status, again.credited_now) == (
        credited.deposit.id, DepositStatus.CREDITED, False)
    for someone_else in (site_holder(other_site.id, user(2).address), site_holder(site.id, user(3).address)):
        error = await refused(credit(someone_else, tx_hash, chain, clock.now()))
        assert (type(error), error.code, error.details["depositId"]) == (
            Conflict, "already_credited", credited.deposit.id)
    assert (await watcher(chain, clock).run_once()).deposits_credited == 0
    assert await ledger.balance(ledger.site(site.id)) == 5 * G
    assert await ledger.balance(ledger.site(other_site.id)) == 0


async def test_an_unconfirmed_top_up_is_pending_until_confirmed(chain, clock):
    site = await make_site()
    holder = site_holder(site.id, user(2).address)
    cautious = ChainClient(chain.w3, chain.deployment, signer=chain.signer,
                           claim_deadline_seconds=chain.claim_deadline_seconds, confirmations=1)
    tx_hash = (await deposit(chain, user(2), G, holder.account_ref))["transactionHash"].to_0x_hex()

    pending = (await credit(holder, tx_hash, cautious, clock.now())).deposit
    assert pending.status == DepositStatus.PENDING
    assert await ledger.balance(ledger.site(site.id)) == 0
    await mine(chain)
    credited = await credit(holder, tx_hash, cautious, clock.now())
    assert (credited.deposit.id, credited.deposit.status, credited.credited_now) == (
        pending.id, DepositStatus.CREDITED, True)
    assert await ledger.balance(ledger.site(site.id)) == G


async def test_anything_but_this_wallets_deposit_for_this_site_is_refused(chain, clock):
    site, other_site = await make_site(), await make_site()
    holder = site_holder(site.id, user(2).address)
    ref = holder.account_ref
    approve = await send_transaction(chain.w3, user(2), chain.build_approve_tx(user(2).address, "G$", G))
    gs_deposit = (await deposit(chain, user(2), G, ref))["transactionHash"].to_0x_hex()
    sov_deposit = (await deposit(chain, user(2), G, ref, symbol="SOV"))["transactionHash"].to_0x_hex()
    with pytest.raises(TransactionReverted) as failed:  # no allowance left: the vault cannot pull the tokens
        await send_transaction(chain.w3, user(2), {**chain.build_deposit_tx(user(2).address, "G$", G, ref),
                                                   "gas": 200_000})

    other_holder = site_holder(other_site.id, user(2).address)
    cases = [
        (approve["transactionHash"].to_0x_hex(), holder, Invalid, "invalid_deposit"),
        (failed.value.receipt["transactionHash"].to_0x_hex(), holder, Invalid, "invalid_deposit"),
        (gs_deposit, site_holder(site.id, user(3).address), Invalid, "invalid_deposit"),
        (gs_deposit, other_holder, Invalid, "invalid_deposit"),
        (sov_deposit, holder, Invalid, "invalid_deposit"),
        ("0x" + "12" * 32, holder, NotFound, "transaction_not_found"),
    ]
    for tx_hash, claimed_by, kind, code in cases:
        error = await refused(credit(claimed_by, tx_hash, chain, clock.now()))
        assert (type(error), error.code) == (kind, code), (tx_hash, error.message)
    assert await Deposit.all().count() == 0
    assert await ledger.balance(ledger.site(site.id)) == 0


async def test_an_unreachable_chain_is_503_and_changes_nothing(chain, clock):
    site = await make_site()
    down = ChainClient(http_web3(f"http://127.0.0.1:{free_port()}"), chain.deployment, signer=chain.signer,
                       claim_deadline_seconds=chain.claim_deadline_seconds, confirmations=0)
    try:
        error = await refused(credit(site_holder(site.id, user(2).address), "0x" + "34" * 32, down, clock.now()))
    finally:
        await down.close()
    assert (type(error), error.code) == (Unavailable, "chain_unavailable")
    assert await Deposit.all().count() == 0


async def test_the_api_and_the_watcher_racing_credit_once(chain, clock):
    """Every post of the hash answers the one credited deposit, whoever credited it; it is credited once."""
    site = await make_site()
    holder = site_holder(site.id, user(2).address)
    tx_hash = (await deposit(chain, user(2), 3 * G, holder.account_ref))["transactionHash"].to_0x_hex()
    *posted, watched = await asyncio.gather(*(credit(holder, tx_hash, chain, clock.now()) for _ in range(5)),
                                            watcher(chain, clock).run_once())
    assert {(outcome.deposit.tx_hash, outcome.deposit.status) for outcome in posted} == {
        (tx_hash, DepositStatus.CREDITED)}
    assert sum(outcome.credited_now for outcome in posted) + watched.deposits_credited == 1
    assert await ledger.balance(ledger.site(site.id)) == 3 * G
    assert await LedgerTransaction.filter(kind="deposit").count() == 1
