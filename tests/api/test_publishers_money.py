"""A publisher's money through HTTP on the embedded chain: a real top-up (prepare, send from the wallet, credit,
the same hash again answered with the same deposit; pending until confirmed), a withdrawal redeemed on the vault,
twenty concurrent withdrawals of the whole balance, an expired withdrawal released, and exchanges in both
directions with exact integer amounts."""

from __future__ import annotations

import asyncio

import pytest
from eth_account import Account
from web3.exceptions import ContractLogicError

from adnet.chain.contracts import error_name
from adnet.chain.transact import send_transaction
from adnet.core.amounts import to_decimal_string
from adnet.money import ledger
from adnet.money.holders import account_ref
from adnet.money.models import Claim, ClaimStatus, Exchange, LedgerPosting, Withdrawal, WithdrawalStatus
from tests.auth_helpers import bearer, sign_in
from tests.chain.helpers import advance_chain_time, deposit, mine, user
from tests.factories import G, fund, make_advertiser, make_publisher, make_site


@pytest.fixture
def chain(app):
    return app.extensions["adnet"].chain


@pytest.fixture
def jobs(app):
    return app.extensions["adnet"].jobs


@pytest.fixture
async def publisher(client):
    """Development account 2 (it holds G$ and gas on the test chain), signed in, with one site."""
    account = user(2)
    token = await sign_in(client, account)
    site = await make_site(await make_publisher(account.address.lower()))
    return account, token, site


async def post(client, path: str, session: str, **body):
    return await client.post(f"/api/publishers/{path}", json=body, headers=bearer(session))


async def balance_of(client, token: str, wallet: str, site_id: str) -> dict:
    response = await client.get("/api/publishers/balance", query_string={"wallet": wallet, "siteId": site_id},
                                headers=bearer(token))
    assert response.status_code == 200
    return await response.get_json()


async def test_a_deposit_above_what_the_wallet_holds_is_refused_before_anything_is_prepared(client, chain,
                                                                                          publisher):
    """The API's prepare routes read the wallet's G$ on the chain, as the portal does: the wallet is never handed
    an approve and deposit that would revert."""
    account, token, site = publisher
    await make_advertiser(account.address.lower())
    held = await chain.token_balance("G$", account.address)
    over, exact = to_decimal_string(held + 1), to_decimal_string(held)
    refusals = [await post(client, "topup/prepare", token, wallet=account.address, siteId=site.id, amount=over),
                await client.post("/api/advertisers/deposit/prepare", json={"amount": over}, headers=bearer(token))]
    for refused in refusals:
        assert refused.status_code == 400
        assert await refused.get_json() == {
            "error": "insufficient_wallet_balance", "field": "amount", "walletBalance": exact,
            "message": f"Your wallet holds {exact} G$; the amount is more than that."}
    prepared = await post(client, "topup/prepare", token, wallet=account.address, siteId=site.id, amount=exact)
    approve, _ = (await prepared.get_json())["transactions"]
    assert prepared.status_code == 200 and approve == {
        **approve, "data": chain.build_approve_tx(account.address, "G$", held)["data"]}  # exactly the amount

    empty = Account.create()  # a wallet that holds no G$ at all
    empty_token = await sign_in(client, empty)
    theirs = await make_site(await make_publisher(empty.address.lower()))
    nothing = await post(client, "topup/prepare", empty_token, wallet=empty.address, siteId=theirs.id, amount="1")
    assert nothing.status_code == 400 and (await nothing.get_json())["walletBalance"] == "0"


async def test_a_real_top_up_is_credited_once(client, chain, publisher):
    account, token, site = publisher
    prepared = await post(client, "topup/prepare", token, wallet=account.address, siteId=site.id, amount="12.5")
    assert prepared.status_code == 200
    plan = await prepared.get_json()
    assert plan["accountRef"] == account_ref(site.id)
    approve, deposit_tx = plan["transactions"]
    assert approve["from"] == deposit_tx["from"] == account.address
    assert deposit_tx["to"].lower() == chain.vault_address
    gs_before = await chain.token_balance("G$", account.address)

    await send_transaction(chain.w3, account, approve)
    receipt = await send_transaction(chain.w3, account, deposit_tx)
    tx_hash = receipt["transactionHash"].to_0x_hex()
    credited = await post(client, "topup", token, wallet=account.address, siteId=site.id, txHash=tx_hash)
    assert credited.status_code == 201
    body = await credited.get_json()
    assert (body["status"], body["amount"], body["token"], body["txHash"]) == ("credited", "12.5", "G$", tx_hash)
    assert await chain.token_balance("G$", account.address) == gs_before - 12 * G - G // 2
    money = await balance_of(client, token, account.address, site.id)
    assert (money["claimable"], money["earned"]) == ("12.5", "0")  # money in, not revenue

    again = await post(client, "topup", token, wallet=account.address, siteId=site.id, txHash=tx_hash)
    assert (again.status_code, await again.get_json()) == (200, body)  # the same deposit, credited once
    assert (await balance_of(client, token, account.address, site.id))["claimable"] == "12.5"


async def test_an_unconfirmed_top_up_is_pending_then_credited_once(client, chain, publisher, monkeypatch):
    monkeypatch.setattr(chain, "confirmations", 1)  # as on a real node: one block on top of the deposit's
    account, token, site = publisher
    tx_hash = (await deposit(chain, account, 3 * G, account_ref(site.id)))["transactionHash"].to_0x_hex()

    pending = await post(client, "topup", token, wallet=account.address, siteId=site.id, txHash=tx_hash)
    assert pending.status_code == 202
    assert (await pending.get_json())["status"] == "pending"
    assert (await balance_of(client, token, account.address, site.id))["claimable"] == "0"

    await mine(chain)
    credited = await post(client, "topup", token, wallet=account.address, siteId=site.id, txHash=tx_hash)
    assert credited.status_code == 201
    assert (await credited.get_json())["status"] == "credited"
    again = await post(client, "topup", token, wallet=account.address, siteId=site.id, txHash=tx_hash)
    assert (again.status_code, await again.get_json()) == (200, await credited.get_json())
    assert (await balance_of(client, token, account.address, site.id))["claimable"] == "3"


async def test_a_top_up_must_be_this_wallets_deposit_for_this_site(client, chain, publisher):
    account, token, site = publisher
    other_site = await make_site(await site.publisher)
    for_other_site = await deposit(chain, account, G, account_ref(other_site.id))
    by_other_wallet = await deposit(chain, user(3), G, account_ref(site.id))
    for receipt in (for_other_site, by_other_wallet):
        response = await post(client, "topup", token, wallet=account.address, siteId=site.id,
                              txHash=receipt["transactionHash"].to_0x_hex())
        assert response.status_code == 400
        assert (await response.get_json())["error"] == "invalid_deposit"
    unknown = await post(client, "topup", token, wallet=account.address, siteId=site.id, txHash="0x" + "12" * 32)
    assert unknown.status_code == 404
    malformed = await post(client, "topup", token, wallet=account.address, siteId=site.id, txHash="0x12")
    assert (await malformed.get_json())["error"] == "invalid_tx_hash"
    assert await ledger.balance(ledger.site(site.id)) == 0


async def test_a_withdrawal_is_redeemed_on_the_vault_and_confirmed(client, chain, jobs, publisher):
    account, token, site = publisher
    await fund(ledger.site(site.id), 10 * G)
    response = await post(client, "withdraw", token, wallet=account.address, siteId=site.id, amount="7.25")
    assert response.status_code == 201
    body = await response.get_json()
    assert (body["amount"], body["token"], body["status"]) == ("7.25", "G$", "issued")
    claim_body = body["transaction"]
    assert claim_body["recipient"] == account.address and claim_body["amount"] == str(7 * G + G // 4)
    money = await balance_of(client, token, account.address, site.id)
    assert (money["claimable"], money["pendingWithdrawals"], money["earned"]) == ("2.75", "7.25", "10")

    gs_before = await chain.token_balance("G$", account.address)
    claim = await Claim.get(claim_ref=claim_body["claimRef"])
    await send_transaction(chain.w3, user(1), chain.build_claim_tx(user(1).address, claim))
    assert await chain.token_balance("G$", account.address) == gs_before + 7 * G + G // 4
    assert (await jobs.run("chain-watcher")).claims_redeemed == 1
    assert (await Withdrawal.get(id=body["withdrawalId"])).status == WithdrawalStatus.REDEEMED
    money = await balance_of(client, token, account.address, site.id)
    assert (money["claimable"], money["pendingWithdrawals"], money["earned"]) == ("2.75", "0", "10")


async def test_twenty_concurrent_withdrawals_of_the_whole_balance_pay_once(client, publisher):
    account, token, site = publisher
    await fund(ledger.site(site.id), 5 * G)
    responses = await asyncio.gather(*(
        post(client, "withdraw", token, wallet=account.address, siteId=site.id, amount="5") for _ in range(20)
    ))
    statuses = sorted(response.status_code for response in responses)
    assert statuses == [201] + [400] * 19
    refusals = {(await response.get_json())["error"] for response in responses if response.status_code == 400}
    assert refusals == {"insufficient_balance"}
    assert await ledger.balance(ledger.site(site.id)) == 0
    assert await Withdrawal.all().count() == 1 and await Claim.all().count() == 1


async def test_withdrawals_within_claimable_and_above_the_minimum(client, publisher):
    account, token, site = publisher
    await fund(ledger.site(site.id), 3 * G)
    cases = [
        ({"amount": "3.000000000000000001"}, "insufficient_balance"),
        ({"amount": "0.5"}, "below_minimum"),
        ({"amount": "-1"}, "invalid_amount"),
        ({"amount": "1e3"}, "invalid_amount"),
        ({"amount": "1", "token": "ETH"}, "invalid_token"),
        ({"amount": "1", "token": "SOV"}, "insufficient_balance"),
    ]
    for fields, code in cases:
        response = await post(client, "withdraw", token, wallet=account.address, siteId=site.id, **fields)
        assert response.status_code == 400, fields
        assert (await response.get_json())["error"] == code, fields
    assert await ledger.balance(ledger.site(site.id)) == 3 * G
    assert await Claim.all().count() == 0
    whole = await post(client, "withdraw", token, wallet=account.address, siteId=site.id, amount="3")
    assert whole.status_code == 201


async def test_an_unredeemed_withdrawal_is_released_after_its_deadline(client, chain, jobs, publisher):
    account, token, site = publisher
    await fund(ledger.site(site.id), 4 * G)
    body = await (await post(client, "withdraw", token, wallet=account.address, siteId=site.id, amount="4")).get_json()
    assert (await balance_of(client, token, account.address, site.id))["claimable"] == "0"
    await advance_chain_time(chain, chain.claim_deadline_seconds + 60)
    assert await jobs.run("expired-claims") == 1
    money = await balance_of(client, token, account.address, site.id)
    assert (money["claimable"], money["pendingWithdrawals"]) == ("4", "0")
    assert (await Withdrawal.get(id=body["withdrawalId"])).status == WithdrawalStatus.RELEASED
    claim = await Claim.get(claim_ref=body["transaction"]["claimRef"])
    assert claim.status == ClaimStatus.EXPIRED
    with pytest.raises(ContractLogicError) as refused:  # the vault refuses it too: released means never paid
        await chain.w3.eth.call(chain.build_claim_tx(user(1).address, claim))
    assert error_name(refused.value.data) == "ClaimExpired"


async def test_exchanges_in_both_directions_at_the_vaults_rate(client, chain, publisher):
    account, token, site = publisher
    assert await chain.rate() == 2 * G  # the development vault: 2 G$ per SOV
    await fund(ledger.site(site.id, "SOV"), 3 * G)
    await fund(ledger.site(site.id), G)

    to_gs = await post(client, "exchange", token, wallet=account.address, siteId=site.id, **{"from": "SOV"},
                       amount="1.000000000000000001")
    assert to_gs.status_code == 201
    body = await to_gs.get_json()
    assert body["from"] == {"token": "SOV", "amount": "1.000000000000000001"}
    assert body["to"] == {"token": "G$", "amount": "2.000000000000000002"}
    assert body["rate"] == "2"
    assert await ledger.balance(ledger.site(site.id, "SOV")) == 2 * G - 1
    assert await ledger.balance(ledger.site(site.id)) == 3 * G + 2

    to_sov = await post(client, "exchange", token, wallet=account.address, siteId=site.id, **{"from": "G$"},
                        amount="0.000000000000000005")
    assert to_sov.status_code == 201
    body = await to_sov.get_json()
    assert body["to"] == {"token": "SOV", "amount": "0.000000000000000002"}  # 5 / 2 rounded down
    assert await ledger.balance(ledger.site(site.id)) == 3 * G - 3
    assert await ledger.balance(ledger.site(site.id, "SOV")) == 2 * G + 1

    for exchange in await Exchange.all():
        legs = await LedgerPosting.filter(transaction__kind="exchange", transaction__reference=exchange.id
                                          ).values_list("account__token", "amount")
        assert len(legs) == 4
        for symbol in ("G$", "SOV"):
            assert sum(int(amount) for token_symbol, amount in legs if token_symbol == symbol) == 0

    dust = await post(client, "exchange", token, wallet=account.address, siteId=site.id, **{"from": "G$"},
                      amount="0.000000000000000001")
    assert (await dust.get_json())["error"] == "amount_too_small"
    too_much = await post(client, "exchange", token, wallet=account.address, siteId=site.id, **{"from": "SOV"},
                          amount="3")
    assert (too_much.status_code, (await too_much.get_json())["error"]) == (400, "insufficient_balance")
    unknown = await post(client, "exchange", token, wallet=account.address, siteId=site.id, **{"from": "ETH"},
                         amount="1")
    assert (await unknown.get_json())["field"] == "from"
    assert await Exchange.all().count() == 2
