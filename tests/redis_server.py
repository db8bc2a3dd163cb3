"""A Redis of a test's own, for outages: ``redis-server`` on a free port of 127.0.0.1, which the test starts, kills
and starts again (never the shared Redis of ``ADNET_TEST_REDIS_URL``). Without a ``redis-server`` on the PATH the
test is skipped, except under CI, where it fails."""

from __future__ import annotations

import os
import shutil
import subprocess
import time

import pytest
import redis

START_TIMEOUT = 10.0


class PrivateRedis:
    """``redis-server`` on ``port``, without persistence: each start begins empty."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        executable = shutil.which("redis-server")
        if executable is None:
            if os.environ.get("CI"):
                pytest.fail("CI runs the Redis outage tests: install redis-server")
            pytest.skip("needs redis-server on the PATH")
        self.process = subprocess.Popen(  # noqa: S603 - a fixed command line
            [executable, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            try:
                with redis.Redis(port=self.port, socket_timeout=1) as connection:
                    connection.ping()
                return
            except redis.ConnectionError:
                time.sleep(0.05)
        raise RuntimeError(f"redis-server did not answer on port {self.port} within {START_TIMEOUT:.0f} s")

    def kill(self) -> None:
        """SIGKILL, as a crash: nothing is closed cleanly."""
        if self.process is not None:
            self.process.kill()
            self.process.wait(timeout=10)
            self.process = None

    def keys(self, pattern: str) -> list[str]:
        with redis.Redis(port=self.port, socket_timeout=1, decode_responses=True) as connection:
            return sorted(connection.keys(pattern))

