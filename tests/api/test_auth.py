"""Sign-In with Ethereum through HTTP: a full sign-in, every refusal, bearer and cookie sessions, logout, expiry,
single-use nonces under concurrency, contract wallets (EIP-1271) and the rate limit."""

from __future__ import annotations

import asyncio
import hashlib
import random
from datetime import timedelta

import pytest
from eth_account import Account
from eth_utils import to_checksum_address
from tortoise.transactions import in_transaction

from adnet.accounts.models import AuthNonce, Session
from adnet.accounts.signin import MAX_MESSAGE_LENGTH
from adnet.app import create_app
from adnet.chain.transact import send_transaction
from tests.auth_helpers import UNRECOVERABLE_SIGNATURES, bearer, sign, sign_in, signed_message, siwe_message
from tests.chain.helpers import user
from tests.conftest import empty_database, make_settings
from web.sessions import SESSION_COOKIE

# OwnedWallet (Solidity 0.8.37, optimizer 200 runs, evm cancun): a minimal EIP-1271 contract wallet whose
# isValidSignature(hash, signature) answers 0x1626ba7e exactly when ecrecover(hash, signature) is its owner,
# the constructor's one argument.
#   contract OwnedWallet {
#       address public immutable owner;
#       constructor(address owner_) { owner = owner_; }
#       function isValidSignature(bytes32 hash, bytes calldata signature) external view returns (bytes4) {
#           if (signature.length != 65) return 0xffffffff;
#           bytes32 r = bytes32(signature[0:32]); bytes32 s = bytes32(signature[32:64]);
#           uint8 v = uint8(signature[64]);
#           return ecrecover(hash, v, r, s) == owner ? bytes4(0x1626ba7e) : bytes4(0xffffffff);
#       }
#   }
OWNED_WALLET_BYTECODE = (
    "60a0604052348015600e575f5ffd5b5060405161034e38038061034e833981016040819052602b91603b565b6001600160a01b031660"
    "80526066565b5f60208284031215604a575f5ffd5b81516001600160a01b0381168114605f575f5ffd5b9392505050565b6080516102"
    "ca6100845f395f8181606e015261014101526102ca5ff3fe608060405234801561000f575f5ffd5b5060043610610034575f3560e01c"
    "80631626ba7e146100385780638da5cb5b14610069575b5f5ffd5b61004b6100463660046101c4565b6100a8565b6040516001600160"
    "e01b031990911681526020015b60405180910390f35b6100907f00000000000000000000000000000000000000000000000000000000"
    "0000000081565b6040516001600160a01b039091168152602001610060565b5f604182146100c057506001600160e01b03196101bd56"
    "5b5f6100ce602082858761023b565b6100d791610262565b90505f6100e860406020868861023b565b6100f191610262565b90505f85"
    "85604081811061010757610107610280565b604080515f8152602081018083528c9052939091013560f81c9083018190526060830186"
    "9052608083018590529250506001600160a01b037f0000000000000000000000000000000000000000000000000000000000000000"
    "169060019060a0016020604051602081039080840390855afa158015610188573d5f5f3e3d5ffd5b5050506020604051035160016001"
    "60a01b0316146101ae576001600160e01b03196101b7565b630b135d3f60e11b5b93505050505b9392505050565b5f5f5f6040848603"
    "12156101d6575f5ffd5b83359250602084013567ffffffffffffffff8111156101f3575f5ffd5b8401601f81018613610203575f5ffd"
    "5b803567ffffffffffffffff811115610219575f5ffd5b86602082840101111561022a575f5ffd5b93966020919091019550929350"
    "5050565b5f5f85851115610249575f5ffd5b83861115610255575f5ffd5b5050820193919092039150565b8035602083101561027a57"
    "5f19602084900360031b1b165b92915050565b634e487b7160e01b5f52603260045260245ffdfea2646970667358221220a1851e47fc"
    "82abf8bf272fbded53cba596e324aace25266388ae0e42f302d00564736f6c63430008250033"
)

# AcceptsEverything: a contract wallet, hand-assembled, whose isValidSignature answers 0x1626ba7e to any call, so
# any signature is its own. Runtime: PUSH4 0x1626ba7e PUSH1 0xe0 SHL PUSH1 0 MSTORE PUSH1 0x20 PUSH1 0 RETURN;
# before it, the 12 bytes that copy those 16 to memory and return them as the contract's code.
ACCEPTS_EVERYTHING_BYTECODE = "6010600c60003960106000f3" + "631626ba7e60e01b60005260206000f3"


async def verify(client, message: str, signature: str):
    return await client.post("/api/auth/verify", json={"message": message, "signature": signature})


async def refusal(response) -> tuple[int, str]:
    return response.status_code, (await response.get_json())["error"]


async def test_nonce_names_what_the_message_must_carry(client, app):
    response = await client.get("/api/auth/nonce")
    assert response.status_code == 200
    assert response.headers["Cache-Control"] == "no-store"
    grant = await response.get_json()
    assert grant["domain"] == "adnet.test"
    assert grant["uri"] == "http://adnet.test"
    assert grant["chainId"] == app.extensions["adnet"].chain.chain_id
    assert len(grant["nonce"]) == 22 and grant["nonce"].isalnum()
    stored = await AuthNonce.get(nonce=grant["nonce"])
    assert stored.used_at is None
    assert stored.expires_at - stored.created_at == timedelta(minutes=10)


async def test_a_full_sign_in_opens_a_bearer_and_cookie_session(client, clock):
    account = Account.create()
    message, signature = await signed_message(client, account)
    response = await verify(client, message, signature)
    assert response.status_code == 200
    body = await response.get_json()
    assert body["wallet"] == account.address  # EIP-55, as every answer writes addresses
    assert body["expiresAt"] == (clock.now() + timedelta(hours=1)).isoformat().replace("+00:00", "Z")

    cookie = response.headers["Set-Cookie"]
    assert cookie.startswith(f"{SESSION_COOKIE}={body['token']};")
    assert "HttpOnly" in cookie and "SameSite=Lax" in cookie and "Secure" in cookie  # not development: Secure
    assert "Path=/" in cookie

    by_bearer = await client.get("/api/auth/me", headers=bearer(body["token"]))
    assert by_bearer.status_code == 200
    assert (await by_bearer.get_json())["wallet"] == account.address
    by_cookie = await client.get("/api/auth/me", headers={"Cookie": f"{SESSION_COOKIE}={body['token']}"})
    assert by_cookie.status_code == 200
    assert (await by_cookie.get_json())["wallet"] == account.address


async def test_sessions_are_stored_only_as_a_hash(client):
    token = await sign_in(client, Account.create())
    rows = await Session.all().values("token_hash", "wallet")
    assert len(rows) == 1
    assert rows[0]["token_hash"] == hashlib.sha256(token.encode()).hexdigest()
    assert token not in rows[0]["token_hash"]
    assert len(token) == 64  # 256 random bits


async def test_without_or_with_a_wrong_session_me_is_401(client):
    token = await sign_in(client, Account.create())
    for headers in ({}, bearer("not-a-token"), bearer(token[:-1]), {"Authorization": f"Basic {token}"},
                    {"Cookie": f"{SESSION_COOKIE}=forged"}):
        response = await client.get("/api/auth/me", headers=headers)
        assert await refusal(response) == (401, "auth_required"), headers


async def test_logout_ends_the_session_on_the_server(client, clock):
    token = await sign_in(client, Account.create())
    response = await client.post("/api/auth/logout", json={}, headers=bearer(token))
    assert response.status_code == 200
    assert (await response.get_json()) == {"status": "signed_out"}
    assert f"{SESSION_COOKIE}=;" in response.headers["Set-Cookie"]
    for headers in (bearer(token), {"Cookie": f"{SESSION_COOKIE}={token}"}):
        assert await refusal(await client.get("/api/auth/me", headers=headers)) == (401, "auth_required")
    assert await refusal(await client.post("/api/auth/logout", json={}, headers=bearer(token))) == (
        401, "auth_required")
    assert (await Session.get(token_hash=hashlib.sha256(token.encode()).hexdigest())).ended_at == clock.now()


async def test_a_session_expires_with_its_message_and_never_lasts_over_a_day(client, clock):
    account = Account.create()
    short, short_signature = await signed_message(client, account, expires_in=timedelta(minutes=30))
    short_token = (await (await verify(client, short, short_signature)).get_json())["token"]
    long_token = await sign_in(client, account)  # message valid for an hour
    clock.advance(minutes=31)
    assert (await client.get("/api/auth/me", headers=bearer(short_token))).status_code == 401
    assert (await client.get("/api/auth/me", headers=bearer(long_token))).status_code == 200
    clock.advance(minutes=30)
    assert (await client.get("/api/auth/me", headers=bearer(long_token))).status_code == 401

    day, day_signature = await signed_message(client, account, expires_in=timedelta(hours=24))
    day_token = (await (await verify(client, day, day_signature)).get_json())["token"]
    clock.advance(hours=23, minutes=59)
    assert (await client.get("/api/auth/me", headers=bearer(day_token))).status_code == 200
    clock.advance(minutes=1)
    assert (await client.get("/api/auth/me", headers=bearer(day_token))).status_code == 401


async def test_every_refusal_has_its_code_and_opens_no_session(client, app, clock):
    account, stranger = Account.create(), Account.create()
    chain_id = app.extensions["adnet"].chain.chain_id
    now = clock.now()
    cases = {
        "wrong domain": ({"domain": "evil.example"}, None, (401, "wrong_domain")),
        "domain with another port": ({"domain": "adnet.test:8443"}, None, (401, "wrong_domain")),
        "wrong scheme": ({"scheme": "https"}, None, (401, "wrong_domain")),
        "no scheme means https": ({"scheme": None}, None, (401, "wrong_domain")),
        "uri elsewhere": ({"uri": "http://evil.example/portal"}, None, (401, "wrong_uri")),
        "uri with credentials": ({"uri": "http://adnet.test@evil.example/"}, None, (401, "wrong_uri")),
        "wrong chain": ({"chain_id": chain_id + 1}, None, (401, "wrong_chain")),
        "issued too long ago": ({"issued_at": now - timedelta(minutes=6)}, None, (401, "expired")),
        "issued in the future": ({"issued_at": now + timedelta(minutes=6)}, None, (401, "expired")),
        "no expiration": ({"expires_in": None}, None, (400, "invalid_message")),
        "expiration over a day": ({"expires_in": timedelta(hours=24, seconds=1)}, None, (400, "invalid_message")),
        "already expired": ({"issued_at": now - timedelta(minutes=4), "expires_in": timedelta(minutes=3)}, None,
                            (401, "expired")),
        "not before ahead": ({"not_before": now + timedelta(minutes=1)}, None, (401, "not_yet_valid")),
        "unknown nonce": ({"nonce": "abcdefgh12345678"}, None, (401, "invalid_nonce")),
        "signed by another key": ({}, stranger, (401, "invalid_signature")),
        "other address than signer": ({"address": stranger.address}, None, (401, "invalid_signature")),
    }
    for name, (changes, signer, expected) in cases.items():
        message, signature = await signed_message(client, account, **changes)
        if signer is not None:
            signature = sign(signer, message)
        assert await refusal(await verify(client, message, signature)) == expected, name

    message, signature = await signed_message(client, account)
    malformed = [
        ("not siwe", signature, (400, "invalid_message")),
        (message.replace("Version: 1", "Version: 2"), signature, (400, "invalid_message")),
        (message, "0x1234", (401, "invalid_signature")),
        (message, "not hex", (401, "invalid_signature")),
        (message + "\n" + "x" * MAX_MESSAGE_LENGTH, signature, (400, "message_too_long")),
    ]
    for text, proof, expected in malformed:
        assert await refusal(await verify(client, text, proof)) == expected, text[:40]
    assert await Session.all().count() == 0
    assert await AuthNonce.exclude(used_at=None).count() == 0  # a refused message never burns its nonce


async def test_an_oversize_message_signed_correctly_is_still_refused(client):
    account = Account.create()
    message, _ = await signed_message(client, account)
    padded = message.replace("Sign in to adnet.", "Sign in to adnet." + " pad" * MAX_MESSAGE_LENGTH)
    assert await refusal(await verify(client, padded, sign(account, padded))) == (400, "message_too_long")


async def test_a_nonce_is_used_once(client):
    account = Account.create()
    message, signature = await signed_message(client, account)
    assert (await verify(client, message, signature)).status_code == 200
    assert await refusal(await verify(client, message, signature)) == (401, "invalid_nonce")
    assert await Session.all().count() == 1


async def test_a_nonce_expires_after_ten_minutes(client, clock):
    account = Account.create()
    grant = await (await client.get("/api/auth/nonce")).get_json()
    clock.advance(minutes=10, seconds=1)
    message = siwe_message(account.address, nonce=grant["nonce"], domain=grant["domain"], uri=grant["uri"],
                           chain_id=grant["chainId"], issued_at=clock.now())
    assert await refusal(await verify(client, message, sign(account, message))) == (401, "invalid_nonce")


async def test_twenty_concurrent_verifies_of_one_message_open_one_session(client):
    account = Account.create()
    message, signature = await signed_message(client, account)
    responses = await asyncio.gather(*(verify(client, message, signature) for _ in range(20)))
    statuses = sorted(response.status_code for response in responses)
    assert statuses == [200] + [401] * 19
    assert await Session.all().count() == 1


async def test_a_contract_wallet_signs_in_through_eip_1271(client, app):
    chain = app.extensions["adnet"].chain
    owner, stranger = Account.create(), Account.create()
    constructor_arg = bytes(12) + bytes.fromhex(owner.address[2:])
    receipt = await send_transaction(chain.w3, user(1), {"data": "0x" + OWNED_WALLET_BYTECODE + constructor_arg.hex()})
    contract_wallet = receipt["contractAddress"]

    refused, refused_signature = await signed_message(client, stranger, address=contract_wallet)
    assert await refusal(await verify(client, refused, refused_signature)) == (401, "invalid_signature")
    message, signature = await signed_message(client, owner, address=contract_wallet)
    response = await verify(client, message, signature)
    assert response.status_code == 200
    assert (await response.get_json())["wallet"] == to_checksum_address(contract_wallet)


@pytest.mark.parametrize("signature", UNRECOVERABLE_SIGNATURES.values(), ids=UNRECOVERABLE_SIGNATURES.keys())
async def test_a_signature_ecrecover_cannot_read_is_401_and_opens_no_session(client, signature):
    message, _ = await signed_message(client, Account.create())
    assert await refusal(await verify(client, message, signature)) == (401, "invalid_signature")
    assert await Session.all().count() == 0
    assert await AuthNonce.exclude(used_at=None).count() == 0


@pytest.mark.parametrize("signature", UNRECOVERABLE_SIGNATURES.values(), ids=UNRECOVERABLE_SIGNATURES.keys())
async def test_a_signature_ecrecover_cannot_read_still_reaches_a_contract_wallet(client, app, signature):
    chain = app.extensions["adnet"].chain
    receipt = await send_transaction(chain.w3, user(1), {"data": "0x" + ACCEPTS_EVERYTHING_BYTECODE})
    contract_wallet = receipt["contractAddress"]
    message, _ = await signed_message(client, Account.create(), address=contract_wallet)
    response = await verify(client, message, signature)
    assert response.status_code == 200
    assert (await response.get_json())["wallet"].lower() == contract_wallet.lower()


async def test_nonce_and_verify_are_rate_limited(database_url, tmp_path, clock):
    settings = make_settings(database_url, tmp_path, ADNET_RATE_LIMIT_AUTH="3/60")
    application = create_app(settings, clock=clock, rng=random.Random(7))
    async with application.test_app() as test_app:
        await empty_database()
        client = test_app.test_client()
        statuses = [(await client.get("/api/auth/nonce")).status_code for _ in range(4)]
        assert statuses == [200, 200, 200, 429]
        limited = await client.post("/api/auth/verify", json={"message": "x", "signature": "0x"})
        assert limited.status_code == 400  # verify has its own budget
        for _ in range(2):
            await client.post("/api/auth/verify", json={"message": "x", "signature": "0x"})
        limited = await client.post("/api/auth/verify", json={"message": "x", "signature": "0x"})
        assert limited.status_code == 429
        assert (await limited.get_json())["error"] == "rate_limited"
        assert int(limited.headers["Retry-After"]) > 0
        async with in_transaction():
            assert await AuthNonce.all().count() == 3
