"""Every address adnet writes is in its EIP-55 form, whatever case it holds or was sent: the JSON answers of every
route that names a wallet or a contract, the prepared transactions, claims and task configs in them, and the
portal's pages (wallets are stored lower-case, adnet.core.wallets)."""

from __future__ import annotations

import re

import pytest
from eth_utils import is_checksum_address

from adnet.demo import create_demo
from adnet.money import ledger
from tests.api.test_advertisers import OPERATOR
from tests.api.test_schemas import operations
from tests.auth_helpers import bearer, sign_in, signed_message
from tests.chain.helpers import user
from tests.conftest import make_settings
from tests.factories import G, fund
from tests.portal.conftest import portal_sign_in

_ADDRESS = re.compile(r"(?<![0-9A-Za-z])0x[0-9a-fA-F]{40}(?![0-9A-Za-z])")


@pytest.fixture
def settings(database_url, data_dir):
    return make_settings(database_url, data_dir, ADNET_OPERATORS=OPERATOR.address.lower())


@pytest.fixture
async def demo(app, settings, chain, clock) -> dict:
    """The demo data: an advertiser (account 1) with campaigns and a task of each kind, a publisher (account 2)."""
    return await create_demo(settings, chain.deployment, now=clock.now())


def addresses_in(text: str) -> list[str]:
    return _ADDRESS.findall(text)


def assert_checksummed(where: str, text: str) -> None:
    found = addresses_in(text)
    assert found, f"{where} names no address"
    assert [address for address in found if not is_checksum_address(address)] == [], where


async def test_every_answer_that_names_an_address_writes_it_in_eip55(client, demo):
    advertiser, publisher = user(1), user(2)
    message, signature = await signed_message(client, advertiser)
    verified = await client.post("/api/auth/verify", json={"message": message, "signature": signature})
    adv, pub, operator = [bearer(await sign_in(client, account)) for account in (advertiser, publisher, OPERATOR)]
    await fund(ledger.site(demo["siteId"]), G)
    wallet = publisher.address.lower()  # what clients may send: any case
    onchain_task = demo["taskIds"]["ONCHAIN_EVENT"][0]
    signing_task = demo["taskIds"]["SIGN_MESSAGE"][0]
    campaign_of_onchain_task = demo["campaignIds"][2]
    answers = {
        "verify": verified,
        "me": await client.get("/api/auth/me", headers=adv),
        "advertiser register": await client.post("/api/advertisers/register", json={"name": "x"}, headers=adv),
        "advertiser account": await client.get("/api/advertisers/account", headers=adv),
        "advertiser deposit prepare": await client.post("/api/advertisers/deposit/prepare", json={"amount": "1"},
                                                        headers=adv),
        "campaign with tasks": await client.get(f"/api/advertisers/campaigns/{campaign_of_onchain_task}",
                                                headers=adv),
        "sites": await client.get("/api/publishers/sites", query_string={"wallet": wallet}, headers=pub),
        "topup prepare": await client.post("/api/publishers/topup/prepare", headers=pub, json={
            "wallet": wallet, "siteId": demo["siteId"], "amount": "1"}),
        "withdraw": await client.post("/api/publishers/withdraw", headers=pub, json={
            "wallet": wallet, "siteId": demo["siteId"], "amount": "1"}),
        "message": await client.get(f"/api/tasks/{signing_task}/message", query_string={"wallet": wallet}),
        "rate": await client.get("/api/operators/rate", headers=operator),
        "rate change": await client.post("/api/operators/rate", json={"rate": "3"}, headers=operator),
        "health": await client.get("/healthz"),
    }
    for name, response in answers.items():
        assert response.status_code in (200, 201), (name, await response.get_json())
        assert_checksummed(name, await response.get_data(as_text=True))
    campaign = await answers["campaign with tasks"].get_json()
    config = next(task["config"] for task in campaign["tasks"] if task["id"] == onchain_task)
    assert is_checksum_address(config["contract"]) and is_checksum_address(config["emitter"])
    assert [task["preview"]["contract"] for task in campaign["tasks"] if task["id"] == onchain_task] == [
        config["contract"]]


async def test_the_openapi_document_describes_addresses_as_checksummed(client):
    found = await operations(client)
    schemas = (await (await client.get("/openapi.json")).get_json())["components"]["schemas"]
    described = [schemas[schema]["properties"][field] for schema, field in (
        ("ClaimOut", "recipient"), ("WalletTransaction", "from"), ("SendTransactionParams", "to"),
        ("OnchainEventTask", "contract"))]
    for label, field in (("GET /api/auth/me", "wallet"), ("GET /api/operators/rate", "vaultOwner"),
                         ("GET /api/publishers/sites", "wallet"), ("GET /api/advertisers/account", "wallet")):
        described.append(found[label]["responses"]["200"]["content"]["application/json"]["schema"]["properties"][
            field])
    assert all(field["description"] == "EIP-55 checksummed" for field in described)


async def test_pages_write_the_signed_in_wallet_and_the_vault_owner_in_eip55(app, demo):
    publisher = await portal_sign_in(app.test_client(), user(2))
    dashboard = await publisher.get("/portal")
    assert publisher.account.address in await dashboard.get_data(as_text=True)
    operator = await portal_sign_in(app.test_client(), OPERATOR)
    for path in ("/portal", "/portal/operator"):
        page = await operator.get(path)
        assert page.status_code == 200
        assert_checksummed(path, await page.get_data(as_text=True))
    rate_form = await operator.post("/portal/operator/rate", {"rate": "3"}, htmx=True)
    assert_checksummed("the rate form", await rate_form.get_data(as_text=True))
