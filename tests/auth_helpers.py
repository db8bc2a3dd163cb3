"""Signing in from tests, as a wallet does: ask for a nonce, sign the SIWE message, verify.

``token = await sign_in(client, account)`` returns a session token (``rewards_sign_in``: a rewards session); send
it with ``headers=bearer(token)``.
``siwe_message`` builds the message text with any field changed, for tests of what sign-in refuses.
``tampered`` changes a signed token so that its MAC no longer verifies.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from eth_account.messages import encode_defunct
from eth_account.signers.local import LocalAccount

from adnet.accounts.signin import siwe  # the SIWE module, loaded without its grammar's warnings

STATEMENT = "Sign in to adnet."
_CURVE_ORDER = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141
# Well-formed (0x + 65 bytes) signatures that ecrecover cannot read.
UNRECOVERABLE_SIGNATURES = {
    "65 zero bytes": "0x" + "00" * 65,
    "r = s = 0": "0x" + "00" * 64 + "1b",
    "s = the curve order": "0x" + "11" * 32 + _CURVE_ORDER.to_bytes(32, "big").hex() + "1b",
}


def siwe_message(address: str, *, nonce: str, domain: str, uri: str, chain_id: int, issued_at: datetime,
                 expires_in: timedelta | None = timedelta(hours=1), scheme: str | None = "http",
                 not_before: datetime | None = None) -> str:
    """The EIP-4361 text a wallet signs."""
    return siwe.SiweMessage(
        scheme=scheme, domain=domain, address=address, uri=uri, version="1", chain_id=chain_id,
        issued_at=siwe.ISO8601Datetime.from_datetime(issued_at), nonce=nonce, statement=STATEMENT,
        expiration_time=siwe.ISO8601Datetime.from_datetime(issued_at + expires_in) if expires_in else None,
        not_before=siwe.ISO8601Datetime.from_datetime(not_before) if not_before else None,
    ).prepare_message()


def sign(account: LocalAccount, message: str) -> str:
    """The wallet's ``personal_sign`` (EIP-191) signature of ``message``, 0x-hex."""
    return account.sign_message(encode_defunct(text=message)).signature.to_0x_hex()


async def signed_message(client: Any, account: LocalAccount, **changes: Any) -> tuple[str, str]:
    """A fresh nonce's SIWE message for ``account`` (fields in ``changes`` replaced) and its signature."""
    grant = await (await client.get("/api/auth/nonce")).get_json()
    if not isinstance(grant, dict) or "nonce" not in grant:
        raise AssertionError(f"no nonce was issued: {grant}")
    fields = {"nonce": grant["nonce"], "domain": grant["domain"], "uri": grant["uri"] + "/portal",
              "scheme": grant["uri"].split("://", 1)[0],
              "chain_id": grant["chainId"], "issued_at": client.app.extensions["adnet"].clock.now(), **changes}
    address = fields.pop("address", account.address)
    message = siwe_message(address, **fields)
    return message, sign(account, message)


async def sign_in(client: Any, account: LocalAccount) -> str:
    """Sign ``account`` in through the API and return its session token."""
    message, signature = await signed_message(client, account)
    response = await client.post("/api/auth/verify", json={"message": message, "signature": signature})
    if response.status_code != 200:
        raise AssertionError(f"sign-in failed: {response.status_code} {await response.get_json()}")
    return (await response.get_json())["token"]


def tampered(signed: str) -> str:
    """``signed`` (a token or click id ending in its base64url MAC) with one MAC character changed.

    The second-to-last character is changed: the last one may carry padding bits that decoding ignores.
    """
    return signed[:-2] + ("B" if signed[-2] == "A" else "A") + signed[-1]


def bearer(token: str) -> dict[str, str]:
    """The header that carries a session for scripts."""
    return {"Authorization": f"Bearer {token}"}


async def rewards_session(client: Any, account: LocalAccount) -> dict[str, Any]:
    """Sign ``account`` in for its rewards as the embed does (the server writes the message, the wallet signs it)
    and return the answer (its ``token``, its ``audiencePass``)."""
    written = await client.post("/api/rewards/message", json={"address": account.address})
    message = (await written.get_json())["message"]
    response = await client.post("/api/rewards/session", json={"message": message, "signature": sign(account, message)})
    if response.status_code != 201:
        raise AssertionError(f"rewards sign-in failed: {response.status_code} {await response.get_json()}")
    return await response.get_json()


async def rewards_sign_in(client: Any, account: LocalAccount) -> str:
    """Sign ``account`` in for its rewards and return the rewards session's token."""
    return (await rewards_session(client, account))["token"]
