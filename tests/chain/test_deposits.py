"""A top-up is credited from a transaction hash only after the chain shows it is a confirmed G$ deposit to the
vault by the wallet for the site, and only once (KNOWN-HOLES 3)."""

from __future__ import annotations

import asyncio

import pytest

from adnet import ledger
from adnet.chain.client import ChainClient
from adnet.chain.service import http_web3
from adnet.chain.transact import TransactionReverted, send_transaction
from adnet.chain.watcher import Watcher
from adnet.deposits import account_ref_for_site, verify_and_record_deposit
from adnet.errors import ApiError
from adnet.models import Deposit, DepositStatus, LedgerTransaction
from tests.chain.conftest import ON_BOTH_CHAINS, free_port
from tests.chain.helpers import G, deposit, mine, user
from tests.factories import make_site

pytestmark = ON_BOTH_CHAINS


async def refused(call) -> ApiError:
    with pytest.raises(ApiError) as raised:
        await call
    return raised.value


async def test_a_top_up_is_credited_once(chain, clock):
    site = await make_site()
    ref = account_ref_for_site(site.id)
    receipt = await deposit(chain, user(2), 5 * G, ref)
    tx_hash = receipt["transactionHash"].to_0x_hex()

    credited = await verify_and_record_deposit(chain, tx_hash, user(2).address, ref, clock.now())
    assert credited.status == DepositStatus.CREDITED
    assert await ledger.balance(ledger.site(site.id)) == 5 * G

    again = await refused(verify_and_record_deposit(chain, tx_hash.upper().replace("0X", "0x"), user(2).address, ref,
                                                    clock.now()))
    assert (again.status, again.code, again.extra["depositId"]) == (409, "already_credited", credited.id)
    assert (await Watcher(chain, clock=clock).run_once()).deposits_credited == 0
    assert await ledger.balance(ledger.site(site.id)) == 5 * G


async def test_an_unconfirmed_top_up_is_pending_until_confirmed(chain, clock):
    site = await make_site()
    ref = account_ref_for_site(site.id)
    cautious = ChainClient(chain.w3, chain.deployment, signer=chain.signer,
                           claim_deadline_seconds=chain.claim_deadline_seconds, confirmations=1)
    tx_hash = (await deposit(chain, user(2), G, ref))["transactionHash"].to_0x_hex()

    pending = await verify_and_record_deposit(cautious, tx_hash, user(2).address, ref, clock.now())
    assert pending.status == DepositStatus.PENDING
    assert await ledger.balance(ledger.site(site.id)) == 0
    await mine(chain)
    credited = await verify_and_record_deposit(cautious, tx_hash, user(2).address, ref, clock.now())
    assert (credited.id, credited.status) == (pending.id, DepositStatus.CREDITED)
    assert await ledger.balance(ledger.site(site.id)) == G


async def test_anything_but_this_wallets_deposit_for_this_site_is_refused(chain, clock):
    site, other_site = await make_site(), await make_site()
    ref = account_ref_for_site(site.id)
    approve = await send_transaction(chain.w3, user(2), chain.build_approve_tx(user(2).address, "G$", G))
    gs_deposit = (await deposit(chain, user(2), G, ref))["transactionHash"].to_0x_hex()
    sov_deposit = (await deposit(chain, user(2), G, ref, symbol="SOV"))["transactionHash"].to_0x_hex()
    with pytest.raises(TransactionReverted) as failed:  # no allowance left: the vault cannot pull the tokens
        await send_transaction(chain.w3, user(2), {**chain.build_deposit_tx(user(2).address, "G$", G, ref),
                                                   "gas": 200_000})

    cases = [
        (approve["transactionHash"].to_0x_hex(), user(2).address, ref, 400, "invalid_deposit"),
        (failed.value.receipt["transactionHash"].to_0x_hex(), user(2).address, ref, 400, "invalid_deposit"),
        (gs_deposit, user(3).address, ref, 400, "invalid_deposit"),
        (gs_deposit, user(2).address, account_ref_for_site(other_site.id), 400, "invalid_deposit"),
        (sov_deposit, user(2).address, ref, 400, "invalid_deposit"),
        ("0x" + "12" * 32, user(2).address, ref, 404, "transaction_not_found"),
        ("0x1234", user(2).address, ref, 400, "invalid_tx_hash"),
    ]
    for tx_hash, wallet, account_ref, status, code in cases:
        error = await refused(verify_and_record_deposit(chain, tx_hash, wallet, account_ref, clock.now()))
        assert (error.status, error.code) == (status, code), (tx_hash, error.message)
    assert await Deposit.all().count() == 0
    assert await ledger.balance(ledger.site(site.id)) == 0


async def test_an_unreachable_chain_is_503_and_changes_nothing(chain, clock):
    site = await make_site()
    down = ChainClient(http_web3(f"http://127.0.0.1:{free_port()}"), chain.deployment, signer=chain.signer,
                       claim_deadline_seconds=chain.claim_deadline_seconds, confirmations=0)
    try:
        error = await refused(verify_and_record_deposit(down, "0x" + "34" * 32, user(2).address,
                                                        account_ref_for_site(site.id), clock.now()))
    finally:
        await down.close()
    assert (error.status, error.code) == (503, "chain_unavailable")
    assert await Deposit.all().count() == 0


async def test_the_api_and_the_watcher_racing_credit_once(chain, clock):
    site = await make_site()
    ref = account_ref_for_site(site.id)
    tx_hash = (await deposit(chain, user(2), 3 * G, ref))["transactionHash"].to_0x_hex()
    outcomes = await asyncio.gather(
        *(verify_and_record_deposit(chain, tx_hash, user(2).address, ref, clock.now()) for _ in range(5)),
        Watcher(chain, clock=clock).run_once(), return_exceptions=True)
    errors = [outcome for outcome in outcomes if isinstance(outcome, BaseException)]
    assert all(isinstance(error, ApiError) and error.code == "already_credited" for error in errors)
    assert await ledger.balance(ledger.site(site.id)) == 3 * G
    assert await LedgerTransaction.filter(kind="deposit").count() == 1
