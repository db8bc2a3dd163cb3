"""The limits that guard accounts are exact across the workers of a real ``adnet serve --workers 2`` without Redis:
the database decides them (``adnet.accounts.limits``), so a limit of 30 an hour admits 30 in all, not 30 per
worker (kept in each worker's memory, the first 429 came at the 47th of 90 requests). On SQLite, and on PostgreSQL
under ``ADNET_TEST_DATABASE_URL``. With Redis: ``test_workers.py``."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Iterator

import pytest

from tests.reliability.conftest import AdnetServer, account, http_client, running_server, sign_in

REQUESTS = 90


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AdnetServer]:
    """Two workers, no Redis, sign-in and account limits of 30 an hour."""
    limits = {"ADNET_RATE_LIMIT_AUTH": "30/3600", "ADNET_RATE_LIMIT_ACCOUNT": "30/3600"}
    with running_server(tmp_path_factory.mktemp("adnet-no-redis"), "no_redis", extra_env=limits) as started:
        yield started


async def concurrent(server: AdnetServer, path: str, headers: dict[str, str]) -> Counter[int]:
    async with http_client(server, connections_limit=REQUESTS) as client:
        async with asyncio.timeout(60):
            responses = await asyncio.gather(*(client.get(path, headers=headers) for _ in range(REQUESTS)))
    return Counter(response.status_code for response in responses)


async def test_the_sign_in_limit_admits_exactly_30_across_two_workers(server: AdnetServer):
    assert await concurrent(server, "/api/auth/nonce", {"X-Forwarded-For": "198.51.100.31"}) == {200: 30, 429: 60}


async def test_a_signed_in_accounts_limit_admits_exactly_30_across_two_workers(server: AdnetServer):
    async with http_client(server) as client:
        token = await sign_in(client, account(2))  # from the test client's own address, not the one below

    answers = await concurrent(server, "/api/auth/me",
                               {"X-Forwarded-For": "198.51.100.32", "Authorization": f"Bearer {token}"})

    assert answers == {200: 30, 429: 60}
