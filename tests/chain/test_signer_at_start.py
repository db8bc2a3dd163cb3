"""adnet at start on a node whose vault does not accept its claim signer: production refuses to start, naming the
signer and the vault; elsewhere it starts, logs the error and reports ``signer_unauthorized`` in /healthz."""

from __future__ import annotations

import logging

import pytest
from eth_account import Account
from quart.testing.app import LifespanError

from adnet.app import create_app
from adnet.chain.deploy import Deployment
from adnet.core.wallets import checksummed
from adnet.db import config as database
from tests.conftest import empty_database, make_settings

OTHER_SIGNER_KEY = "0x" + "5a" * 32


async def empty(database_url: str) -> None:
    await database.open_database(database_url)
    try:
        await empty_database()
    finally:
        await database.close_database()


@pytest.fixture
async def unbound_database(database_url):
    """The test database emptied before the app binds it to anvil, and after, for the tests that follow."""
    await empty(database_url)
    yield database_url
    await empty(database_url)


def on_anvil(database_url: str, tmp_path, anvil_url: str, deployment: Deployment, **overrides: str):
    return make_settings(database_url, tmp_path, ADNET_CHAIN_RPC_URL=anvil_url, ADNET_VAULT_ADDRESS=deployment.vault,
                         ADNET_GS_TOKEN_ADDRESS=deployment.gs_token, ADNET_SOV_TOKEN_ADDRESS=deployment.sov_token,
                         ADNET_SIGNER_KEY=OTHER_SIGNER_KEY, **overrides)


async def test_production_refuses_to_start_with_a_signer_the_vault_does_not_accept(
        unbound_database, tmp_path, anvil_url, anvil_deployment):
    settings = on_anvil(unbound_database, tmp_path, anvil_url, anvil_deployment).model_copy(
        update={"env": "production"})
    app = create_app(settings)

    with pytest.raises(LifespanError) as refused:  # what the server logs as the reason it did not start
        async with app.test_app():
            pass

    message = str(refused.value)
    assert "\n" not in message and "does not accept adnet's claim signer" in message
    assert Account.from_key(OTHER_SIGNER_KEY).address in message
    assert checksummed(anvil_deployment.vault) in message


async def test_elsewhere_it_starts_says_so_and_reports_it(unbound_database, tmp_path, anvil_url, anvil_deployment,
                                                          caplog):
    app = create_app(on_anvil(unbound_database, tmp_path, anvil_url, anvil_deployment))

    with caplog.at_level(logging.ERROR, logger="adnet.jobs.health"):
        async with app.test_app() as running:
            response = await running.test_client().get("/healthz")

    assert response.status_code == 503
    assert (await response.get_json())["reasons"] == ["signer_unauthorized"]
    assert any(record.levelno == logging.ERROR and "UNAUTHORIZED SIGNER" in record.getMessage()
               and Account.from_key(OTHER_SIGNER_KEY).address in record.getMessage() for record in caplog.records)


async def test_a_signer_the_vault_accepts_starts_healthy(unbound_database, tmp_path, anvil_url, anvil_deployment):
    settings = on_anvil(unbound_database, tmp_path, anvil_url, anvil_deployment).model_copy(update={
        "env": "production", "signer_key": make_settings(unbound_database, tmp_path).signer_key})

    async with create_app(settings).test_app() as running:
        response = await running.test_client().get("/healthz")

    assert response.status_code == 200, await response.get_json()
