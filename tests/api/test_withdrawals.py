"""Withdrawals that cannot be lost, through HTTP: an ``Idempotency-Key`` makes a retry answer with the first
request's withdrawal and claim (also twenty retries at once: one withdrawal, one debit), another body under the
same key is refused, and the GET routes list a site's and an advertiser's withdrawals and give any claim again
with its state (issued, redeemed, released)."""

from __future__ import annotations

import asyncio

import pytest

from adnet.chain.transact import send_transaction
from adnet.money import ledger
from adnet.money.models import Claim, LedgerTransaction, Withdrawal, WithdrawalKey
from tests.auth_helpers import bearer, sign_in
from tests.chain.helpers import advance_chain_time, user
from tests.factories import G, fund, make_advertiser, make_publisher, make_site


@pytest.fixture
def jobs(app):
    return app.extensions["adnet"].jobs


@pytest.fixture
async def publisher(client):
    """Development account 2, signed in, with one site."""
    account = user(2)
    token = await sign_in(client, account)
    site = await make_site(await make_publisher(account.address.lower()))
    return account, token, site


def keyed(token: str, key: str) -> dict[str, str]:
    return {**bearer(token), "Idempotency-Key": key}


async def withdraw(client, session: str, site_id: str, wallet: str, amount: str, key: str | None = None, **extra):
    headers = keyed(session, key) if key is not None else bearer(session)
    return await client.post("/api/publishers/withdraw", headers=headers,
                             json={"wallet": wallet, "siteId": site_id, "amount": amount, **extra})


async def test_a_retry_with_the_same_key_answers_the_same_withdrawal_and_claim(client, publisher):
    account, token, site = publisher
    await fund(ledger.site(site.id), 10 * G)
    first = await withdraw(client, token, site.id, account.address, "4", key="retry-1")
    assert first.status_code == 201
    assert "Idempotent-Replayed" not in first.headers
    again = await withdraw(client, token, site.id, account.address, "4", key="retry-1")
    assert again.status_code == 200
    assert again.headers["Idempotent-Replayed"] == "true"
    assert await again.get_json() == await first.get_json()
    assert await ledger.balance(ledger.site(site.id)) == 6 * G
    assert await Withdrawal.all().count() == 1 and await Claim.all().count() == 1

    other_key = await withdraw(client, token, site.id, account.address, "4", key="retry-2")
    assert other_key.status_code == 201
    assert (await other_key.get_json())["withdrawalId"] != (await first.get_json())["withdrawalId"]
    without_key = await withdraw(client, token, site.id, account.address, "1")
    assert without_key.status_code == 201
    assert await ledger.balance(ledger.site(site.id)) == G


async def test_the_same_key_with_another_body_is_refused_and_changes_nothing(client, publisher):
    account, token, site = publisher
    await fund(ledger.site(site.id), 10 * G)
    await fund(ledger.site(site.id, "SOV"), 10 * G)
    first = await withdraw(client, token, site.id, account.address, "4", key="k")
    withdrawal_id = (await first.get_json())["withdrawalId"]
    for amount, extra in (("5", {}), ("4", {"token": "SOV"})):
        response = await withdraw(client, token, site.id, account.address, amount, key="k", **extra)
        assert response.status_code == 409
        body = await response.get_json()
        assert (body["error"], body["withdrawalId"]) == ("idempotency_key_reused", withdrawal_id)
    assert await ledger.balance(ledger.site(site.id)) == 6 * G
    assert await ledger.balance(ledger.site(site.id, "SOV")) == 10 * G
    assert await Withdrawal.all().count() == 1


async def test_a_key_belongs_to_its_site(client, publisher):
    account, token, site = publisher
    other = await make_site(await site.publisher)
    await fund(ledger.site(site.id), 10 * G)
    await fund(ledger.site(other.id), 10 * G)
    first = await withdraw(client, token, site.id, account.address, "4", key="shared")
    second = await withdraw(client, token, other.id, account.address, "4", key="shared")
    assert (first.status_code, second.status_code) == (201, 201)
    assert (await first.get_json())["siteId"] == site.id and (await second.get_json())["siteId"] == other.id
    assert await Withdrawal.all().count() == 2


async def test_twenty_identical_retries_at_once_make_one_withdrawal(client, publisher):
    account, token, site = publisher
    await fund(ledger.site(site.id), 10 * G)
    responses = await asyncio.gather(*(withdraw(client, token, site.id, account.address, "3", key="burst")
                                       for _ in range(20)))
    assert sorted(response.status_code for response in responses) == [200] * 19 + [201]
    bodies = [await response.get_json() for response in responses]
    assert len({body["withdrawalId"] for body in bodies}) == 1
    assert len({body["transaction"]["claimRef"] for body in bodies}) == 1
    assert all(body["transaction"] == bodies[0]["transaction"] for body in bodies)
    assert await Withdrawal.all().count() == 1 and await Claim.all().count() == 1
    assert await LedgerTransaction.filter(kind="claim_issue").count() == 1
    assert await ledger.balance(ledger.site(site.id)) == 7 * G


async def test_a_refused_withdrawal_leaves_its_key_free(client, publisher):
    account, token, site = publisher
    await fund(ledger.site(site.id), 2 * G)
    refused = await withdraw(client, token, site.id, account.address, "3", key="later")
    assert (refused.status_code, (await refused.get_json())["error"]) == (400, "insufficient_balance")
    assert await WithdrawalKey.all().count() == 0
    await fund(ledger.site(site.id), 2 * G)
    accepted = await withdraw(client, token, site.id, account.address, "3", key="later")
    assert accepted.status_code == 201


@pytest.mark.parametrize("key", ["", "x" * 256, "has space", "é"])
async def test_a_malformed_key_is_refused(client, publisher, key):
    account, token, site = publisher
    await fund(ledger.site(site.id), 5 * G)
    headers = {**bearer(token), "Idempotency-Key": key.encode().decode("latin-1")}
    response = await client.post("/api/publishers/withdraw", headers=headers,
                                 json={"wallet": account.address, "siteId": site.id, "amount": "2"})
    assert response.status_code == 400
    body = await response.get_json()
    assert (body["error"], body["field"]) == ("invalid_idempotency_key", "Idempotency-Key")
    assert await Withdrawal.all().count() == 0


async def test_a_sites_withdrawals_are_listed_with_their_claims_and_states(client, chain, clock, jobs, publisher):
    account, token, site = publisher
    await fund(ledger.site(site.id), 20 * G)
    made = []
    for amount in ("2", "3", "4"):
        response = await withdraw(client, token, site.id, account.address, amount)
        made.append(await response.get_json())
        clock.advance(seconds=1)
    lost = made[1]

    listing = await client.get(f"/api/publishers/sites/{site.id}/withdrawals", headers=bearer(token))
    assert listing.status_code == 200
    body = await listing.get_json()
    assert body["siteId"] == site.id and body["next"] is None
    assert [item["withdrawalId"] for item in body["withdrawals"]] == [item["withdrawalId"] for item in made[::-1]]
    assert body["withdrawals"][1]["transaction"] == lost["transaction"]
    assert {item["status"] for item in body["withdrawals"]} == {"issued"}

    one = await client.get(f"/api/publishers/sites/{site.id}/withdrawals/{lost['withdrawalId']}",
                           headers=bearer(token))
    assert one.status_code == 200
    assert await one.get_json() == lost

    # The claim fetched again redeems on the vault; the watcher then marks the withdrawal redeemed.
    claim = await Claim.get(claim_ref=lost["transaction"]["claimRef"])
    receipt = await send_transaction(chain.w3, account, chain.build_claim_tx(account.address, claim))
    await jobs.run("chain-watcher")
    redeemed = await (await client.get(f"/api/publishers/sites/{site.id}/withdrawals/{lost['withdrawalId']}",
                                       headers=bearer(token))).get_json()
    assert redeemed["status"] == "redeemed"
    assert redeemed["redeemedTx"] == receipt["transactionHash"].to_0x_hex()
    assert redeemed["settledAt"] is not None

    await advance_chain_time(chain, chain.claim_deadline_seconds + 60)
    assert await jobs.run("expired-claims") == 2
    states = await (await client.get(f"/api/publishers/sites/{site.id}/withdrawals", headers=bearer(token))
                    ).get_json()
    assert [item["status"] for item in states["withdrawals"]] == ["released", "redeemed", "released"]


async def test_listing_pages_with_before(client, clock, publisher):
    account, token, site = publisher
    await fund(ledger.site(site.id), 20 * G)
    ids = []
    for index in range(5):
        ids.append((await (await withdraw(client, token, site.id, account.address, "1")).get_json())["withdrawalId"])
        if index != 2:  # two made in the same instant are still listed once each, in the order of their ids
            clock.advance(seconds=1)
    path = f"/api/publishers/sites/{site.id}/withdrawals"
    seen, before = [], None
    while True:
        query = {"limit": "2", **({"before": before} if before else {})}
        page = await (await client.get(path, query_string=query, headers=bearer(token))).get_json()
        seen += [item["withdrawalId"] for item in page["withdrawals"]]
        before = page["next"]
        if before is None:
            break
    assert len(seen) == 5 and set(seen) == set(ids)
    assert seen[0] == ids[4] and set(seen[1:3]) == {ids[2], ids[3]} and seen[3:] == [ids[1], ids[0]]
    bad = await client.get(path, query_string={"before": "wd_unknown"}, headers=bearer(token))
    assert (bad.status_code, (await bad.get_json())["error"]) == (400, "invalid_cursor")
    too_many = await client.get(path, query_string={"limit": "101"}, headers=bearer(token))
    assert too_many.status_code == 400


async def test_another_wallets_withdrawals_stay_hidden(client, publisher):
    account, token, site = publisher
    await fund(ledger.site(site.id), 5 * G)
    made = await (await withdraw(client, token, site.id, account.address, "2")).get_json()
    stranger = await sign_in(client, user(3))
    listing = await client.get(f"/api/publishers/sites/{site.id}/withdrawals", headers=bearer(stranger))
    assert (listing.status_code, (await listing.get_json())["error"]) == (403, "not_owner")
    one = await client.get(f"/api/publishers/sites/{site.id}/withdrawals/{made['withdrawalId']}",
                           headers=bearer(stranger))
    assert one.status_code == 403
    anonymous = await client.get(f"/api/publishers/sites/{site.id}/withdrawals")
    assert anonymous.status_code == 401
    own_site = await make_site(await make_publisher(user(3).address.lower()))
    elsewhere = await client.get(f"/api/publishers/sites/{own_site.id}/withdrawals/{made['withdrawalId']}",
                                 headers=bearer(stranger))
    assert elsewhere.status_code == 404


async def test_an_advertisers_withdrawals_are_idempotent_and_listed(client):
    account = user(4)
    token = await sign_in(client, account)
    advertiser = await make_advertiser(account.address.lower())
    await fund(ledger.advertiser(advertiser.id), 10 * G)
    responses = await asyncio.gather(*(
        client.post("/api/advertisers/withdraw", json={"amount": "6"}, headers=keyed(token, "adv-1"))
        for _ in range(10)))
    assert sorted(response.status_code for response in responses) == [200] * 9 + [201]
    bodies = [await response.get_json() for response in responses]
    assert len({body["transaction"]["claimRef"] for body in bodies}) == 1
    assert await ledger.balance(ledger.advertiser(advertiser.id)) == 4 * G
    other_body = await client.post("/api/advertisers/withdraw", json={"amount": "1"}, headers=keyed(token, "adv-1"))
    assert (other_body.status_code, (await other_body.get_json())["error"]) == (409, "idempotency_key_reused")

    listing = await (await client.get("/api/advertisers/withdrawals", headers=bearer(token))).get_json()
    assert [item["withdrawalId"] for item in listing["withdrawals"]] == [bodies[0]["withdrawalId"]]
    assert listing["withdrawals"][0]["transaction"] == bodies[0]["transaction"]
    one = await client.get(f"/api/advertisers/withdrawals/{bodies[0]['withdrawalId']}", headers=bearer(token))
    assert (await one.get_json())["status"] == "issued"
    missing = await client.get("/api/advertisers/withdrawals/wd_nothing", headers=bearer(token))
    assert missing.status_code == 404


async def test_the_openapi_document_describes_the_routes_their_header_and_security(client):
    document = await (await client.get("/openapi.json")).get_json()
    paths = document["paths"]
    withdraw = paths["/api/publishers/withdraw"]["post"]
    header = next(parameter for parameter in withdraw["parameters"] if parameter["in"] == "header")
    assert header["name"] == "Idempotency-Key"
    assert {"200", "201", "409"} <= set(withdraw["responses"])
    assert "Idempotency-Key" in {parameter["name"] for parameter in paths["/api/advertisers/withdraw"]["post"][
        "parameters"]}
    for path in ("/api/publishers/sites/{site_id}/withdrawals",
                 "/api/publishers/sites/{site_id}/withdrawals/{withdrawal_id}",
                 "/api/advertisers/withdrawals", "/api/advertisers/withdrawals/{withdrawal_id}"):
        operation = paths[path]["get"]
        assert {"session", "sessionCookie"} <= {name for scheme in operation["security"] for name in scheme}, path
        assert "200" in operation["responses"] and "401" in operation["responses"], path
    rewards = paths["/api/rewards"]["get"]
    assert rewards["security"] == [{"session": []}] and "401" in rewards["responses"]
    assert {"/api/rewards/message", "/api/rewards/session"} <= set(paths)
