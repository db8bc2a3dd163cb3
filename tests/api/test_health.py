"""GET /healthz: ok only when the database and the chain answer as bound; 503 with what is wrong otherwise."""

from __future__ import annotations

from eth_account import Account

from adnet.app import create_app
from adnet.chain.client import ChainClient
from adnet.chain.service import http_web3
from tests.conftest import TEST_SIGNER_KEY, make_settings


async def test_healthy_when_database_and_chain_answer(client, app):
    response = await client.get("/healthz")

    assert response.status_code == 200
    body = await response.get_json()
    assert body["status"] == "ok" and body["database"] == "ok"
    assert body["chain"]["chainId"] == app.extensions["adnet"].chain.chain_id


async def test_degraded_when_the_chain_node_is_gone(client, app):
    runtime = app.extensions["adnet"]
    bound = runtime.chain
    unreachable = ChainClient(http_web3("http://127.0.0.1:9"), bound.deployment, signer=Account.from_key(
        TEST_SIGNER_KEY), claim_deadline_seconds=3600, confirmations=0)
    runtime.chain = unreachable
    try:
        response = await client.get("/healthz")
    finally:
        runtime.chain = bound
        await unreachable.close()

    assert response.status_code == 503
    body = await response.get_json()
    assert body["status"] == "degraded" and body["database"] == "ok"
    assert body["chain"]["status"].startswith("unavailable")
    assert "127.0.0.1" not in str(body)


async def test_degraded_before_the_chain_is_connected(database_url, tmp_path):
    app = create_app(make_settings(database_url, tmp_path))
    response = await app.test_client().get("/healthz")

    assert response.status_code == 503
    assert (await response.get_json())["chain"] == {"status": "not started"}


async def test_production_responses_carry_hsts(database_url, tmp_path):
    production = make_settings(database_url, tmp_path, ADNET_ENV="production", ADNET_PUBLIC_URL="https://ads.example",
                               ADNET_SIGNER_KEY="0x" + "5a" * 32, ADNET_CHAIN_RPC_URL="http://127.0.0.1:9",
                               ADNET_VAULT_ADDRESS="0x" + "01" * 20, ADNET_GS_TOKEN_ADDRESS="0x" + "02" * 20,
                               ADNET_SOV_TOKEN_ADDRESS="0x" + "03" * 20)
    app = create_app(production)
    response = await app.test_client().get("/nowhere")

    assert response.headers["Strict-Transport-Security"].startswith("max-age=")
    assert app.config["SESSION_COOKIE_SECURE"] is True
