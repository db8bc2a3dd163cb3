"""Proving a wallet for a click through HTTP: ``POST /api/conversions/bind`` takes the wallet's EIP-191 signature of
the message naming the click id, once per click, open to any origin; a signature made for another click, by another
wallet, altered or malformed is 401 ``invalid_signature`` and binds nothing."""

import pytest
from eth_account import Account
from eth_account.messages import encode_defunct

from adnet.conversions.binding import binding_message
from adnet.conversions.models import ClickBinding
from tests.api.test_conversions import account, click_id_of, clicked
from tests.api.test_serve import app_context  # noqa: F401 - autouse: the app as the current app

ORIGIN = "https://shop.example"


def signed(wallet, click_id: str) -> str:
    """``wallet``'s personal_sign of the binding message of ``click_id``."""
    return wallet.sign_message(encode_defunct(text=binding_message(click_id))).signature.to_0x_hex()


async def bind(client, click_id: str, wallet: str, signature: object):
    response = await client.post("/api/conversions/bind", json={"clickId": click_id, "wallet": wallet,
                                                                "signature": signature}, headers={"Origin": ORIGIN})
    return response, await response.get_json()


async def two_clicks(client, clock):
    advertiser, _, _ = await account(client)
    _, campaign, _, first = await clicked(client, clock, advertiser)
    clock.advance(hours=2)
    _, _, _, second = await clicked(client, clock, advertiser)
    return campaign, click_id_of(first), click_id_of(second)


async def test_a_wallet_signing_the_clicks_message_is_bound_to_it_once(client, clock):
    campaign, click_id, _ = await two_clicks(client, clock)
    visitor = Account.create()
    response, body = await bind(client, click_id, visitor.address, signed(visitor, click_id))
    assert response.status_code == 201, body
    assert body == {"status": "bound", "wallet": visitor.address.lower(), "campaignId": campaign.id}
    assert response.headers["Access-Control-Allow-Origin"] == "*"
    binding = await ClickBinding.get()
    assert (binding.wallet, binding.campaign_id) == (visitor.address.lower(), campaign.id)

    again, again_body = await bind(client, click_id, visitor.address, signed(visitor, click_id))
    assert (again.status_code, again_body) == (200, body)
    other = Account.create()
    taken, taken_body = await bind(client, click_id, other.address, signed(other, click_id))
    assert (taken.status_code, taken_body["error"]) == (409, "click_already_bound")
    assert await ClickBinding.all().values_list("wallet", flat=True) == [visitor.address.lower()]


async def test_a_binding_signed_for_another_click_is_refused(client, clock):
    _, click_id, other_click_id = await two_clicks(client, clock)
    visitor = Account.create()
    response, body = await bind(client, click_id, visitor.address, signed(visitor, other_click_id))
    assert (response.status_code, body["error"], body["field"]) == (401, "invalid_signature", "signature")
    assert await ClickBinding.all().count() == 0


def _flipped(signature: str) -> str:
    return signature[:10] + ("0" if signature[10] != "0" else "1") + signature[11:]


@pytest.mark.parametrize("forge", [
    lambda visitor, other, click_id: signed(other, click_id),  # another wallet's signature
    lambda visitor, other, click_id: _flipped(signed(visitor, click_id)),  # altered
    lambda visitor, other, click_id: signed(visitor, click_id)[:-2] + "1d",  # v out of range
    lambda visitor, other, click_id: "0x" + "00" * 65,
    lambda visitor, other, click_id: "0x",
    lambda visitor, other, click_id: "not hex",
    lambda visitor, other, click_id: "0x" + "ab" * 5000,
    lambda visitor, other, click_id: visitor.sign_message(encode_defunct(text=click_id)).signature.to_0x_hex(),
])
async def test_every_bad_signature_is_401_and_binds_nothing(client, clock, forge):
    _, click_id, _ = await two_clicks(client, clock)
    visitor, other = Account.create(), Account.create()
    response, body = await bind(client, click_id, visitor.address, forge(visitor, other, click_id))
    assert (response.status_code, body["error"]) == (401, "invalid_signature"), body
    assert await ClickBinding.all().count() == 0


async def test_a_click_id_adnet_did_not_issue_binds_nothing(client, clock):
    _, click_id, _ = await two_clicks(client, clock)
    forged = click_id[:-3] + ("AAA" if not click_id.endswith("AAA") else "BBB")
    visitor = Account.create()
    response, body = await bind(client, forged, visitor.address, signed(visitor, forged))
    assert (response.status_code, body["error"], body["field"]) == (400, "click_invalid", "clickId")
    no_wallet, no_wallet_body = await bind(client, click_id, "0x1234", signed(visitor, click_id))
    assert (no_wallet.status_code, no_wallet_body["error"]) == (400, "invalid_wallet")
    assert await ClickBinding.all().count() == 0
