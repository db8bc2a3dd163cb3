"""A production install has no development chain: ``pip install adnet`` leaves out the ``devchain`` extra (py-evm,
whose package is ``eth``, and eth-tester). Each test runs the ``adnet`` command in a process where importing either
fails, as it does there: adnet imports, deploys, loads the demo and serves against a JSON-RPC node (anvil), and
asking it for the development chain exits 2 with one line naming the extra to install. ``make wheel-check`` shows
the same with a real install of the wheel."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import urllib.request
from pathlib import Path

import pytest

from adnet.core.wallets import dev_accounts
from tests.chain.conftest import rpc
from tests.chain.test_devchain import wait_for
from tests.conftest import TEST_SIGNER_KEY
from tests.ports import free_port

WITHOUT_DEVCHAIN = textwrap.dedent("""
    import sys

    class NoDevelopmentChain:
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in ("eth", "eth_tester"):
                raise ModuleNotFoundError(f"No module named {name!r} (not in a production install)", name=name)
            return None

    sys.meta_path.insert(0, NoDevelopmentChain())
""")
ADNET = WITHOUT_DEVCHAIN + "from adnet.cli.main import main\nsys.exit(main(sys.argv[1:]))\n"


def adnet_without_devchain(env: dict[str, str], *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", ADNET, *argv], env=env, capture_output=True, text=True,  # noqa: S603
                          timeout=120, check=False)


@pytest.fixture
def environment(tmp_path: Path) -> dict[str, str]:
    """A shell's environment with nothing of adnet's set but its data directory."""
    env = {name: value for name, value in os.environ.items() if not name.startswith("ADNET_")}
    return {**env, "ADNET_DATA_DIR": str(tmp_path / "var"), "ADNET_DATABASE_URL": f"sqlite://{tmp_path / 'a.sqlite3'}"}


def test_adnet_imports_without_the_development_chains_packages(environment):
    imports = subprocess.run([sys.executable, "-c", WITHOUT_DEVCHAIN + textwrap.dedent("""
        import importlib
        for blocked in ("eth", "eth_tester", "eth.vm"):
            try:
                importlib.import_module(blocked)
            except ModuleNotFoundError:
                continue
            raise SystemExit(f"{blocked} imported: the blocker does not hold")
        import adnet.app, adnet.cli.main, adnet.services, adnet.chain.service, adnet.chain.devserver, api, portal
        from adnet.app import create_app
        from adnet.config import load_settings
        create_app(load_settings())
        print(sorted(name for name in sys.modules if name.split(".")[0] in ("eth", "eth_tester")))
    """)], env=environment, capture_output=True, text=True, timeout=120, check=False)  # noqa: S603
    assert imports.returncode == 0, imports.stderr
    assert imports.stdout.strip() == "[]"
    help_text = adnet_without_devchain(environment, "--help")
    assert help_text.returncode == 0 and "serve" in help_text.stdout


@pytest.mark.parametrize("command", [["serve"], ["chain", "serve"], ["demo"]])
def test_asking_for_the_development_chain_says_in_one_line_what_to_install(environment, command):
    if command == ["demo"]:
        assert adnet_without_devchain(environment, "migrate").returncode == 0
    refused = adnet_without_devchain({**environment, "ADNET_ENV": "development"}, *command)
    assert refused.returncode == 2, refused.stderr
    said = [line for line in refused.stderr.splitlines() if line.startswith("adnet:")]
    assert len(said) == 1 and said[0].startswith("adnet: the development chain needs py-evm and eth-tester")
    assert "pip install 'adnet[devchain]'" in said[0] and "ADNET_CHAIN_RPC_URL" in said[0]
    assert "Traceback" not in refused.stderr


def test_adnet_deploys_loads_the_demo_and_serves_against_a_node_without_them(anvil_url, environment):
    snapshot = rpc(anvil_url, "evm_snapshot")["result"]
    env = {**environment, "ADNET_ENV": "development", "ADNET_CHAIN_RPC_URL": anvil_url,
           "ADNET_SIGNER_KEY": TEST_SIGNER_KEY, "ADNET_DEPLOYER_KEY": dev_accounts()[0].key.to_0x_hex()}
    server = None
    try:
        deployed = adnet_without_devchain(env, "chain", "deploy", "--test-tokens")
        assert deployed.returncode == 0, deployed.stderr
        env.update(line.split("=", 1) for line in deployed.stdout.splitlines() if line.startswith("ADNET_"))
        assert adnet_without_devchain(env, "migrate").returncode == 0
        demo = adnet_without_devchain(env, "demo", "--json")
        assert demo.returncode == 0, demo.stderr
        site = json.loads(demo.stdout)["siteId"]

        port = free_port()
        server = subprocess.Popen([sys.executable, "-c", ADNET, "serve", "--port", str(port)], env=env,  # noqa: S603
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        base = f"http://127.0.0.1:{port}"
        health = wait_for(lambda: answer(base + "/healthz"), within=90)
        assert health["chain"]["status"] == "ok" and health["chain"]["chainId"] == 31337
        assert answer(f"{base}/api/serve?siteId={site}&size=300x250")["kind"] == "BANNER"
    finally:
        if server is not None:
            server.terminate()
            server.wait(30)
        rpc(anvil_url, "evm_revert", [snapshot])


def answer(url: str) -> dict | None:
    """The JSON of a 200 answer; None while the server does not answer so."""
    try:
        with urllib.request.urlopen(url, timeout=5) as response:  # noqa: S310 - a local test server
            return json.loads(response.read()) if response.status == 200 else None
    except OSError:
        return None
