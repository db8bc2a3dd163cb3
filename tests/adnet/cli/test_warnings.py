"""adnet's commands print what adnet has to say, and no warnings from the libraries it uses: ``adnet serve`` loads
every module the service has (SIWE's grammar among them, whose loading warned about abnf's core rules four times)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys

from tests.chain.test_devchain import answers, wait_for
from tests.ports import free_port

WARNING = re.compile(r"\b\w*Warning\b")


def test_adnet_serve_prints_no_warning(tmp_path):
    port = free_port()
    env = {**{name: value for name, value in os.environ.items() if not name.startswith(("ADNET_", "PYTHONWARN"))},
           "ADNET_DATA_DIR": str(tmp_path), "ADNET_PORT": str(port), "ADNET_DRAIN_SECONDS": "0"}
    stderr = tmp_path / "stderr.txt"
    with stderr.open("w") as errors:
        server = subprocess.Popen([sys.executable, "-m", "adnet", "serve"], env=env,
                                  stdout=subprocess.DEVNULL, stderr=errors)
        try:
            wait_for(lambda: answers(port), within=90)
        finally:
            server.send_signal(signal.SIGTERM)
            server.wait(60)
    printed = stderr.read_text()
    assert "Uvicorn running" in printed
    assert WARNING.findall(printed) == [], printed
