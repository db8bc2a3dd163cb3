"""A PostgreSQL server of a test's own, for outages: a cluster made with ``initdb`` in a directory of its own,
listening on a free port of 127.0.0.1, which the test stops and starts with ``pg_ctl`` (never the shared server of
``ADNET_TEST_DATABASE_URL``). Run as the ``postgres`` user when the tests run as root (PostgreSQL refuses root).
Without PostgreSQL's server programs (``/usr/lib/postgresql/<version>/bin``) the test is skipped, except under
CI, where it fails."""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from tests.ports import free_port

BINARIES = Path("/usr/lib/postgresql")
COMMAND_TIMEOUT = 60
PASSWORD = "private"  # the cluster trusts 127.0.0.1; the URL carries one because asyncpg's URLs may


def server_binaries() -> Path:
    """The ``bin`` directory of the newest PostgreSQL installed (Debian's layout); skips or fails the test
    without one."""
    found = sorted((path.parent for path in BINARIES.glob("*/bin/pg_ctl")),
                   key=lambda path: int(path.parent.name) if path.parent.name.isdigit() else 0)
    if not found:
        if os.environ.get("CI"):
            pytest.fail("CI runs the PostgreSQL restart test: install postgresql")
        pytest.skip(f"needs PostgreSQL's server programs under {BINARIES}")
    return found[-1]


class PrivatePostgres:
    """A cluster in a temporary directory of its own on a free port; ``start``, ``stop`` and ``start`` again keep
    its data, ``remove`` stops it and deletes it."""

    def __init__(self) -> None:
        self.binaries = server_binaries()
        self.port = free_port()
        # Not under pytest's tmp_path: its parents are closed to the postgres user.
        self.directory = Path(tempfile.mkdtemp(prefix="adnet-pg-"))
        self.data = self.directory / "data"
        self.log = self.directory / "server.log"
        self._user = pwd.getpwnam("postgres") if os.geteuid() == 0 else None
        if self._user is not None:
            os.chown(self.directory, self._user.pw_uid, self._user.pw_gid)
        self._run("initdb", "--pgdata", str(self.data), "--username", "postgres", "--auth", "trust",
                  "--encoding", "UTF8", "--no-sync")

    def url(self, name: str) -> str:
        """The URL of database ``name`` on this server."""
        return f"postgres://postgres:{PASSWORD}@127.0.0.1:{self.port}/{name}"

    def start(self) -> None:
        """Start the server and wait until it takes connections."""
        # fsync off: a test's data need not survive a power cut, and a stop (fast or immediate) loses nothing.
        options = f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.directory} -c fsync=off"
        self._run("pg_ctl", "start", "--pgdata", str(self.data), "--log", str(self.log), "--wait", "-o", options)

    def stop(self) -> None:
        """Stop the server as a restart does: ``-m fast`` ends every session (their transactions roll back)."""
        self._run("pg_ctl", "stop", "--pgdata", str(self.data), "--mode", "fast", "--wait")

    def remove(self) -> None:
        """Stop the server if it runs, and delete its directory."""
        subprocess.run(self._command("pg_ctl", "stop", "--pgdata", str(self.data), "--mode", "immediate"),  # noqa: S603
                       capture_output=True, timeout=COMMAND_TIMEOUT, check=False)
        shutil.rmtree(self.directory, ignore_errors=True)

    def log_tail(self, size: int = 2000) -> str:
        return self.log.read_text(errors="replace")[-size:] if self.log.exists() else ""

    def _command(self, program: str, *args: str) -> list[str]:
        command = [str(self.binaries / program), *args]
        return ["runuser", "-u", "postgres", "--", *command] if self._user is not None else command

    def _run(self, program: str, *args: str) -> None:
        result = subprocess.run(self._command(program, *args), capture_output=True, text=True,  # noqa: S603
                                timeout=COMMAND_TIMEOUT, check=False, cwd=self.directory)
        if result.returncode != 0:
            raise RuntimeError(f"{program} failed: {result.stderr[-2000:]} {self.log_tail()}")
