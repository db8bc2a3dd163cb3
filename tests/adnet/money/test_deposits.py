"""A deposit's progress without HTTP, whoever it credits: sent, then credited once."""

from __future__ import annotations

import pytest

from adnet.chain.transact import send_transaction
from adnet.core.errors import DomainError
from adnet.core.inputs import parse
from adnet.money import deposits, ledger
from adnet.money.commands import DepositReport
from adnet.money.deposits import DepositProgress
from adnet.money.holders import advertiser_holder
from adnet.money.models import Deposit
from tests.chain.helpers import user
from tests.factories import G, make_advertiser


async def test_a_deposit_is_sent_then_credited_once_for_an_advertiser(app, chain, clock):
    account = user(2)
    advertiser = await make_advertiser(account.address.lower())
    holder = advertiser_holder(advertiser)
    plan = await deposits.prepare(holder, 3 * G, chain)

    unknown = "0x" + "ab" * 32
    assert await deposits.progress(holder, unknown, chain, clock.now()) == DepositProgress("sent", unknown)
    await send_transaction(chain.w3, account, plan.approve)
    receipt = await send_transaction(chain.w3, account, plan.deposit)
    tx_hash = receipt["transactionHash"].to_0x_hex()
    for _ in range(2):  # the second call finds it credited before and says so, crediting nothing
        progress = await deposits.progress(holder, tx_hash, chain, clock.now())
        assert (progress.state, progress.amount) == ("credited", 3 * G)
    assert await ledger.balance(ledger.advertiser(advertiser.id)) == 3 * G
    assert await Deposit.filter(tx_hash=tx_hash).count() == 1
    with pytest.raises(DomainError) as refused:
        parse(DepositReport, {"txHash": "not a hash"})
    assert (refused.value.code, refused.value.field) == ("invalid_tx_hash", "txHash")
