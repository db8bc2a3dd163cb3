"""QUIZ and SIGN_MESSAGE through HTTP: every accept and reject path, the message endpoint with its single-use
nonces, EIP-1271 contract wallets, the limit on wrong answers per wallet and per device (also under concurrent
guessing, with one wallet or many), and the status endpoint that shows what a viewer completed without any task
secret."""

from __future__ import annotations

import asyncio
from datetime import timedelta

from eth_account import Account
from eth_account.messages import encode_defunct

from adnet.chain.transact import send_transaction
from adnet.tasks.models import Completion, TaskAttempt, TaskKind, TaskMessageNonce
from tests.api.test_auth import OWNED_WALLET_BYTECODE
from tests.api.test_tasks import complete, nothing_recorded, visited_and_completed
from tests.auth_helpers import UNRECOVERABLE_SIGNATURES
from tests.chain.helpers import user
from tests.factories import G, make_campaign, make_task, wallet_address

QUIZ = {"question": "Which token pays adnet rewards?", "answers": ["GoodDollar", "G$"], "choices": ["G$", "SOV"]}
PLEDGE = "I support regenerative finance.\nWallet: {wallet}\nNonce: {nonce}"


async def quiz_task(**fields):
    return await make_task(kind=TaskKind.QUIZ, config=fields.pop("config", QUIZ), pool=10 * G, **fields)


async def sign_task(**fields):
    return await make_task(kind=TaskKind.SIGN_MESSAGE, config={"message": PLEDGE}, pool=10 * G, **fields)


async def issued_message(client, task, wallet: str) -> dict:
    response = await client.get(f"/api/tasks/{task.id}/message", query_string={"wallet": wallet})
    assert response.status_code == 200, await response.get_json()
    return await response.get_json()


def signed(account, message: str) -> str:
    return account.sign_message(encode_defunct(text=message)).signature.to_0x_hex()


# QUIZ

async def test_quiz_accepts_an_accepted_answer_trimmed_case_folded_and_nfkc(client):
    fullwidth = "".join(chr(ord(letter) + 0xFEE0) for letter in "GOODDOLLAR")  # NFKC folds these to ASCII
    for answer in ("  gooddollar ", fullwidth, "GOODDOLLAR\t", "g$"):
        task = await quiz_task()
        status, body = await complete(client, task, wallet_address(), answer=answer)
        assert (status, body["awarded"]["gs"]) == (201, 1), answer


async def test_quiz_allows_three_wrong_tries_and_never_shows_the_answer(client):
    task = await quiz_task()
    wallet = wallet_address()
    lefts = []
    for answer in ("SOV", "ETH", "Bitcoin"):
        status, body = await complete(client, task, wallet, answer=answer)
        assert (status, body["error"], body["field"]) == (400, "wrong_answer", "proof.answer")
        assert "GoodDollar" not in str(body) and "G$" not in str(body)
        lefts.append(body["attemptsLeft"])
    assert lefts == [2, 1, 0]
    status, body = await complete(client, task, wallet, answer="G$")
    assert (status, body["error"]) == (409, "too_many_attempts")
    await nothing_recorded()
    # The limit is the wallet's: another wallet on another device still has its tries.
    status, _ = await complete(client, task, wallet_address(), "fp-other", answer="G$")
    assert status == 201


async def test_quiz_answer_must_be_a_short_text(client):
    task = await quiz_task()
    for answer in (42, "", "   ", "x" * 201, None):
        status, body = await complete(client, task, wallet_address(), answer=answer)
        assert (status, body["error"], body["field"]) == (400, "invalid_field", "proof.answer"), answer
    assert await TaskAttempt.all().count() == 0


async def test_concurrent_guesses_get_no_more_wrong_answers_checked_than_the_limit(client):
    """Ten different answers at once from one wallet, the right one among them: at most three wrong ones are
    checked (a right answer gives its try back, so it may be checked beside them), the rest are refused unread:
    ``too_many_attempts``, or ``already_completed`` once the right answer has committed (a right answer needs no
    write before its completion's transaction, so it often commits while the others still run)."""
    task = await quiz_task(config={**QUIZ, "maxAttempts": 3})
    wallet = wallet_address()
    guesses = ["SOV", "ETH", "BTC", "DAI", "USDC", "CELO", "OP", "ARB", "G$", "RBTC"]
    results = await asyncio.gather(*(complete(client, task, wallet, answer=guess) for guess in guesses))
    codes = [body.get("error", "completed") for _, body in results]
    assert codes.count("wrong_answer") <= 3
    assert codes.count("completed") <= 1
    assert set(codes) <= {"completed", "wrong_answer", "too_many_attempts", "already_completed"}
    assert codes.count("too_many_attempts") + codes.count("already_completed") >= 6
    assert await TaskAttempt.filter(task_id=task.id, wallet=wallet).count() <= 3
    assert await Completion.filter(task_id=task.id).count() == codes.count("completed")


async def test_one_device_gets_three_wrong_tries_whatever_the_wallets(client):
    """A device guessing with a fresh wallet each time: three wrong answers are checked, then every try is refused
    unread, the right answer too (a fourth wrong try would otherwise have narrowed the choices)."""
    task = await quiz_task()
    lefts = []
    for guess in ("SOV", "ETH", "BTC"):
        status, body = await complete(client, task, wallet_address(), "fp-guesser", answer=guess)
        assert (status, body["error"]) == (400, "wrong_answer")
        lefts.append(body["attemptsLeft"])
    assert lefts == [2, 1, 0]
    for guess in ("DAI", "USDC", "CELO", "G$"):
        status, body = await complete(client, task, wallet_address(), "fp-guesser", answer=guess)
        assert (status, body["error"]) == (409, "too_many_attempts"), guess
    await nothing_recorded()
    assert await TaskAttempt.filter(task_id=task.id, fingerprint="fp-guesser").count() == 3
    # A wallet that guessed wrong on that device has two tries left on another device, where it answers right.
    first_guesser = await TaskAttempt.get(task_id=task.id, fingerprint="fp-guesser", fingerprint_attempt=1)
    status, _ = await complete(client, task, first_guesser.wallet, "fp-other", answer="G$")
    assert status == 201


async def test_a_wallets_wrong_tries_on_a_device_count_for_both(client):
    """Two wrong tries of one wallet on a device leave one to any wallet there; the wallet has one left anywhere."""
    task = await quiz_task(max_per_fingerprint=2)
    wallet = wallet_address()
    for guess in ("SOV", "ETH"):
        assert (await complete(client, task, wallet, "fp-1", answer=guess))[0] == 400
    status, body = await complete(client, task, wallet_address(), "fp-1", answer="BTC")
    assert (status, body["attemptsLeft"]) == (400, 0)
    status, body = await complete(client, task, wallet_address(), "fp-1", answer="G$")
    assert (status, body["error"]) == (409, "too_many_attempts")
    status, body = await complete(client, task, wallet, "fp-2", answer="DAI")
    assert (status, body["attemptsLeft"]) == (400, 0)
    status, body = await complete(client, task, wallet, "fp-3", answer="G$")
    assert (status, body["error"]) == (409, "too_many_attempts")


async def test_wrong_guesses_at_once_from_one_device_with_many_wallets_get_three_checked(client):
    task = await quiz_task(config={**QUIZ, "maxAttempts": 3})
    guesses = [f"wrong {index}" for index in range(20)]
    results = await asyncio.gather(*(complete(client, task, wallet_address(), "fp-farm", answer=guess)
                                     for guess in guesses))
    codes = sorted(body["error"] for _, body in results)
    assert codes == ["too_many_attempts"] * 17 + ["wrong_answer"] * 3
    assert sorted(await TaskAttempt.filter(task_id=task.id, fingerprint="fp-farm").values_list(
        "fingerprint_attempt", flat=True)) == [1, 2, 3]
    status, body = await complete(client, task, wallet_address(), "fp-farm", answer="G$")
    assert (status, body["error"]) == (409, "too_many_attempts")
    await nothing_recorded()


async def test_guesses_at_once_from_one_device_with_the_answer_among_them(client):
    """Twenty guesses at once from one device, each with its own wallet, the right one among them: at most three
    wrong ones are checked and at most one completes (the device's limit), whatever order they run in: the others
    are refused unread, ``too_many_attempts`` or, once the right answer has committed, ``already_completed``."""
    task = await quiz_task(config={**QUIZ, "maxAttempts": 3})
    guesses = [f"wrong {index}" for index in range(19)] + ["G$"]
    results = await asyncio.gather(*(complete(client, task, wallet_address(), "fp-farm", answer=guess)
                                     for guess in guesses))
    codes = [body.get("error", "completed") for _, body in results]
    assert codes.count("wrong_answer") <= 3
    assert codes.count("completed") <= 1
    assert set(codes) <= {"completed", "wrong_answer", "too_many_attempts", "already_completed"}
    assert await TaskAttempt.filter(task_id=task.id, fingerprint="fp-farm").count() == 3
    assert await Completion.filter(task_id=task.id).count() == codes.count("completed")


async def test_a_quiz_repeat_burns_no_try(client):
    task = await quiz_task()
    wallet = wallet_address()
    status, first = await complete(client, task, wallet, answer="G$")
    assert status == 201
    for _ in range(5):
        status, body = await complete(client, task, wallet, answer="wrong")
        assert (status, body["error"], body["completionId"]) == (409, "already_completed", first["completionId"])
    assert await TaskAttempt.all().count() == 0


# SIGN_MESSAGE

async def test_sign_message_accepts_the_issued_message_signed_by_the_wallet(client, clock):
    task = await sign_task()
    account = Account.create()
    issued = await issued_message(client, task, account.address.lower())
    assert issued["message"] == PLEDGE.format(wallet=account.address, nonce=issued["nonce"])
    assert issued["wallet"] == account.address
    assert issued["expiresAt"] == (clock.now() + timedelta(minutes=10)).isoformat().replace("+00:00", "Z")
    status, body = await complete(client, task, account.address, message=issued["message"],
                                  signature=signed(account, issued["message"]))
    assert (status, body["awarded"]["gs"]) == (201, 1)
    assert (await TaskMessageNonce.get(nonce=issued["nonce"])).used_at == clock.now()


async def test_sign_message_rejections_change_nothing(client, clock):
    task = await sign_task(max_per_wallet=3, max_per_fingerprint=3)
    account, stranger = Account.create(), Account.create()
    wallet = account.address.lower()
    issued = await issued_message(client, task, wallet)
    message = issued["message"]
    not_the_wallets = [signed(stranger, message), *UNRECOVERABLE_SIGNATURES.values(), "0x1234", "not-hex", "0x", 12,
                       None]
    for signature in not_the_wallets:  # 401, as a signature refused anywhere (adnet.chain.signatures)
        status, body = await complete(client, task, wallet, message=message, signature=signature)
        assert (status, body["error"], body["field"]) == (401, "invalid_signature", "proof.signature"), signature
    cases = [
        (message + " ", signed(account, message + " "), "message_not_issued"),
        (PLEDGE.format(wallet=account.address, nonce="madeUpNonce"),
         signed(account, PLEDGE.format(wallet=account.address, nonce="madeUpNonce")), "message_not_issued"),
        (12, signed(account, message), "invalid_message"),
    ]
    for text, signature, reason in cases:
        status, body = await complete(client, task, wallet, message=text, signature=signature)
        assert (status, body["error"], body["reason"]) == (400, "invalid_proof", reason), reason
    # A nonce issued to another wallet does not serve this one.
    other = await issued_message(client, task, stranger.address)
    status, body = await complete(client, task, wallet, message=other["message"],
                                  signature=signed(account, other["message"]))
    assert body["reason"] == "message_not_issued"
    await nothing_recorded()
    assert (await TaskMessageNonce.get(nonce=issued["nonce"])).used_at is None


async def test_a_signed_message_counts_once_and_expires(client, clock):
    """KNOWN-HOLES 15: a signed message cannot be replayed, even where the task allows several completions."""
    task = await sign_task(max_per_wallet=3, max_per_fingerprint=3)
    account = Account.create()
    issued = await issued_message(client, task, account.address)
    proof = {"message": issued["message"], "signature": signed(account, issued["message"])}
    status, _ = await complete(client, task, account.address, **proof)
    assert status == 201
    status, body = await complete(client, task, account.address, **proof)
    assert (status, body["reason"]) == (400, "message_not_issued")

    late = await issued_message(client, task, account.address)
    clock.advance(minutes=10, seconds=1)
    status, body = await complete(client, task, account.address, message=late["message"],
                                  signature=signed(account, late["message"]))
    assert (status, body["reason"]) == (400, "message_not_issued")
    assert await Completion.filter(task_id=task.id).count() == 1


async def test_a_contract_wallet_signs_through_eip_1271(client, app):
    task = await sign_task()
    chain = app.extensions["adnet"].chain
    owner, stranger = Account.create(), Account.create()
    constructor_arg = bytes(12) + bytes.fromhex(owner.address[2:])
    receipt = await send_transaction(chain.w3, user(1), {"data": "0x" + OWNED_WALLET_BYTECODE + constructor_arg.hex()})
    contract_wallet = receipt["contractAddress"]

    issued = await issued_message(client, task, contract_wallet)
    status, body = await complete(client, task, contract_wallet, message=issued["message"],
                                  signature=signed(stranger, issued["message"]))
    assert (status, body["error"]) == (401, "invalid_signature")
    status, body = await complete(client, task, contract_wallet, message=issued["message"],
                                  signature=signed(owner, issued["message"]))
    assert status == 201
    assert body["transaction"]["recipient"] == contract_wallet


async def test_the_message_endpoint_validates(client):
    task = await sign_task()
    quiz = await quiz_task()
    for params, status, code in (({}, 400, "missing_field"), ({"wallet": "0x12"}, 400, "invalid_wallet")):
        response = await client.get(f"/api/tasks/{task.id}/message", query_string=params)
        assert (response.status_code, (await response.get_json())["error"]) == (status, code)
    response = await client.get(f"/api/tasks/{quiz.id}/message", query_string={"wallet": wallet_address()})
    assert response.status_code == 400
    response = await client.get("/api/tasks/task_nonenonenonenonenone/message",
                                query_string={"wallet": wallet_address()})
    assert response.status_code == 404
    assert await TaskMessageNonce.all().count() == 0


# Status

async def test_status_lists_what_a_wallet_or_device_completed_without_secrets(client, clock):
    campaign = await make_campaign()
    quiz = await quiz_task(campaign=campaign)
    visit = await make_task(kind=TaskKind.VISIT_URL, config={"url": "https://advertiser.example/page"}, pool=G)
    wallet = wallet_address()
    _, done_quiz = await complete(client, quiz, wallet, "fp-a", answer="G$")
    _, done_visit = await visited_and_completed(client, clock, visit, wallet_address(), "fp-b")

    response = await client.get("/api/tasks/status", query_string={"wallet": wallet, "fingerprint": "fp-b"},
                                headers={"Origin": "https://publisher.example"})
    assert response.status_code == 200
    assert response.headers["Access-Control-Allow-Origin"] == "*"
    rows = (await response.get_json())["completions"]
    assert {row["completionId"] for row in rows} == {done_quiz["completionId"], done_visit["completionId"]}
    row = next(row for row in rows if row["taskId"] == quiz.id)
    assert row == {"taskId": quiz.id, "campaignId": campaign.id, "kind": "QUIZ",
                   "completionId": done_quiz["completionId"], "completedAt": "2026-01-01T00:00:00Z",
                   "awarded": {"points": 10, "gs": 1}, "claimStatus": "issued",
                   "claimRef": done_quiz["transaction"]["claimRef"]}
    assert "GoodDollar" not in str(rows) and "answers" not in str(rows)

    response = await client.get("/api/tasks/status", query_string={"wallet": wallet, "campaignId": campaign.id})
    assert [row["taskId"] for row in (await response.get_json())["completions"]] == [quiz.id]
    response = await client.get("/api/tasks/status", query_string={"fingerprint": "fp-nobody"})
    assert (await response.get_json())["completions"] == []
    response = await client.get("/api/tasks/status")
    assert (response.status_code, (await response.get_json())["error"]) == (400, "missing_field")
    response = await client.get("/api/tasks/status", query_string={"wallet": "nope"})
    assert (response.status_code, (await response.get_json())["error"]) == (400, "invalid_wallet")
