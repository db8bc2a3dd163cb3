"""Ports for the servers tests start (adnet, Redis, PostgreSQL, anvil), and for addresses where nothing listens.

A port that ``bind(0)`` handed out and the test released is in the kernel's ephemeral range, where every outgoing
connection takes its source port: under load, one may take it before the server binds it, seconds later. These
ports are below that range (Linux's default starts at 32768), each pytest-xdist worker in a block of its own.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from functools import cache

FIRST_PORT = 20_000
BLOCK = 1_000
BLOCKS = 12  # 20000-31999


@cache
def _ports() -> Iterator[int]:
    """This worker's block, round and round: one generator for the process."""
    from tests.conftest import worker_number  # here, not above: tests.conftest imports this module

    first = FIRST_PORT + worker_number() % BLOCKS * BLOCK
    while True:
        yield from range(first, first + BLOCK)


def free_port() -> int:
    """A port of this worker's block on 127.0.0.1 that nothing is bound to now; each call gives the next one."""
    for _ in range(BLOCK):
        port = next(_ports())
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:  # in use, or closed a moment ago (TIME_WAIT)
                continue
        return port
    raise RuntimeError(f"no free port in {FIRST_PORT}-{FIRST_PORT + BLOCKS * BLOCK - 1} for this worker")
