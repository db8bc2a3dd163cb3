"""Posting a deposit's hash is idempotent for its holder, through HTTP on the development chain: a publisher's
top-up (``POST /api/publishers/topup``) and an advertiser's deposit (``POST /api/advertisers/deposit``) answer 200
with the deposit when the chain watcher credited it before the client posted, and one of two concurrent posts
answers 201, the other 200, with the same body; the money is credited once. Another account's post of a credited
hash stays refused (409 ``already_credited``), and so does the portal's top-up form."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import pytest
from eth_account import Account

from adnet.accounts.models import Publisher
from adnet.money import ledger
from adnet.money.holders import account_ref
from adnet.money.models import LedgerTransaction
from tests.auth_helpers import bearer, sign_in
from tests.chain.helpers import deposit, user
from tests.factories import G, make_advertiser, make_publisher, make_site

WALLET = user(2)  # holds G$ and gas on the development chain


@dataclass
class Holder:
    """Who posts the hash, where, and the ledger account the deposit credits."""

    token: str
    path: str
    body: dict
    account: ledger.AccountKey
    ref: str


@pytest.fixture(params=["site", "advertiser"])
async def holder(request, client) -> Holder:
    """The wallet's site (its top-up route) or its advertiser account (its deposit route), signed in."""
    token = await sign_in(client, WALLET)
    wallet = WALLET.address.lower()
    if request.param == "site":
        site = await make_site(await make_publisher(wallet))
        return Holder(token, "/api/publishers/topup", {"wallet": WALLET.address, "siteId": site.id},
                      ledger.site(site.id), account_ref(site.id))
    advertiser = await make_advertiser(wallet)
    return Holder(token, "/api/advertisers/deposit", {}, ledger.advertiser(advertiser.id), account_ref(advertiser.id))


async def post(client, holder: Holder, tx_hash: str, token: str | None = None):
    response = await client.post(holder.path, json={**holder.body, "txHash": tx_hash},
                                 headers=bearer(token or holder.token))
    return response.status_code, await response.get_json()


async def sent_deposit(chain, holder: Holder, amount: int) -> str:
    return (await deposit(chain, WALLET, amount, holder.ref))["transactionHash"].to_0x_hex()


def expected_body(holder: Holder, tx_hash: str, amount: str) -> dict:
    return {**({"siteId": holder.body["siteId"]} if "siteId" in holder.body else {}), "txHash": tx_hash,
            "token": "G$", "amount": amount, "status": "credited"}


async def test_a_hash_posted_after_the_watcher_credited_it_answers_200_with_the_deposit(client, chain, services,
                                                                                        holder):
    tx_hash = await sent_deposit(chain, holder, 4 * G)
    assert (await services.jobs.run("chain-watcher")).deposits_credited == 1
    assert await ledger.balance(holder.account) == 4 * G

    status, body = await post(client, holder, tx_hash)
    assert status == 200
    assert body == {**expected_body(holder, tx_hash, "4"), "depositId": body["depositId"]}
    assert await post(client, holder, tx_hash) == (200, body)
    assert await ledger.balance(holder.account) == 4 * G
    assert await LedgerTransaction.filter(kind="deposit").count() == 1


async def test_two_concurrent_posts_of_a_hash_credit_it_once_and_both_answer_the_deposit(client, chain, holder):
    tx_hash = await sent_deposit(chain, holder, 2 * G)
    (first_status, first), (second_status, second) = await asyncio.gather(post(client, holder, tx_hash),
                                                                           post(client, holder, tx_hash))
    assert sorted((first_status, second_status)) == [200, 201]
    assert first == second == {**expected_body(holder, tx_hash, "2"), "depositId": first["depositId"]}
    assert await ledger.balance(holder.account) == 2 * G
    assert await LedgerTransaction.filter(kind="deposit").count() == 1


async def test_another_accounts_post_of_a_credited_hash_is_refused(client, chain, holder):
    tx_hash = await sent_deposit(chain, holder, G)
    status, credited = await post(client, holder, tx_hash)
    assert status == 201
    # The same wallet for another of its sites, and another wallet for its own advertiser account.
    wallet = WALLET.address.lower()
    other_site = await make_site(await Publisher.get_or_none(wallet=wallet) or await make_publisher(wallet))
    stranger = Account.create()
    stranger_token = await sign_in(client, stranger)
    await make_advertiser(stranger.address.lower())
    attempts = [await post(client, Holder(holder.token, "/api/publishers/topup",
                                          {"wallet": WALLET.address, "siteId": other_site.id},
                                          ledger.site(other_site.id), ""), tx_hash),
                await post(client, Holder(stranger_token, "/api/advertisers/deposit", {}, holder.account, ""),
                           tx_hash, stranger_token)]
    for status, body in attempts:
        assert (status, body["error"], body["depositId"], body["field"]) == (
            409, "already_credited", credited["depositId"], "txHash")
    assert await ledger.balance(holder.account) == G
    assert await ledger.balance(ledger.site(other_site.id)) == 0
