"""POST /api/tasks/complete through HTTP: the response shape, validation, task states, limits and repeats, reward
reservation (pool, campaign budget, points only), exactness under concurrency, the visit link and VISIT_URL, CORS."""

from __future__ import annotations

import asyncio
from datetime import timedelta

from eth_account import Account
from eth_account.messages import encode_typed_data

from adnet.campaigns.models import CampaignStatus
from adnet.money import ledger
from adnet.money.claims import claim_ref_for, claim_typed_data
from adnet.money.models import Claim, LedgerTransaction
from adnet.tasks.models import Completion, TaskKind, TaskVisit
from tests.factories import G, make_campaign, make_task, wallet_address

PAGE = "https://advertiser.example/page"
VISIT = {"url": PAGE, "minDwellMs": 5000}
TRANSACTION_KEYS = {"claimRef", "signature", "nonce", "deadline", "to", "chainId", "recipient", "token", "amount"}


async def visit_task(**fields):
    fields.setdefault("pool", 10 * G)
    return await make_task(kind=TaskKind.VISIT_URL, config=VISIT, **fields)


async def start_visit(client, task, fingerprint: str) -> None:
    response = await client.get(f"/api/tasks/{task.id}/visit", query_string={"fingerprint": fingerprint})
    assert response.status_code == 302, await response.get_json()
    assert response.headers["Location"] == PAGE


async def complete(client, task, wallet: str, fingerprint: str = "fp-0001", **proof):
    response = await client.post("/api/tasks/complete", json={
        "taskId": task.id, "wallet": wallet, "fingerprint": fingerprint, "proof": proof})
    return response.status_code, await response.get_json()


async def visited_and_completed(client, clock, task, wallet: str, fingerprint: str = "fp-0001"):
    await start_visit(client, task, fingerprint)
    clock.advance(seconds=6)
    return await complete(client, task, wallet, fingerprint, dwellMs=5500)


async def nothing_recorded() -> None:
    assert await Completion.all().count() == 0
    assert await Claim.all().count() == 0
    assert not await LedgerTransaction.filter(kind="claim_issue").exists()


async def test_a_completion_answers_in_the_interface_shape_with_a_claim_signed_for_the_wallet(client, clock, app):
    task = await visit_task(reward_points=25, reward_gs=G + G // 2)
    wallet = wallet_address()
    status, body = await visited_and_completed(client, clock, task, wallet)

    assert status == 201
    assert set(body) == {"success", "completionId", "awarded", "transaction"}
    assert body["success"] is True and body["completionId"].startswith("tc_")
    assert body["awarded"] == {"points": 25, "gs": 1.5}
    claim = await Claim.get(claim_ref=body["transaction"]["claimRef"])
    assert set(body["transaction"]) == TRANSACTION_KEYS
    assert body["transaction"]["claimRef"] == claim_ref_for("completion", body["completionId"])
    assert body["transaction"]["amount"] == str(G + G // 2)
    assert body["transaction"]["recipient"].lower() == wallet
    chain = app.extensions["adnet"].chain
    assert body["transaction"]["token"].lower() == chain.gs_address
    assert body["transaction"]["deadline"] == str(int(clock.now().timestamp()) + 7 * 24 * 3600)
    typed = claim_typed_data(chain_id=chain.chain_id, vault=chain.vault_address, recipient=wallet,
                             token=chain.gs_address, amount=G + G // 2, claim_ref=claim.claim_ref,
                             nonce=int(body["transaction"]["nonce"]), deadline=int(body["transaction"]["deadline"]))
    signer = Account.recover_message(encode_typed_data(full_message=typed), signature=body["transaction"]["signature"])
    assert signer.lower() == chain.signer.address.lower()
    completion = await Completion.get(id=body["completionId"])
    assert (completion.wallet, completion.points, int(completion.gs_amount), completion.claim_id) == (
        wallet, 25, G + G // 2, claim.id)
    assert await ledger.balance(ledger.task_pool(task.id)) == 10 * G - (G + G // 2)
    assert await ledger.balance(ledger.outstanding_claims("G$")) == G + G // 2


async def test_a_checksummed_wallet_is_the_same_wallet(client, clock):
    task = await visit_task()
    account = Account.create()
    status, body = await visited_and_completed(client, clock, task, account.address)
    assert status == 201
    assert (await Completion.get(id=body["completionId"])).wallet == account.address.lower()


async def test_the_visit_link_records_the_start_once_and_redirects(client, clock):
    task = await visit_task()
    await start_visit(client, task, "fp-0001")
    first = (await TaskVisit.get(task_id=task.id, fingerprint="fp-0001")).started_at
    clock.advance(seconds=30)
    await start_visit(client, task, "fp-0001")
    assert await TaskVisit.filter(task_id=task.id).count() == 1
    assert (await TaskVisit.get(task_id=task.id, fingerprint="fp-0001")).started_at == first

    response = await client.get(f"/api/tasks/{task.id}/visit")
    assert response.status_code == 400 and (await response.get_json())["field"] == "fingerprint"
    response = await client.get("/api/tasks/task_unknownunknownunk/visit", query_string={"fingerprint": "x"})
    assert response.status_code == 404
    quiz = await make_task(kind=TaskKind.QUIZ, config={"question": "Q?", "answers": ["a"]})
    response = await client.get(f"/api/tasks/{quiz.id}/visit", query_string={"fingerprint": "x"})
    assert response.status_code == 400
    assert not await TaskVisit.filter(task_id=quiz.id).exists()


async def test_visit_url_rejections_change_nothing(client, clock):
    task = await visit_task()
    wallet = wallet_address()
    status, body = await complete(client, task, wallet, dwellMs=6000)
    assert (status, body["error"], body["reason"]) == (400, "invalid_proof", "visit_not_started")

    await start_visit(client, task, "fp-0001")
    clock.advance(seconds=6)
    for dwell, reason in ((4999, "dwell_too_short"), ("6000", "invalid_dwell"), (-1, "invalid_dwell"),
                          (True, "invalid_dwell"), (86_400_001, "invalid_dwell")):
        status, body = await complete(client, task, wallet, dwellMs=dwell)
        assert (status, body["error"], body["reason"], body["field"]) == (400, "invalid_proof", reason,
                                                                         "proof.dwellMs"), dwell
    # Another device's visit does not count for this one.
    status, body = await complete(client, task, wallet, "fp-other", dwellMs=5000)
    assert body["reason"] == "visit_not_started"
    await nothing_recorded()
    assert await TaskVisit.filter(task_id=task.id).count() == 1

    # A reported dwell longer than adnet's measure is information: the visitor's click came a network trip before
    # the redirect that started adnet's clock, and adnet's measure of six seconds is what counts.
    status, body = await complete(client, task, wallet, dwellMs=9000)
    assert status == 201
    assert not await TaskVisit.filter(task_id=task.id).exists()  # the completion used the visit up


async def test_the_dwell_is_measured_by_adnet_from_the_visits_start(client, clock):
    """The minimum of 5,000 ms is met on adnet's clock, from the visit link's redirect to the completion's arrival,
    with no allowance: a dwell of 5,000 ms reported 3.2 s after the start, or 4,999 ms after it, is refused; at
    5,000 ms it passes."""
    task = await visit_task()
    wallet = wallet_address()
    await start_visit(client, task, "fp-0001")
    clock.advance(milliseconds=3200)
    status, body = await complete(client, task, wallet, dwellMs=5000)
    assert (status, body["error"], body["reason"], body["field"]) == (400, "invalid_proof", "dwell_too_short",
                                                                     "proof.dwellMs")
    clock.advance(milliseconds=1799)
    status, body = await complete(client, task, wallet, dwellMs=5000)
    assert (status, body["reason"]) == (400, "dwell_too_short")
    await nothing_recorded()
    assert await TaskVisit.filter(task_id=task.id).exists()  # a refusal leaves the visit running

    clock.advance(milliseconds=1)
    status, body = await complete(client, task, wallet, dwellMs=5000)
    assert status == 201, body


async def test_the_visits_first_start_counts_and_a_task_may_ask_for_longer(client, clock):
    """A second click on the visit link does not restart adnet's clock, and a task's own ``minDwellMs`` is
    measured the same way."""
    task = await make_task(kind=TaskKind.VISIT_URL, config={"url": PAGE, "minDwellMs": 30_000}, pool=10 * G)
    wallet = wallet_address()
    await start_visit(client, task, "fp-0001")
    clock.advance(seconds=20)
    await start_visit(client, task, "fp-0001")
    clock.advance(milliseconds=9999)
    status, body = await complete(client, task, wallet, dwellMs=30_000)
    assert (status, body["reason"]) == (400, "dwell_too_short")
    clock.advance(milliseconds=1)
    status, body = await complete(client, task, wallet, dwellMs=30_000)
    assert status == 201, body


async def test_a_further_completion_needs_a_new_visit(client, clock):
    task = await visit_task(max_per_wallet=2, max_per_fingerprint=2)
    wallet = wallet_address()
    assert (await visited_and_completed(client, clock, task, wallet))[0] == 201
    status, body = await complete(client, task, wallet, dwellMs=5500)
    assert (status, body["reason"]) == (400, "visit_not_started")
    assert (await visited_and_completed(client, clock, task, wallet))[0] == 201
    assert await Completion.filter(task_id=task.id).count() == 2


async def test_proof_keys_must_be_those_of_the_verifier(client, clock):
    task = await visit_task()
    wallet = wallet_address()
    await start_visit(client, task, "fp-0001")
    clock.advance(seconds=6)
    status, body = await complete(client, task, wallet)
    assert (status, body["error"], body["missing"], body["extra"]) == (400, "invalid_proof", ["dwellMs"], [])
    assert "missing dwellMs" in body["message"]
    status, body = await complete(client, task, wallet, dwellMs=5500, answer="x")
    assert (status, body["error"], body["missing"], body["extra"]) == (400, "invalid_proof", [], ["answer"])
    assert "unexpected answer" in body["message"] and body["field"] == "proof.answer"
    await nothing_recorded()


async def test_body_validation(client, clock):
    task = await visit_task()
    wallet = wallet_address()
    cases = [
        ({"wallet": wallet, "fingerprint": "fp", "proof": {}}, "missing_field", "taskId"),
        ({"taskId": task.id, "fingerprint": "fp", "proof": {}}, "missing_field", "wallet"),
        ({"taskId": task.id, "wallet": wallet, "proof": {}}, "missing_field", "fingerprint"),
        ({"taskId": task.id, "wallet": wallet, "fingerprint": "fp"}, "missing_field", "proof"),
        ({"taskId": task.id, "wallet": wallet, "fingerprint": "fp", "proof": []}, "invalid_field", "proof"),
        ({"taskId": task.id, "wallet": wallet, "fingerprint": "", "proof": {}}, "invalid_field", "fingerprint"),
        ({"taskId": task.id, "wallet": wallet, "fingerprint": "f" * 129, "proof": {}}, "invalid_field",
         "fingerprint"),
        ({"taskId": task.id, "wallet": "0x1234", "fingerprint": "fp", "proof": {"dwellMs": 5000}},
         "invalid_wallet", "wallet"),
        ({"taskId": task.id, "wallet": "0x52908400098527886E0F7030069857D2E4169EE7".replace("E7", "e7"),
          "fingerprint": "fp", "proof": {"dwellMs": 5000}}, "invalid_wallet", "wallet"),
    ]
    for body, code, field in cases:
        response = await client.post("/api/tasks/complete", json=body)
        answer = await response.get_json()
        assert (response.status_code, answer["error"], answer.get("field")) == (400, code, field), body
    response = await client.post("/api/tasks/complete", data="taskId=x",
                                 headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert response.status_code == 415
    response = await client.post("/api/tasks/complete", data="taskId=x", headers={"Content-Type": "text/plain"})
    assert (response.status_code, (await response.get_json())["error"]) == (400, "bad_request")  # not JSON
    await nothing_recorded()


async def test_a_client_cannot_choose_the_amount_or_the_points(client, clock):
    """KNOWN-HOLES 1 and 2: the reward is the task's, never the request's; extra keys are refused."""
    task = await visit_task(reward_points=10, reward_gs=G)
    wallet = wallet_address()
    await start_visit(client, task, "fp-0001")
    clock.advance(seconds=6)
    for extra in ({"amount": "1000"}, {"points": 1000}, {"recipient": wallet_address()}, {"gs": 1000}):
        response = await client.post("/api/tasks/complete", json={
            "taskId": task.id, "wallet": wallet, "fingerprint": "fp-0001", "proof": {"dwellMs": 5500}, **extra})
        body = await response.get_json()
        assert (response.status_code, body["error"], body["field"]) == (400, "invalid_field", next(iter(extra)))
    await nothing_recorded()
    status, body = await complete(client, task, wallet, dwellMs=5500)
    assert (status, body["awarded"]) == (201, {"points": 10, "gs": 1})
    assert body["transaction"]["amount"] == str(G) and body["transaction"]["recipient"].lower() == wallet


async def test_unknown_and_unavailable_tasks(client, clock):
    wallet = wallet_address()
    for task_id in ("task_unknownunknownunk", "cmp_notataskatallnotatask", "x"):
        response = await client.post("/api/tasks/complete", json={
            "taskId": task_id, "wallet": wallet, "fingerprint": "fp", "proof": {"dwellMs": 5000}})
        assert (response.status_code, (await response.get_json())["error"]) == (404, "not_found")

    now = clock.now()
    paused = await make_campaign(status=CampaignStatus.PAUSED)
    over = await make_campaign(ends_at=now - timedelta(minutes=1))
    cases = [
        (await visit_task(active=False), "task_inactive"),
        (await visit_task(campaign=paused), "task_inactive"),
        (await visit_task(starts_at=now + timedelta(hours=1)), "task_not_started"),
        (await visit_task(ends_at=now), "task_ended"),
        (await visit_task(campaign=over), "task_ended"),
    ]
    for task, code in cases:
        status, body = await complete(client, task, wallet, dwellMs=5000)
        assert (status, body["error"]) == (409, code), code
    poll = await make_task(kind=TaskKind.POLL, config={"question": "Q?", "options": [
        {"id": "a", "label": "A"}, {"id": "b", "label": "B"}]})
    status, body = await complete(client, poll, wallet, optionId="a")
    assert (status, body["error"], body["field"]) == (400, "invalid_field", "taskId")
    await nothing_recorded()


async def test_a_repeat_is_409_with_the_earlier_completion_and_its_claim(client, clock):
    task = await visit_task()
    wallet = wallet_address()
    status, first = await visited_and_completed(client, clock, task, wallet)
    assert status == 201
    await start_visit(client, task, "fp-0001")
    clock.advance(seconds=6)
    status, body = await complete(client, task, wallet, dwellMs=5500)
    assert (status, body["error"]) == (409, "already_completed")
    assert body["completionId"] == first["completionId"]
    assert body["transaction"] == first["transaction"]
    # The repeat's proof is not even looked at: a repeat with no visit is still the same answer.
    status, again = await complete(client, task, wallet, "fp-0001", dwellMs=1)
    assert (status, again["completionId"], again["transaction"]) == (409, first["completionId"], first["transaction"])
    assert await Completion.all().count() == 1 and await Claim.all().count() == 1


async def test_one_device_completes_once_whatever_the_wallet(client, clock):
    """KNOWN-HOLES 15: a second wallet on the same device is refused; the other wallet's claim is not shown."""
    task = await visit_task()
    status, first = await visited_and_completed(client, clock, task, wallet_address(), "fp-device")
    assert status == 201
    status, body = await visited_and_completed(client, clock, task, wallet_address(), "fp-device")
    assert (status, body["error"], body["completionId"], body["transaction"]) == (
        409, "already_completed", first["completionId"], None)
    assert await Completion.all().count() == 1


async def test_limits_above_one_are_slots(client, clock):
    task = await visit_task(max_per_wallet=2, max_per_fingerprint=3)
    wallet = wallet_address()
    results = [await visited_and_completed(client, clock, task, wallet) for _ in range(3)]
    assert [status for status, _ in results] == [201, 201, 409]
    assert results[2][1]["completionId"] == results[1][1]["completionId"]
    slots = await Completion.filter(task_id=task.id).order_by("wallet_slot").values_list("wallet_slot",
                                                                                         "fingerprint_slot")
    assert slots == [(0, 0), (1, 1)]


async def test_points_only_when_the_pool_and_the_campaign_are_empty(client, clock):
    task = await visit_task(pool=0, reward_points=7, reward_gs=G)
    status, body = await visited_and_completed(client, clock, task, wallet_address())
    assert (status, body["awarded"], body["transaction"]) == (201, {"points": 7, "gs": 0}, None)
    completion = await Completion.get(id=body["completionId"])
    assert (completion.points, int(completion.gs_amount), completion.claim_id) == (7, 0, None)
    assert await Claim.all().count() == 0


async def test_a_zero_reward_task_pays_points_only(client, clock):
    task = await visit_task(reward_gs=0)
    status, body = await visited_and_completed(client, clock, task, wallet_address())
    assert (status, body["awarded"]["gs"], body["transaction"]) == (201, 0, None)
    assert await ledger.balance(ledger.task_pool(task.id)) == 10 * G


async def test_the_campaign_budget_pays_when_the_task_pool_is_empty(client, clock):
    campaign = await make_campaign(budget=G + G // 2)
    task = await visit_task(campaign=campaign, pool=G, reward_gs=G)
    results = [await visited_and_completed(client, clock, task, wallet_address(), f"fp-{index}")
               for index in range(3)]
    assert [body["awarded"]["gs"] for _, body in results] == [1, 1, 0]
    assert await ledger.balance(ledger.task_pool(task.id)) == 0
    assert await ledger.balance(ledger.campaign(campaign.id)) == G // 2
    sources = await LedgerTransaction.filter(kind="claim_issue").values_list("postings__account__kind", flat=True)
    assert sorted(kind for kind in sources if kind != "claims") == ["campaign", "task"]


async def test_a_claim_is_paid_only_from_its_own_tasks_budget(client, clock):
    """KNOWN-HOLES 9: another task's pool, or another campaign's budget, never pays this task's reward."""
    rich = await visit_task(pool=100 * G, campaign=await make_campaign(budget=100 * G))
    poor = await visit_task(pool=0, campaign=await make_campaign(budget=0))
    status, body = await visited_and_completed(client, clock, poor, wallet_address())
    assert (status, body["awarded"]["gs"], body["transaction"]) == (201, 0, None)
    assert await ledger.balance(ledger.task_pool(rich.id)) == 100 * G
    assert await ledger.balance(ledger.campaign(rich.campaign_id)) == 100 * G


async def test_fifty_identical_completions_make_one_completion_and_one_claim(client, clock):
    task = await visit_task(pool=5 * G, reward_gs=G)
    wallet = wallet_address()
    await start_visit(client, task, "fp-0001")
    clock.advance(seconds=6)
    results = await asyncio.gather(*(complete(client, task, wallet, dwellMs=5500) for _ in range(50)))

    created = [body for status, body in results if status == 201]
    repeats = [body for status, body in results if status != 201]
    assert len(created) == 1
    assert {(body["error"], body["completionId"]) for body in repeats} == {
        ("already_completed", created[0]["completionId"])}
    assert all(body["transaction"] == created[0]["transaction"] for body in repeats)
    assert await Completion.all().count() == 1
    assert await Claim.all().count() == 1
    assert await LedgerTransaction.filter(kind="claim_issue").count() == 1
    assert await ledger.balance(ledger.task_pool(task.id)) == 4 * G


async def test_concurrent_completions_never_overdraw_the_pool(client, clock):
    task = await visit_task(pool=3 * G, reward_gs=G)
    people = [(wallet_address(), f"fp-{index:02}") for index in range(12)]
    for _, fingerprint in people:
        await start_visit(client, task, fingerprint)
    clock.advance(seconds=6)
    results = await asyncio.gather(*(complete(client, task, wallet, fingerprint, dwellMs=5500)
                                     for wallet, fingerprint in people))

    assert [status for status, _ in results] == [201] * 12
    paid = [body for _, body in results if body["transaction"] is not None]
    assert len(paid) == 3
    assert sorted(int(body["transaction"]["nonce"]) for body in paid) == sorted(
        {int(body["transaction"]["nonce"]) for body in paid})
    assert await ledger.balance(ledger.task_pool(task.id)) == 0
    assert await ledger.balance(ledger.outstanding_claims("G$")) == 3 * G
    assert sum(int(amount) for amount in await Claim.all().values_list("amount", flat=True)) == 3 * G
    assert await Completion.filter(task_id=task.id).count() == 12


async def test_preflight_and_responses_are_open_to_any_origin(client, clock):
    response = await client.options("/api/tasks/complete", headers={
        "Origin": "https://publisher.example", "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "Content-Type"})
    assert response.status_code == 200
    assert response.headers["Access-Control-Allow-Origin"] == "*"
    assert "Access-Control-Allow-Credentials" not in response.headers
    task = await visit_task()
    await start_visit(client, task, "fp-0001")
    clock.advance(seconds=6)
    response = await client.post("/api/tasks/complete", headers={"Origin": "https://publisher.example"}, json={
        "taskId": task.id, "wallet": wallet_address(), "fingerprint": "fp-0001", "proof": {"dwellMs": 5500}})
    assert response.status_code == 201
    assert response.headers["Access-Control-Allow-Origin"] == "*"

