"""A viewer's rewards through HTTP: the wallet signs in for rewards (a session that opens nothing else), lists only
its own completions and answers with their claims and its points, gets an issued claim again after losing it, and
redeems all its claims in one vault transaction; /api/tasks/status points to where the claim is."""

from __future__ import annotations

from eth_account import Account

from adnet.chain.transact import send_transaction
from adnet.money.models import Claim, ClaimStatus
from adnet.reporting.rewards import POINTS_EXPLAINED
from adnet.tasks.models import TaskKind
from tests.api.test_interactions import POLL, make_unit
from tests.api.test_interactions import post as answer_unit
from tests.api.test_tasks import visit_task, visited_and_completed
from tests.auth_helpers import bearer, rewards_sign_in, sign, sign_in, signed_message
from tests.chain.helpers import advance_chain_time, user
from tests.factories import G, make_site

ORIGIN = {"Origin": "https://publisher.example"}


async def earn(client, clock, wallet: str, *, fingerprint: str, gs: int = G, points: int = 10):
    """A VISIT_URL completion of ``wallet`` on a new task; returns its answer."""
    task = await visit_task(reward_points=points, reward_gs=gs, title=f"Visit {fingerprint}")
    status, body = await visited_and_completed(client, clock, task, wallet, fingerprint)
    assert status == 201, body
    return body


async def rewards_of(client, token: str) -> dict:
    response = await client.get("/api/rewards", headers={**bearer(token), **ORIGIN})
    assert response.status_code == 200, await response.get_json()
    assert response.headers["Access-Control-Allow-Origin"] == "*"
    return await response.get_json()


async def test_a_wallet_lists_its_rewards_and_gets_a_lost_claim_again(client, clock):
    viewer = user(1)
    wallet = viewer.address.lower()
    first = await earn(client, clock, wallet, fingerprint="fp-a", gs=G, points=25)
    clock.advance(seconds=5)
    second = await earn(client, clock, wallet, fingerprint="fp-b", gs=0, points=5)  # points only
    unit, site = await make_unit(TaskKind.POLL, POLL), await make_site()
    clock.advance(seconds=5)
    status, answered = await answer_unit(client, unit, site, {"optionId": "celo"}, wallet=wallet)
    assert status == 201
    await earn(client, clock, user(3).address.lower(), fingerprint="fp-other")  # someone else's

    token = await rewards_sign_in(client, viewer)
    body = await rewards_of(client, token)
    assert body["wallet"] == viewer.address
    assert body["points"] == {"total": 25 + 5 + 10, "about": POINTS_EXPLAINED}
    assert body["gs"] == {"earned": "2", "redeemable": "2"}
    assert [(item["source"], item["id"]) for item in body["rewards"]] == [
        ("unit", answered["interactionId"]), ("task", second["completionId"]), ("task", first["completionId"])]
    task_reward = body["rewards"][2]
    assert task_reward["transaction"] == first["transaction"]  # the claim the completion answered, again
    assert (task_reward["claimStatus"], task_reward["redeemable"]) == ("issued", True)
    assert task_reward["awarded"] == {"points": 25, "gs": 1}
    assert body["rewards"][0]["transaction"] == answered["transaction"]
    points_only = body["rewards"][1]
    assert (points_only["claimStatus"], points_only["transaction"], points_only["redeemable"]) == (None, None, False)
    assert body["redeemAllCount"] == 2


async def test_redeem_all_pays_every_claim_in_one_transaction(client, clock, chain, services):
    viewer = user(1)
    wallet = viewer.address.lower()
    earned = [await earn(client, clock, wallet, fingerprint=f"fp-{index}", gs=(index + 1) * G)
              for index in range(3)]
    token = await rewards_sign_in(client, viewer)
    body = await rewards_of(client, token)
    batch = body["redeemAll"]
    assert body["redeemAllCount"] == 3
    assert body["redeemAllClaimRefs"] == [item["transaction"]["claimRef"] for item in earned]  # oldest deadline first
    assert (batch["from"], batch["to"].lower(), batch["chainId"]) == (viewer.address, chain.vault_address,
                                                                      chain.chain_id)
    before = await chain.token_balance("G$", wallet)
    receipt = await send_transaction(chain.w3, viewer, batch)
    assert await chain.token_balance("G$", wallet) == before + 6 * G
    assert (await services.jobs.run("chain-watcher")).claims_redeemed == 3

    after = await rewards_of(client, token)
    assert after["redeemAll"] is None and after["redeemAllCount"] == 0
    assert after["gs"] == {"earned": "6", "redeemable": "0"}
    by_id = {item["id"]: item for item in after["rewards"]}
    for completion in earned:
        item = by_id[completion["completionId"]]
        assert (item["claimStatus"], item["redeemable"], item["transaction"]) == ("redeemed", False, None)
        assert item["redeemedTx"] == receipt["transactionHash"].to_0x_hex()


async def test_an_expired_claim_is_listed_but_not_redeemable(client, clock, chain, services):
    viewer = user(1)
    await earn(client, clock, viewer.address.lower(), fingerprint="fp-late")
    clock.advance(seconds=chain.claim_deadline_seconds + 60)  # past the deadline, before the job expires it
    token = await rewards_sign_in(client, viewer)
    late = await rewards_of(client, token)
    assert (late["rewards"][0]["claimStatus"], late["rewards"][0]["redeemable"]) == ("issued", False)
    assert late["redeemAll"] is None and late["rewards"][0]["transaction"] is None
    await advance_chain_time(chain, chain.claim_deadline_seconds + 120)
    assert await services.jobs.run("expired-claims") == 1
    expired = await rewards_of(client, token)
    assert expired["rewards"][0]["claimStatus"] == "expired"
    assert expired["gs"]["redeemable"] == "0"


async def test_rewards_need_the_wallets_own_signature(client, clock):
    viewer = user(1)
    await earn(client, clock, viewer.address.lower(), fingerprint="fp-a")
    anonymous = await client.get("/api/rewards", query_string={"wallet": viewer.address}, headers=ORIGIN)
    assert (anonymous.status_code, (await anonymous.get_json())["error"]) == (401, "auth_required")
    assert anonymous.headers["Access-Control-Allow-Origin"] == "*"

    # A message written for the viewer but signed by another key opens nothing.
    written = await (await client.post("/api/rewards/message", json={"address": viewer.address})).get_json()
    forged = await client.post("/api/rewards/session", json={"message": written["message"],
                                                             "signature": sign(Account.create(), written["message"])})
    assert (forged.status_code, (await forged.get_json())["error"]) == (401, "invalid_signature")

    # Another wallet signed in sees only its own (here: nothing).
    other = await rewards_of(client, await rewards_sign_in(client, user(3)))
    assert other["rewards"] == [] and other["points"]["total"] == 0


async def test_a_rewards_session_opens_nothing_else(client, clock):
    viewer = user(2)
    token = await rewards_sign_in(client, viewer)
    for path in ("/api/auth/me", f"/api/publishers/sites?wallet={viewer.address}", "/api/advertisers/account"):
        response = await client.get(path, headers=bearer(token))
        assert (response.status_code, (await response.get_json())["error"]) == (401, "auth_required"), path
    withdraw = await client.post("/api/publishers/withdraw", headers=bearer(token),
                                 json={"wallet": viewer.address, "siteId": "site_x", "amount": "1"})
    assert withdraw.status_code == 401

    # A rewards message cannot open an account session, nor an account message a rewards session.
    written = await (await client.post("/api/rewards/message", json={"address": viewer.address})).get_json()
    as_account = await client.post("/api/auth/verify", json={"message": written["message"],
                                                             "signature": sign(viewer, written["message"])})
    assert (as_account.status_code, (await as_account.get_json())["error"]) == (401, "wrong_uri")
    message, signature = await signed_message(client, viewer)
    as_rewards = await client.post("/api/rewards/session", json={"message": message, "signature": signature})
    assert (as_rewards.status_code, (await as_rewards.get_json())["error"]) == (401, "wrong_uri")

    # The wallet's account session lists its rewards too.
    account_token = await sign_in(client, viewer)
    assert (await rewards_of(client, account_token))["wallet"] == viewer.address


async def test_a_rewards_message_signs_in_once(client):
    viewer = user(1)
    written = await (await client.post("/api/rewards/message", json={"address": viewer.address},
                                       headers=ORIGIN)).get_json()
    assert "/rewards" in written["message"] and "signs in to nothing else" in written["message"]
    body = {"message": written["message"], "signature": sign(viewer, written["message"])}
    opened = await client.post("/api/rewards/session", json=body, headers=ORIGIN)
    assert opened.status_code == 201
    assert opened.headers["Access-Control-Allow-Origin"] == "*"
    assert "Set-Cookie" not in opened.headers
    assert (await opened.get_json())["scope"] == "rewards"
    again = await client.post("/api/rewards/session", json=body)
    assert (again.status_code, (await again.get_json())["error"]) == (401, "invalid_nonce")


async def test_a_preflight_lets_a_page_send_the_bearer_token(client):
    response = await client.options("/api/rewards", headers={
        **ORIGIN, "Access-Control-Request-Method": "GET", "Access-Control-Request-Headers": "authorization"})
    assert response.headers["Access-Control-Allow-Origin"] == "*"
    assert "Authorization" in response.headers["Access-Control-Allow-Headers"]
    assert "Access-Control-Allow-Credentials" not in response.headers


async def test_status_names_the_claim_and_where_the_wallet_gets_it(client, clock, settings):
    viewer = user(1)
    completed = await earn(client, clock, viewer.address.lower(), fingerprint="fp-a")
    status = await (await client.get("/api/tasks/status", query_string={"wallet": viewer.address})).get_json()
    row = status["completions"][0]
    assert (row["claimStatus"], row["claimRef"]) == ("issued", completed["transaction"]["claimRef"])
    assert "signature" not in row and "transaction" not in row  # the claim itself only to its wallet
    assert status["rewardsApi"] == f"{settings.public_url}/api/rewards"
    assert status["rewardsPage"] == f"{settings.public_url}/rewards"
    claim_refs = {item["claimRef"] for item in (await rewards_of(client, await rewards_sign_in(client, viewer))
                                                )["rewards"]}
    assert row["claimRef"] in claim_refs
    assert (await Claim.get(claim_ref=row["claimRef"])).status == ClaimStatus.ISSUED
