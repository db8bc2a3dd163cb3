"""Signatures as a class (``adnet.chain.signatures.check_wallet_signature``), property-based (hypothesis) on every
route that takes one: ``POST /api/auth/verify``, ``POST /api/rewards/session``, the portal's ``POST
/portal/signin`` and a SIGN_MESSAGE ``POST /api/tasks/complete``. Whatever string stands where the signature goes
(any text; ``0x`` and any bytes, none, a few, 65 or thousands; the wallet's own signature made high-``s``, given
another ``v``, cut, lengthened, in capitals or with a space) is 401 ``invalid_signature``, never a 5xx, and nothing
changes: no session opens, the nonce stays unused (the wallet's real signature still signs in with it afterwards),
no completion or claim is written. A contract wallet (EIP-1271) still reaches its contract with any bytes.
"""

from __future__ import annotations

import hypothesis
import pytest
from eth_account import Account
from eth_account.messages import defunct_hash_message, encode_defunct
from hypothesis import HealthCheck, given
from hypothesis import strategies as st

from adnet.accounts.commands import SignIn
from adnet.accounts.models import AuthNonce, Session
from adnet.chain.signatures import CURVE_ORDER, MAX_SIGNATURE_BYTES, recover_signer
from adnet.chain.transact import send_transaction
from adnet.core.errors import Invalid
from adnet.core.inputs import parse
from adnet.money.models import Claim
from adnet.tasks.models import Completion, TaskMessageNonce
from tests.api.test_auth import ACCEPTS_EVERYTHING_BYTECODE
from tests.api.test_tasks_verifiers import issued_message, sign_task, signed
from tests.auth_helpers import sign, signed_message
from tests.chain.helpers import user
from tests.conftest import make_settings
from tests.portal.conftest import csrf_of


def _high_s(valid: str) -> str:
    """The wallet's own signature's twin of high ``s`` (``s' = n - s``, the other ``v``): the same signer to a
    permissive ecrecover, refused here as OpenZeppelin's ECDSA refuses it."""
    raw = bytes.fromhex(valid[2:])
    s = CURVE_ORDER - int.from_bytes(raw[32:64], "big")
    return "0x" + (raw[:32] + s.to_bytes(32, "big") + bytes((55 - raw[64],))).hex()  # v: 27 <-> 28


def _with_v(valid: str, v: int) -> str:
    return valid[:-2] + f"{v:02x}"


# What a client may put where a signature goes, given the wallet's real signature of the message (``valid``).
SIGNATURES = st.one_of(
    st.text(max_size=300).map(lambda text: lambda valid: text),
    st.binary(max_size=200).map(lambda raw: lambda valid: "0x" + raw.hex()),
    st.binary(min_size=65, max_size=65).map(lambda raw: lambda valid: "0x" + raw.hex()),
    st.binary(min_size=64, max_size=64).flatmap(lambda rs: st.sampled_from([0, 1, 27, 28]).map(
        lambda v: lambda valid: "0x" + rs.hex() + f"{v:02x}")),
    st.just(lambda valid: "0x" + "00" * (MAX_SIGNATURE_BYTES + 1)),
    st.just(lambda valid: _high_s(valid)),
    st.integers(0, 255).filter(lambda v: v not in (0, 1, 27, 28)).map(lambda v: lambda valid: _with_v(valid, v)),
    st.integers(1, 64).map(lambda cut: lambda valid: valid[:-2 * cut]),
    st.binary(min_size=1, max_size=40).map(lambda extra: lambda valid: valid + extra.hex()),
    st.sampled_from([str.upper, lambda valid: valid.replace("0x", "0X"), lambda valid: valid[2:],
                     lambda valid: valid[:40] + " " + valid[40:], lambda valid: valid + "\n",
                     lambda valid: valid + "\x00", lambda valid: valid[:-1], lambda valid: "0x" + valid]),
)
EXAMPLES = hypothesis.settings(max_examples=80, deadline=None, derandomize=True,
                               suppress_health_check=[HealthCheck.function_scoped_fixture])


def _mangled(mangle, valid: str) -> str:
    signature = mangle(valid)
    hypothesis.assume(signature != valid)
    return signature


@pytest.fixture
def settings(database_url, tmp_path):
    """The suite's settings, with limits no run of examples reaches."""
    return make_settings(database_url, tmp_path, ADNET_RATE_LIMIT_AUTH="100000/60",
                         ADNET_RATE_LIMIT_PUBLIC="100000/60")


async def nothing_opened() -> None:
    assert await Session.all().count() == 0
    assert await AuthNonce.exclude(used_at=None).count() == 0


@pytest.fixture
async def sign_in_message(client):
    """A fresh sign-in message of a wallet, and the wallet's real signature of it."""
    account = Account.create()
    message, signature = await signed_message(client, account)
    return message, signature


@EXAMPLES
@given(mangle=SIGNATURES)
async def test_any_string_but_the_wallets_signature_is_401_at_sign_in(client, sign_in_message, mangle):
    message, valid = sign_in_message
    response = await client.post("/api/auth/verify", json={"message": message, "signature": _mangled(mangle, valid)})
    body = await response.get_json()
    assert (response.status_code, body["error"], body["field"]) == (401, "invalid_signature", "signature"), body
    await nothing_opened()


async def test_after_any_refused_signature_the_real_one_signs_in_with_the_same_nonce(client, sign_in_message):
    message, valid = sign_in_message
    for refused in ("0x", _high_s(valid), _with_v(valid, 29), valid[:-2], valid + "00", "0x" + "00" * 65):
        response = await client.post("/api/auth/verify", json={"message": message, "signature": refused})
        assert response.status_code == 401, refused
    await nothing_opened()
    response = await client.post("/api/auth/verify", json={"message": message, "signature": valid})
    assert response.status_code == 200


@pytest.fixture
async def rewards_message(client):
    account = Account.create()
    written = await client.post("/api/rewards/message", json={"address": account.address})
    message = (await written.get_json())["message"]
    return message, sign(account, message)


@EXAMPLES
@given(mangle=SIGNATURES)
async def test_any_string_but_the_wallets_signature_is_401_at_the_rewards_sign_in(client, rewards_message, mangle):
    message, valid = rewards_message
    response = await client.post("/api/rewards/session",
                                 json={"message": message, "signature": _mangled(mangle, valid)})
    body = await response.get_json()
    assert (response.status_code, body["error"], body["field"]) == (401, "invalid_signature", "signature"), body
    await nothing_opened()


@pytest.fixture
async def portal_message(client):
    """The portal's sign-in page's CSRF token, a message the server wrote for a wallet, and its real signature."""
    account = Account.create()
    html = await (await client.get("/portal/signin")).get_data(as_text=True)
    written = await client.post("/portal/signin/message", form={"address": account.address,
                                                                "csrf_token": csrf_of(html)})
    message = (await written.get_json())["message"]
    return csrf_of(html), message, sign(account, message)


@EXAMPLES
@given(mangle=SIGNATURES)
async def test_any_string_but_the_wallets_signature_is_401_at_the_portals_sign_in(client, portal_message, mangle):
    csrf, message, valid = portal_message
    signature = _mangled(mangle, valid)
    hypothesis.assume(not any(0xD800 <= ord(character) <= 0xDFFF for character in signature))  # not UTF-8
    # A form's field is trimmed, and a blank one is a field not given (400 missing_field, docs/auth.md).
    hypothesis.assume(signature.strip() not in ("", valid))
    response = await client.post("/portal/signin", form={"message": message, "signature": signature,
                                                         "csrf_token": csrf})
    assert response.status_code == 401
    assert 'data-error="invalid_signature"' in await response.get_data(as_text=True)
    await nothing_opened()


@pytest.fixture
async def task_message(client):
    """A SIGN_MESSAGE task, a wallet, the message issued to it and its real signature."""
    task, account = await sign_task(), Account.create()
    issued = await issued_message(client, task, account.address)
    return task, account.address, issued["message"], signed(account, issued["message"])


async def complete(client, task, wallet: str, message: str, signature: object):
    response = await client.post("/api/tasks/complete", json={
        "taskId": task.id, "wallet": wallet, "fingerprint": "fp-signatures",
        "proof": {"message": message, "signature": signature}})
    return response.status_code, await response.get_json()


@EXAMPLES
@given(mangle=SIGNATURES)
async def test_any_string_but_the_wallets_signature_is_401_for_a_sign_message_task(client, task_message, mangle):
    task, wallet, message, valid = task_message
    status, body = await complete(client, task, wallet, message, _mangled(mangle, valid))
    assert (status, body["error"], body["field"]) == (401, "invalid_signature", "proof.signature"), body
    assert await Completion.all().count() == 0 and await Claim.all().count() == 0
    assert await TaskMessageNonce.exclude(used_at=None).count() == 0


async def test_a_signature_that_is_not_a_string_is_refused_by_each_routes_shape(client, sign_in_message,
                                                                                   task_message):
    """Documented (docs/auth.md): sign-in bodies type ``signature`` as a string, so another JSON value is the
    body's 400 ``invalid_field``; a task's proof has no schema, so there it is the signature check's 401."""
    message, _ = sign_in_message
    task, wallet, task_text, valid = task_message
    for value in (None, 65, ["0x00"], {"r": "0x00"}, True):
        response = await client.post("/api/auth/verify", json={"message": message, "signature": value})
        body = await response.get_json()
        assert (response.status_code, body["error"], body["field"]) == (400, "invalid_field", "signature"), value
        status, body = await complete(client, task, wallet, task_text, value)
        assert (status, body["error"], body["field"]) == (401, "invalid_signature", "proof.signature"), value
    await nothing_opened()
    assert await Completion.all().count() == 0
    assert (await complete(client, task, wallet, task_text, valid))[0] == 201


async def test_a_nul_in_a_sign_in_message_is_an_invalid_message(client, sign_in_message):
    message, valid = sign_in_message
    for text in (message + "\x00", "\x00" + message, message.replace("\n", "\x00", 1)):
        response = await client.post("/api/auth/verify", json={"message": text, "signature": valid})
        body = await response.get_json()
        assert (response.status_code, body["error"], body["field"]) == (400, "invalid_message", "message"), body
    await nothing_opened()
    with pytest.raises(Invalid) as refused:  # the rest of a body still may not hold one
        parse(SignIn, {"message": message, "signature": valid, "other\x00": 1})
    assert refused.value.code == "invalid_field"


@pytest.fixture
async def contract_wallet(app) -> str:
    """A contract wallet whose ``isValidSignature`` accepts every signature (EIP-1271)."""
    receipt = await send_transaction(app.extensions["adnet"].chain.w3, user(1),
                                     {"data": "0x" + ACCEPTS_EVERYTHING_BYTECODE})
    return receipt["contractAddress"]


@EXAMPLES
@given(raw=st.binary(min_size=1, max_size=300))
async def test_a_contract_wallet_still_reaches_its_contract_with_any_bytes(client, contract_wallet, raw):
    message, _ = await signed_message(client, Account.create(), address=contract_wallet)
    response = await client.post("/api/auth/verify", json={"message": message, "signature": "0x" + raw.hex()})
    assert response.status_code == 200, await response.get_json()


def test_only_a_low_s_signature_of_the_wallet_recovers_it():
    account = Account.create()
    digest = defunct_hash_message(text="adnet")
    valid = sign(account, "adnet")
    assert recover_signer(digest, bytes.fromhex(valid[2:])) == account.address.lower()
    # eth-account's ecrecover takes the high-s twin for the same signer; adnet does not.
    assert Account.recover_message(encode_defunct(text="adnet"), signature=_high_s(valid)) == account.address
    assert recover_signer(digest, bytes.fromhex(_high_s(valid)[2:])) is None
    same_v = 0 if valid.endswith("1b") else 1  # v 27 or 28 written as 0 or 1
    assert recover_signer(digest, bytes.fromhex(_with_v(valid, same_v)[2:])) == account.address.lower()
    for v in (2, 26, 29, 255):
        assert recover_signer(digest, bytes.fromhex(_with_v(valid, v)[2:])) is None
    for raw in (b"", bytes(64), bytes(66), bytes(65), bytes(32) + CURVE_ORDER.to_bytes(32, "big") + b"\x1b"):
        assert recover_signer(digest, raw) is None
