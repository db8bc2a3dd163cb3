"""GET /healthz: 200 ``ok`` only when the database answers and the chain's last check found the node, the signer
and the vault's cover right; 503 ``degraded`` with each reason otherwise. The chain is checked by the ``health``
job (here run by the test, after the test's database was emptied), never per request. GET /readyz: 503 only for
what keeps this host from serving and recording (the database away with no spool to keep events, the spool full or
its disk refusing a write), never for the chain."""

from __future__ import annotations

import shutil
from dataclasses import replace

from eth_account import Account

from adnet.app import create_app
from adnet.chain.client import ChainClient
from adnet.chain.deploy import DEV_VAULT_FUNDING
from adnet.chain.service import http_web3
from adnet.core.wallets import dev_accounts
from adnet.db.outage import DatabaseLink
from adnet.money import ledger
from tests.conftest import TEST_SIGNER_KEY, make_settings
from tests.factories import fund


async def health(client) -> tuple[int, dict]:
    response = await client.get("/healthz")
    return response.status_code, await response.get_json()


async def test_healthy_when_database_chain_signer_and_vault_are_right(client, services):
    await services.jobs.run("health")
    status, body = await health(client)

    assert status == 200
    assert body["status"] == "ok" and body["reasons"] == []
    assert body["chain"]["chainId"] == services.chain.chain_id
    assert body["chain"]["signer"] == Account.from_key(TEST_SIGNER_KEY).address


async def test_degraded_when_the_chain_node_is_gone_once_the_job_has_checked(client, services):
    unreachable = ChainClient(http_web3("http://127.0.0.1:9"), services.chain.deployment,
                              signer=Account.from_key(TEST_SIGNER_KEY), claim_deadline_seconds=3600, confirmations=0)
    services.health.chain = unreachable
    try:
        before_the_job = await health(client)
        await services.jobs.run("health")
        status, body = await health(client)
    finally:
        await unreachable.close()

    assert before_the_job[0] == 200  # /healthz itself asks the chain nothing
    assert status == 503
    assert body["status"] == "degraded" and body["reasons"] == ["chain_unreachable"]
    assert "127.0.0.1" not in str(body)


async def test_degraded_when_the_node_is_another_chain(client, services):
    bound = services.chain
    services.health.chain = ChainClient(bound.w3, replace(bound.deployment, chain_id=bound.chain_id + 1),
                                        signer=bound.signer, claim_deadline_seconds=3600, confirmations=0)
    await services.jobs.run("health")

    status, body = await health(client)

    assert status == 503 and body["reasons"] == ["wrong_chain"]


async def test_degraded_when_the_vault_no_longer_accepts_the_signer(client, services):
    chain = services.chain
    revoke = chain.vault.encode_abi("setSigner", args=[chain.signer.address, False])
    await chain.send(dev_accounts()[0], {"to": chain.vault_address, "data": revoke})
    await services.jobs.run("health")

    status, body = await health(client)

    assert status == 503 and body["reasons"] == ["signer_unauthorized"]


async def test_degraded_when_adnet_owes_more_than_the_vault_holds(client, services, clock):
    await fund(ledger.advertiser("adv_short"), DEV_VAULT_FUNDING, now=clock.now())
    await services.jobs.run("health")
    assert (await health(client))[0] == 200  # owing exactly what the vault holds is covered

    await fund(ledger.advertiser("adv_short"), 1, now=clock.now())
    await services.jobs.run("health")
    status, body = await health(client)

    assert status == 503 and body["reasons"] == ["vault_short"]


async def test_degraded_when_the_database_does_not_answer(client, services):
    async def refused() -> None:
        raise ConnectionRefusedError("the database's port is closed")

    await services.jobs.run("health")
    services.health.database = DatabaseLink(refused)
    status, body = await health(client)

    assert status == 503 and body["reasons"] == ["database_unreachable"]
    assert "port" not in str(body)


async def test_degraded_before_the_app_has_started(database_url, tmp_path):
    app = create_app(make_settings(database_url, tmp_path))

    assert await health(app.test_client()) == (503, {"status": "degraded", "reasons": ["not_started"]})


async def readiness(client) -> tuple[int, dict]:
    response = await client.get("/readyz")
    return response.status_code, await response.get_json()


async def test_ready_while_the_chain_is_gone_though_health_is_degraded(client, services):
    """A chain outage is every host's: it must not take any out of a load balancer's rotation."""
    unreachable = ChainClient(http_web3("http://127.0.0.1:9"), services.chain.deployment,
                              signer=Account.from_key(TEST_SIGNER_KEY), claim_deadline_seconds=3600, confirmations=0)
    services.health.chain = unreachable
    try:
        await services.jobs.run("health")
        degraded, ready = await health(client), await readiness(client)
    finally:
        await unreachable.close()

    assert degraded[0] == 503 and degraded[1]["reasons"] == ["chain_unreachable"]
    assert ready == (200, {"status": "ready", "reasons": []})


async def test_ready_while_the_database_is_away_as_long_as_the_spool_can_keep_events(client, services, monkeypatch):
    async def refused() -> None:
        raise ConnectionRefusedError("the database's port is closed")

    await services.jobs.run("health")
    services.health.database = DatabaseLink(refused)
    with_spool = await readiness(client)
    monkeypatch.setattr(services.tracker.spool, "max_events", services.tracker.spool.depth)
    spool_full = await readiness(client)
    monkeypatch.setattr(services.tracker, "spool", None)  # ADNET_SPOOL_MAX_EVENTS=0
    without_spool = await readiness(client)

    assert with_spool == (200, {"status": "ready", "reasons": []})
    assert (await health(client))[1]["reasons"] == ["database_unreachable"]
    assert spool_full == (503, {"status": "unready", "reasons": ["database_unreachable", "spool_full"]})
    assert without_spool == (503, {"status": "unready", "reasons": ["database_unreachable"]})


async def test_unready_when_the_spools_disk_refuses_a_write(client, services):
    await services.jobs.run("health")
    blocked = services.tracker.spool.directory
    shutil.rmtree(blocked, ignore_errors=True)  # the data directory's: empty, no spool holds a file in it
    blocked.write_text("not a directory: the spool cannot make a file here")
    try:
        status, body = await readiness(client)
        degraded = await health(client)
    finally:
        blocked.unlink()

    assert (status, body) == (503, {"status": "unready", "reasons": ["disk_unwritable"]})
    assert degraded[0] == 503 and degraded[1]["reasons"] == ["disk_unwritable"]


async def test_unready_before_the_app_has_started(database_url, tmp_path):
    app = create_app(make_settings(database_url, tmp_path))

    assert await readiness(app.test_client()) == (503, {"status": "unready", "reasons": ["not_started"]})
