"""Fuzzing: schemathesis generates requests, valid and invalid, for every operation of the running server's own
``/openapi.json`` and sends them to a real two-worker ``adnet serve`` on 127.0.0.1, signed in as the demo
publisher, the demo advertiser or an operator according to the operation's path.

For every request: no 5xx; every error is JSON in the SPEC shape (``error`` a snake_case code, ``message`` a
sentence, ``field`` a string when present); and a rejected request (4xx) changed nothing: the row count of every
table and every ledger balance are the same before and after it. ``adnet audit`` closes the module.

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
from decimal import Decimal

import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from schemathesis.core.control import SkipTest

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
# A rejected wrong quiz answer counts the wallet's try (bounded guessing): the one 4xx that is meant to write.
COUNTED_REJECTIONS = {"wrong_answer": {"task_attempt"}}


@pytest.fixture(scope="module")
def fuzz_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AdnetServer]:
    """A server of its own, with an operator configured, so its books are checked by themselves."""
    operator = account(OPERATOR).address.lower()
    with running_server(tmp_path_factory.mktemp("fuzz-server"), "fuzz",
                        extra_env={"ADNET_OPERATORS": operator}) as server:
        yield server


@pytest.fixture(scope="module")
def sessions(fuzz_server: AdnetServer) -> dict[str, str]:
    """Session tokens by role: the demo publisher, the demo advertiser, an operator."""
    async def sign_in_all() -> dict[str, str]:
        async with http_client(fuzz_server) as client:
            return {role: await sign_in(client, account(index))
                    for role, index in (("publishers", 2), ("advertisers", 1), ("operators", OPERATOR))}

    return asyncio.run(sign_in_all())


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
            except AssertionError as failure:
                failures[f"{operation.label} ({mode.value})"] = str(failure)[:2000]
    print(f"fuzz: {len(operations)} operations, up to {EXAMPLES} examples per mode; requests sent: "
          f"{dict(sent)}; nothing to negate in: {', '.join(nothing_to_negate) or 'none'}")
    assert not failures, "\n\n".join(f"{label}: {failure}" for label, failure in failures.items())


def fuzz(operation, mode: schemathesis.GenerationMode, sessions: dict[str, str], database: DatabaseReader,
         sent: Counter[str]) -> None:
    """Send ``EXAMPLES`` generated requests of ``mode`` to one operation and check each; ``sent`` counts them by
    mode and status class."""
    role = operation.path.split("/")[2]
    session = {"Authorization": f"Bearer {sessions[role]}"} if role in sessions else {}

    @given(case=operation.as_strategy(generation_mode=mode))
    @settings(max_examples=EXAMPLES, deadline=None, derandomize=not FULL, database=None,
              phases=[Phase.explicit, Phase.generate], suppress_health_check=list(HealthCheck))
    def check(case) -> None:
        before = database.state()
        response = case.call(headers={**(case.headers or {}), **session}, allow_redirects=False)
        after = database.state()
        sent[f"{mode.value} {response.status_code // 100}xx"] += 1
        where = case.as_curl_command(headers=session)
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


def test_the_books_pass_the_audit_after_fuzzing(fuzz_server: AdnetServer):
    fuzz_server.audit()


class DatabaseReader:
    """Row counts and ledger balances read synchronously (the fuzz tests are synchronous): sqlite3 for a SQLite
    file, asyncpg on a private event loop for PostgreSQL."""

    def __init__(self, database_url: str) -> None:
        self.postgres = database_url.startswith("postgres")
        if self.postgres:
            import asyncpg

            self.loop = asyncio.new_event_loop()
            self.connection = self.loop.run_until_complete(
                asyncpg.connect(database_url.replace("postgres://", "postgresql://", 1)))
        else:
            self.sqlite = sqlite3.connect(database_url.removeprefix("sqlite://"), timeout=30)

    def _query(self, sql: str) -> list[tuple]:
        if self.postgres:
            return [tuple(row) for row in self.loop.run_until_complete(self.connection.fetch(sql))]
        return self.sqlite.execute(sql).fetchall()

    def state(self) -> BooksState:
        if self.postgres:
            tables = [row[0] for row in self._query(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'")]
        else:
            tables = [row[0] for row in self._query("SELECT name FROM sqlite_master WHERE type = 'table'")]
        counted = sorted(name for name in tables if name not in BACKGROUND_TABLES and not name.startswith("sqlite_"))
        rows = {table: self._query(f'SELECT COUNT(*) FROM "{table}"')[0][0] for table in counted}
        balances = {(kind, owner, token): int(Decimal(str(balance))) for kind, owner, token, balance in
                    self._query("SELECT kind, owner, token, balance FROM ledger_account")}
        return BooksState(rows, balances)

    def close(self) -> None:
        if self.postgres:
            self.loop.run_until_complete(self.connection.close())
            self.loop.close()
        else:
            self.sqlite.close()
