"""The soak run at its reduced size: ``bench/soak.py`` for 40 seconds (ten minutes under
``ADNET_RELIABILITY=full``) at a bounded rate, on this suite's database kind; it exits non-zero when the server's
memory grows past its bound after the warm-up, or when any request gets a 5xx or no answer. The full ten minutes
alone: ``make soak``.
"""

from __future__ import annotations

import os
import subprocess
import sys

from adnet.db.config import recreate_postgres
from tests.conftest import run_coroutine
from tests.reliability.conftest import ROOT, scaled

SECONDS = scaled(ci=40, full=600)
WARMUP = scaled(ci=15, full=60)


def test_the_server_serves_and_tracks_for_a_while_without_growing(capsys):
    command = [sys.executable, "-m", "bench.soak", "--seconds", str(SECONDS), "--warmup", str(WARMUP),
               "--interval", "2"]
    configured = os.environ.get("ADNET_TEST_DATABASE_URL")
    if configured:
        run_coroutine(recreate_postgres(f"{configured}_soak"))
        command += ["--database-url", f"{configured}_soak"]
    env = {name: value for name, value in os.environ.items() if not name.startswith("ADNET_")}

    result = subprocess.run(command, env=env, cwd=ROOT, capture_output=True, text=True,  # noqa: S603
                            timeout=SECONDS + 300, check=False)

    with capsys.disabled():
        print("\n" + result.stdout.strip())
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "soak passed" in result.stdout
