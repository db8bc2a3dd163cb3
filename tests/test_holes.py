"""KNOWN-HOLES proofs that span every route rather than one feature (docs/security.md maps each hole to its tests):
no write route moves money or signs a claim for a caller without a session, whatever the body names (1, 2); no
public read carries a server secret (8); the client address is never the first ``X-Forwarded-For`` hop (20).
"""

from __future__ import annotations

import re
from decimal import Decimal

import pytest

from adnet.interactions.models import Interaction
from adnet.money import ledger
from adnet.money.models import Claim, Deposit, LedgerAccount, LedgerTransaction, Withdrawal
from adnet.tasks.models import Completion, TaskKind
from tests.conftest import make_settings
from tests.factories import fund, make_advertiser, make_campaign, make_site, make_task, wallet_address

WRITES = {"POST", "PUT", "PATCH", "DELETE"}
PARAMETER = re.compile(r"<(?:[^:>]+:)?([^>]+)>")


def paths(app, methods: set[str], ids: dict[str, str]) -> list[tuple[str, str]]:
    """Every (method, path) of the URL map with ``methods``, its parameters filled from ``ids`` (else ``x``)."""
    found = []
    for rule in app.url_map.iter_rules():
        for method in sorted((rule.methods or set()) & methods):
            found.append((method, PARAMETER.sub(lambda match: ids.get(match.group(1), "x"), rule.rule)))
    return found


async def money_state() -> tuple:
    """Everything that records or moves money or rewards."""
    balances = sorted((row["kind"], row["owner"], row["token"], str(Decimal(row["balance"]))) for row in
                      await LedgerAccount.all().values("kind", "owner", "token", "balance"))
    counts = [await model.all().count() for model in (Claim, Withdrawal, Deposit, LedgerTransaction, Completion,
                                                      Interaction)]
    return balances, counts


async def test_no_write_route_pays_or_credits_anyone_without_a_session(app, client):
    """KNOWN-HOLES 1 and 2: every write route, called without a session with a body that names an attacker's
    wallet and amounts, signs no claim, credits nothing and records no reward."""
    site = await make_site()
    campaign = await make_campaign(await make_advertiser())
    task = await make_task(kind=TaskKind.POLL, pool=10**18, config={
        "question": "Which chain?", "options": [{"id": "celo", "label": "Celo"}, {"id": "fuse", "label": "Fuse"}]})
    await fund(ledger.site(site.id), 5 * 10**18)
    attacker = wallet_address()
    ids = {"site_id": site.id, "campaign_id": campaign.id, "task_id": task.id, "unit_id": task.id}
    body = {"wallet": attacker, "recipient": attacker, "to": attacker, "siteId": site.id, "taskId": task.id,
            "campaignId": campaign.id, "amount": "1000", "points": 1000, "gs": 1000, "balance": "1000",
            "fingerprint": "fp-attacker", "txHash": "0x" + "ab" * 32}
    before = await money_state()
    routes = [(method, path) for method, path in paths(app, WRITES, ids) if path.startswith("/api/")]
    assert len(routes) > 20

    answers = {}
    for method, path in routes:
        response = await client.open(path, method=method, json=body)
        answers[f"{method} {path}"] = response.status_code

    assert await money_state() == before
    assert all(status < 500 for status in answers.values()), answers
    assert not [route for route, status in answers.items() if 200 <= status < 300 and "logout" not in route]


async def test_no_public_read_carries_a_server_secret(app, client, settings):
    """KNOWN-HOLES 8: the session, tracking and signer secrets appear in no response to a caller without a
    session: API reads, pages, the OpenAPI document, the SDK and every static file."""
    secrets = [settings.secret_key, settings.tracking_secret, settings.signer_key.removeprefix("0x")]
    static = [("GET", f"/static/{name}") for name in ("sdk.js", "portal.js", "portal.css")]
    reads = [*paths(app, {"GET"}, {}), *static]
    assert len(reads) > 30

    leaks = []
    for _, path in reads:
        response = await client.get(path)
        text = (await response.get_data()).decode(errors="replace")
        leaks += [path for secret in secrets if secret.lower() in text.lower()]

    assert leaks == []


@pytest.mark.parametrize(("trusted", "forwarded"), [
    ("1", [f"198.51.100.{n}, 203.0.113.7" for n in range(3)]),  # a proxy appends the real client last
    ("0", [f"198.51.100.{n}" for n in range(3)]),                  # no proxy: the header is the client's own words
])
async def test_the_client_address_is_never_the_first_forwarded_hop(database_url, tmp_path, clock, trusted,
                                                                     forwarded):
    """KNOWN-HOLES 20: a client that writes a new first ``X-Forwarded-For`` hop into each request is still one
    client to the rate limit."""
    from adnet.app import create_app

    app = create_app(make_settings(database_url, tmp_path, ADNET_RATE_LIMIT_PUBLIC="2/60",
                                   ADNET_TRUSTED_PROXIES=trusted), clock=clock)
    async with app.test_app() as test_app:
        client = test_app.test_client()
        statuses = [(await client.get("/healthz", headers={"X-Forwarded-For": hops})).status_code
                    for hops in forwarded]

    assert statuses == [200, 200, 429]
