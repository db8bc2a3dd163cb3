"""Fuzzing: schemathesis generates requests, valid and invalid, for every operation of the running server's own
``/openapi.json`` and sends them to a real two-worker ``adnet serve`` on 127.0.0.1, signed in as the demo
publisher, the demo advertiser or an operator according to the operation's path (and with the metrics token for
``/metrics``).

For every request: every check schemathesis has (no 5xx; status codes, content types, headers and bodies as the
document says; invalid data refused, valid data not; a method the path lacks answered 405 with ``Allow``;
authentication not ignored; and the rest), except that valid data may be refused with a 400: the document cannot
say every rule (an amount above zero, a start before the end). Then: every error is JSON in the SPEC shape
(``error`` a snake_case code, ``message`` a sentence, ``field`` a string when present); and a rejected request
(4xx) changed nothing: the row count of every table and every ledger balance are the same before and after it.
Generated sign-ins never reach the signature check, so one test sends real SIWE messages with signatures ecrecover
cannot read. ``adnet audit`` closes the module.

Size: ``EXAMPLES`` valid and ``EXAMPLES`` invalid requests per operation (reduced in CI, derandomized so a run is
repeatable; random and larger under ``ADNET_RELIABILITY=full``). An operation with nothing schemathesis can make
invalid gets valid requests only, and the test prints which.
"""

from __future__ import annotations

import asyncio
import re
import sqlite3
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime
from decimal import Decimal

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from schemathesis.core.control import SkipTest
from schemathesis.core.failures import FailureGroup

from api.conversions import PIXEL_ERROR_HEADER
from tests.auth_helpers import UNRECOVERABLE_SIGNATURES, sign, siwe_message
from tests.reliability.conftest import (
    BACKGROUND_TABLES,
    FULL,
    AdnetServer,
    BooksState,
    account,
    http_client,
    running_server,
    scaled,
    sign_in,
)

EXAMPLES = scaled(ci=12, full=150)
ERROR_CODE = re.compile(r"^[a-z][a-z0-9_]*$")
OPERATOR = 3  # development account signed in as an operator (ADNET_OPERATORS)
METRICS_TOKEN = "fuzz-metrics-token-" + "0123456789abcdef" * 2
# A rejected wrong quiz answer counts the wallet's try (bounded guessing): the one 4xx that is meant to write.
COUNTED_REJECTIONS = {"wrong_answer": {"task_attempt"}}
# Routes a page loads as an image: every request is answered with the image, a refusal naming its code in a header.
IMAGE_ANSWERS = {"GET /api/conversions/pixel"}


@pytest.fixture(scope="module")
def fuzz_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AdnetServer]:
    """A server of its own, with an operator configured, so its books are checked by themselves."""
    operator = account(OPERATOR).address.lower()
    with running_server(tmp_path_factory.mktemp("fuzz-server"), "fuzz",
                        extra_env={"ADNET_OPERATORS": operator, "ADNET_METRICS_TOKEN": METRICS_TOKEN}) as server:
        yield server


@pytest.fixture(scope="module")
def sessions(fuzz_server: AdnetServer) -> dict[str, str]:
    """Bearer tokens by the first part of the path after /api/ (or of the path): the sessions of the demo publisher,
    the demo advertiser and an operator, and the metrics token."""
    async def sign_in_all() -> dict[str, str]:
        async with http_client(fuzz_server) as client:
            return {role: await sign_in(client, account(index))
                    for role, index in (("publishers", 2), ("advertisers", 1), ("operators", OPERATOR))}

    return {**asyncio.run(sign_in_all()), "metrics": METRICS_TOKEN}


@pytest.fixture(scope="module")
def database(fuzz_server: AdnetServer) -> Iterator[DatabaseReader]:
    reader = DatabaseReader(fuzz_server.database_url)
    try:
        yield reader
    finally:
        reader.close()


@pytest.fixture(scope="module")
def api_schema(fuzz_server: AdnetServer):
    """The server's own OpenAPI document; logout is left out (ending the session would turn every later
    authenticated request into a plain 401)."""
    loaded = schemathesis.openapi.from_url(f"{fuzz_server.url}/openapi.json")
    loaded.config.update(base_url=fuzz_server.url, request_timeout=30)
    # Schema-valid data may still break a rule the schema cannot say: a 400 in the SPEC shape, checked below.
    loaded.config.checks.positive_data_acceptance.expected_statuses.append("400")
    return loaded.exclude(path="/api/auth/logout")


def test_no_request_breaks_the_api_or_changes_anything_when_rejected(api_schema, sessions, database):
    operations = [result.ok() for result in api_schema.get_all_operations()]
    assert len(operations) > 20, "the OpenAPI document lost its operations"
    failures: dict[str, str] = {}
    nothing_to_negate: list[str] = []
    sent: Counter[str] = Counter()
    for mode in schemathesis.GenerationMode:
        # One mode at a time: schemathesis then says (SkipTest) when an operation has nothing to negate.
        api_schema.config.generation.update(modes=[mode])
        for operation in operations:
            try:
                fuzz(operation, mode, sessions, database, sent)
            except SkipTest:
                nothing_to_negate.append(operation.label)
            except (AssertionError, FailureGroup) as failure:
                failures[f"{operation.label} ({mode.value})"] = str(failure)[:2000]
    print(f"fuzz: {len(operations)} operations, up to {EXAMPLES} examples per mode; requests sent: "
          f"{dict(sent)}; nothing to negate in: {', '.join(nothing_to_negate) or 'none'}")
    assert not failures, "\n\n".join(f"{label}: {failure}" for label, failure in failures.items())


def fuzz(operation, mode: schemathesis.GenerationMode, sessions: dict[str, str], database: DatabaseReader,
         sent: Counter[str]) -> None:
    """Send ``EXAMPLES`` generated requests of ``mode`` to one operation and check each; ``sent`` counts them by
    mode and status class."""
    role = operation.path.removeprefix("/api").split("/")[1]
    session = {"Authorization": f"Bearer {sessions[role]}"} if role in sessions else {}

    @given(case=operation.as_strategy(generation_mode=mode))
    @settings(max_examples=EXAMPLES, deadline=None, derandomize=not FULL, database=None,
              phases=[Phase.explicit, Phase.generate], suppress_health_check=list(HealthCheck))
    def check(case) -> None:
        before = database.state()
        headers = {**(case.headers or {}), **session}
        response = case.call(headers=headers, allow_redirects=False)
        after = database.state()
        sent[f"{mode.value} {response.status_code // 100}xx"] += 1
        where = case.as_curl_command(headers=session)
        refused_as = response.headers.get(PIXEL_ERROR_HEADER.lower(), [])  # schemathesis: lower-case, listed
        if operation.label in IMAGE_ANSWERS and refused_as:
            # A refusal answered with the image and its code in a header (docs/conversions.md), not by status.
            assert ERROR_CODE.match(refused_as[0]), f"{where}: {response.headers}"
            assert (before.rows, before.balances) == (after.rows, after.balances), f"{where} refused but wrote"
            return
        case.validate_response(response, headers=headers)
        assert response.status_code < 500, f"{where}: {response.status_code} {response.text}"
        if response.status_code < 400:
            return
        body = response.json()
        assert isinstance(body, dict) and isinstance(body.get("error"), str), f"{where}: {body}"
        assert ERROR_CODE.match(body["error"]), f"{where}: {body}"
        assert isinstance(body.get("message"), str) and body["message"], f"{where}: {body}"
        assert body.get("field") is None or isinstance(body["field"], str), f"{where}: {body}"
        allowed = COUNTED_REJECTIONS.get(body["error"], set())
        changed = {table for table in set(before.rows) | set(after.rows)
                   if before.rows.get(table) != after.rows.get(table)}
        assert changed <= allowed, f"{where} rejected ({body['error']}) but wrote {changed}"
        assert before.balances == after.balances, f"{where} rejected ({body['error']}) but moved money"

    check()


@pytest.mark.parametrize("signature", UNRECOVERABLE_SIGNATURES.values(), ids=UNRECOVERABLE_SIGNATURES.keys())
def test_a_sign_in_with_a_bad_signature_reaches_the_signature_check(api_schema, fuzz_server: AdnetServer, signature):
    """Generated sign-ins never carry a message that parses, with this server's origin, chain and a nonce it issued:
    this one does, so it is the signature that is judged, and schemathesis's checks judge the answer. The refusal
    leaves the nonce unused: the same message, signed, then opens a session."""
    wallet = account(2)
    grant = httpx.get(f"{fuzz_server.url}/api/auth/nonce", timeout=30).json()
    message = siwe_message(wallet.address, nonce=grant["nonce"], domain=grant["domain"], uri=grant["uri"] + "/portal",
                           scheme=grant["uri"].split("://", 1)[0], chain_id=grant["chainId"],
                           issued_at=datetime.now(UTC))
    operation = api_schema["/api/auth/verify"]["POST"]
    case = operation.Case(body={"message": message, "signature": signature}, media_type="application/json")
    response = case.call()
    case.validate_response(response)
    assert (response.status_code, response.json()["error"]) == (401, "invalid_signature")
    signed = operation.Case(body={"message": message, "signature": sign(wallet, message)},
                            media_type="application/json")
    assert signed.call().status_code == 200


def test_the_books_pass_the_audit_after_fuzzing(fuzz_server: AdnetServer):
    fuzz_server.audit()


class DatabaseReader:
    """Row counts and ledger balances read synchronously (the fuzz tests are synchronous): sqlite3 for a SQLite
    file, asyncpg on a private event loop for PostgreSQL. The tables are listed once (the schema does not change
    while fuzzing) and counted by one statement, a snapshot of them all."""

    def __init__(self, database_url: str) -> None:
        self.postgres = database_url.startswith("postgres")
        if self.postgres:
            import asyncpg

            self.loop = asyncio.new_event_loop()
            self.connection = self.loop.run_until_complete(
                asyncpg.connect(database_url.replace("postgres://", "postgresql://", 1)))
            tables = self._query("SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'")
        else:
            self.sqlite = sqlite3.connect(database_url.removeprefix("sqlite://"), timeout=30)
            tables = self._query("SELECT name FROM sqlite_master WHERE type = 'table'")
        counted = sorted(name for (name,) in tables if name not in BACKGROUND_TABLES and not name.startswith("sqlite_"))
        self.count_rows = " UNION ALL ".join(f"SELECT '{table}', COUNT(*) FROM \"{table}\"" for table in counted)

    def _query(self, sql: str) -> list[tuple]:
        if self.postgres:
            return [tuple(row) for row in self.loop.run_until_complete(self.connection.fetch(sql))]
        return self.sqlite.execute(sql).fetchall()

    def state(self) -> BooksState:
        rows = dict(self._query(self.count_rows))
        balances = {(kind, owner, token): int(Decimal(str(balance))) for kind, owner, token, balance in
                    self._query("SELECT kind, owner, token, balance FROM ledger_account")}
        return BooksState(rows, balances)

    def close(self) -> None:
        if self.postgres:
            self.loop.run_until_complete(self.connection.close())
            self.loop.close()
        else:
            self.sqlite.close()
