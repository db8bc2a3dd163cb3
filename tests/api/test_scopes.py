"""API key scopes are what docs/auth.md's table says, on every route: ``reports:read`` covers every read a key may
make, a manage scope only changes (it does not include reading). Checked on the OpenAPI document, which names on
each route the scope its ``apiKey`` scheme needs (``require_account``), and through HTTP on a route of each kind."""

from __future__ import annotations

import re
from pathlib import Path

from eth_account import Account

from adnet.accounts.commands import ApiKeyScope
from tests.api.test_api_keys import issue
from tests.auth_helpers import bearer, sign_in
from tests.factories import make_publisher, make_site

AUTH_DOC = Path(__file__).resolve().parents[2] / "docs" / "auth.md"
READS = {"get"}
MANAGE = {ApiKeyScope.SITES.value, ApiKeyScope.CAMPAIGNS.value, ApiKeyScope.CONVERSIONS.value}


async def key_scopes(client) -> dict[tuple[str, str], list[str]]:
    """(method, path) → the scopes an API key needs there, for every operation an API key may call."""
    document = await (await client.get("/openapi.json")).get_json()
    return {(method, path): scopes for path, methods in document["paths"].items()
            for method, operation in methods.items()
            for requirement in operation.get("security", []) for scheme, scopes in requirement.items()
            if scheme == "apiKey"}


async def test_every_read_needs_reports_read_and_every_change_a_manage_scope(client):
    scopes = await key_scopes(client)
    assert len(scopes) > 40
    reads = {operation: needed for operation, needed in scopes.items() if operation[0] in READS}
    changes = {operation: needed for operation, needed in scopes.items() if operation[0] not in READS}
    assert {operation: needed for operation, needed in reads.items() if needed != [ApiKeyScope.REPORTS.value]} == {}
    assert {operation: needed for operation, needed in changes.items()
            if len(needed) != 1 or needed[0] not in MANAGE} == {}
    assert ("get", "/api/publishers/sites/{site_id}/house-ads") in reads
    assert ("get", "/api/publishers/sites/{site_id}/floors") in reads


def test_the_scope_table_names_every_scope_and_says_reads_are_reports_read():
    table = dict(re.findall(r"^  \| `([a-z]+:[a-z]+)` \| (.+) \|$", AUTH_DOC.read_text(), re.M))
    assert set(table) == {scope.value for scope in ApiKeyScope}
    assert table[ApiKeyScope.REPORTS.value].startswith("every GET")


async def test_a_reports_key_reads_what_a_site_shows_and_changes_nothing(client):
    account = Account.create()
    session = await sign_in(client, account)
    site = await make_site(await make_publisher(account.address.lower()))
    reader = (await issue(client, session, ApiKeyScope.REPORTS.value))["token"]
    manager = (await issue(client, session, ApiKeyScope.SITES.value))["token"]
    path = f"/api/publishers/sites/{site.id}"
    for read in ("house-ads", "floors", "controls", "ad-units", "traffic", "withdrawals"):
        assert (await client.get(f"{path}/{read}", headers=bearer(reader))).status_code == 200, read
        refused = await client.get(f"{path}/{read}", headers=bearer(manager))
        assert (refused.status_code, (await refused.get_json())["scope"]) == (403, "reports:read"), read
    change = await client.put(f"{path}/floors", json={"wallet": account.address, "floorCpm": "1"},
                              headers=bearer(reader))
    assert (change.status_code, (await change.get_json())["scope"]) == (403, "sites:manage")
