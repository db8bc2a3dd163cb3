"""The development chain as one process: a small JSON-RPC HTTP server on 127.0.0.1 over a ``DevChain`` whose state
is a SQLite file, so all app workers share one chain and a restart brings the same chain back.

The process binds a free port and then writes ``devchain.json`` (its URL and pid) next to the state file; whoever
needs the chain reads that file and checks the chain answers as ours (``web3_clientVersion``) before using it.
Only one process may serve a state file: it holds an exclusive lock on ``<state>.lock`` for its lifetime.

Run it with ``adnet chain serve`` (foreground) or let ``adnet serve`` start and stop it; tests start it with
``python -m adnet.chain.devserver --state PATH``.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import importlib.util
import json
import logging
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import IO, Any

from adnet.core import logs

log = logging.getLogger(__name__)

STATE_FILE = "devchain.sqlite3"
INFO_FILE = "devchain.json"
MAX_REQUEST_BYTES = 4 * 1024 * 1024
START_TIMEOUT_SECONDS = 60.0


# What the development chain runs on: eth-tester over py-evm (whose package is ``eth``), installed by the extra.
REQUIRED_MODULES = ("eth_tester", "eth")
INSTALL_HINT = ("the development chain needs py-evm and eth-tester, which this installation lacks: install them "
                "with `pip install 'adnet[devchain]'`, or set ADNET_CHAIN_RPC_URL to a JSON-RPC node")


class DevChainError(Exception):
    """The development chain cannot be started or reached."""


class DevChainNotInstalled(Exception):
    """The development chain was asked for where its packages (the ``devchain`` extra) are not installed; the
    ``adnet`` command says what to install and exits 2, as for a configuration error."""


def require_installed() -> None:
    """Raise DevChainNotInstalled unless the development chain's packages can be imported (looked up, not imported:
    the process that starts the chain never runs it)."""
    for name in REQUIRED_MODULES:
        try:
            found = importlib.util.find_spec(name) is not None
        except ImportError:
            found = False
        if not found:
            raise DevChainNotInstalled(INSTALL_HINT)


@dataclass(frozen=True)
class DevChainInfo:
    """Where a running development chain answers."""

    url: str
    pid: int
    genesis_hash: str


def state_path(data_dir: Path) -> Path:
    return data_dir / STATE_FILE


def info_path(state: Path) -> Path:
    return state.with_name(INFO_FILE)


def serve(state: Path, host: str = "127.0.0.1", port: int = 0) -> None:
    """Serve the chain stored at ``state`` until SIGTERM or SIGINT; commits are per request, so stopping at any
    moment keeps every answered transaction."""
    require_installed()
    from adnet.chain.devchain import DevChain

    lock = _lock(state.with_name(state.name + ".lock"), wait=False)
    started = time.perf_counter()
    chain = DevChain.open(state)
    server = ThreadingHTTPServer((host, port), _handler_for(chain))
    server.daemon_threads = True
    url = f"http://{host}:{server.server_address[1]}"
    info = info_path(state)
    _write_atomically(info, {"url": url, "pid": os.getpid(), "genesisHash": chain.genesis_hash})
    log.info("devchain serving url=%s state=%s block=%d ready_in=%.3fs", url, state, chain.block_number,
             time.perf_counter() - started)

    def stop(signum: int, frame: Any) -> None:
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    try:
        server.serve_forever(poll_interval=0.2)
    finally:
        server.server_close()
        chain.close()
        with contextlib.suppress(FileNotFoundError):
            if json.loads(info.read_text()).get("pid") == os.getpid():
                info.unlink()
        lock.close()


def running(state: Path) -> DevChainInfo | None:
    """The development chain serving ``state``, when one is running and answers as ours."""
    try:
        recorded = json.loads(info_path(state).read_text())
        info = DevChainInfo(url=recorded["url"], pid=int(recorded["pid"]), genesis_hash=recorded["genesisHash"])
    except (FileNotFoundError, ValueError, KeyError, TypeError):
        return None
    from adnet.chain.devchain import CLIENT_VERSION

    try:
        answer = _post(info.url, {"jsonrpc": "2.0", "id": 1, "method": "web3_clientVersion", "params": []})
    except (OSError, ValueError):
        return None
    return info if answer.get("result") == CLIENT_VERSION else None


@contextlib.contextmanager
def ensure_running(state: Path) -> Iterator[DevChainInfo]:
    """Use the development chain serving ``state``, starting one (and stopping it afterwards) when none runs.

    Concurrent callers (several workers) serialize on a lock file, so at most one chain process is started."""
    with _lock(state.with_name(state.name + ".start.lock"), wait=True):
        info = running(state)
        process = None
        if info is None:
            process, info = _start(state)
    try:
        yield info
    finally:
        if process is not None:
            stop(process)


@contextlib.contextmanager
def supervised(state: Path) -> Iterator[DevChainInfo]:
    """``ensure_running``, and for as long as the block runs a ``Supervisor`` that keeps the chain up."""
    with _lock(state.with_name(state.name + ".start.lock"), wait=True):
        info = running(state)
        process = None
        if info is None:
            process, info = _start(state)
    supervisor = Supervisor(state, info, process)
    supervisor.start()
    try:
        yield info
    finally:
        supervisor.stop()


class Supervisor:
    """Keeps the development chain of ``state`` serving for the process that needs it (``adnet serve``).

    A thread waits on the chain process this process started, so an exit is reaped at once (no zombie), and starts
    it again with its state kept (``var/devchain.sqlite3``: every answered transaction was committed) on the same
    address, so the workers' clients, which connect per request, reach it again without a restart of their own.
    A chain started by another process is looked for every ``CHECK_SECONDS`` and started anew once it is gone. A
    chain that fails to start is tried again after a pause that doubles up to ``MAX_BACKOFF_SECONDS``."""

    CHECK_SECONDS = 1.0
    MAX_BACKOFF_SECONDS = 30.0

    def __init__(self, state: Path, info: DevChainInfo, process: subprocess.Popen | None) -> None:
        self.state = state
        self.info = info
        self.process = process
        self.restarts = 0
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="devchain-supervisor", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """Stop watching, then stop the chain process if this process started it."""
        self._stopping.set()
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
        self._thread.join()
        if self.process is not None:
            stop(self.process)

    def _watch(self) -> None:
        backoff = self.CHECK_SECONDS
        while not self._stopping.is_set():
            if self.process is not None:
                try:
                    status = self.process.wait(timeout=self.CHECK_SECONDS)  # reaps it as it exits
                except subprocess.TimeoutExpired:
                    continue
                if self._stopping.is_set():
                    return
                log.warning("devchain exited pid=%d status=%s: starting it again at %s", self.process.pid, status,
                            self.info.url)
                self.process = None
            elif self._stopping.wait(self.CHECK_SECONDS) or running(self.state) is not None:
                continue
            try:
                self._restart()
            except DevChainError as exc:
                log.error("devchain could not be started again: %s; next try in %.0f s", exc, backoff)
                self._stopping.wait(backoff)
                backoff = min(backoff * 2, self.MAX_BACKOFF_SECONDS)
            else:
                backoff = self.CHECK_SECONDS

    def _restart(self) -> None:
        with _lock(self.state.with_name(self.state.name + ".start.lock"), wait=True):
            if running(self.state) is not None:
                return
            port = urllib.parse.urlsplit(self.info.url).port
            self.process = start_process(self.state, port=port or 0)
            self.info = wait_until_ready(self.process, self.state)
        self.restarts += 1
        log.info("devchain started again pid=%d url=%s", self.info.pid, self.info.url)


def stop(process: subprocess.Popen) -> None:
    """Stop a development chain process we started: SIGTERM, then SIGKILL if it does not exit."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


def start_process(state: Path, port: int = 0) -> subprocess.Popen:
    """Start ``python -m adnet.chain.devserver`` for ``state`` on ``port`` (0: any free port) in its own session (a
    Ctrl-C in the terminal reaches the app first, which then stops the chain)."""
    state.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(FileNotFoundError):
        info_path(state).unlink()
    return subprocess.Popen(  # noqa: S603 - our own interpreter and module, no shell
        [sys.executable, "-m", "adnet.chain.devserver", "--state", str(state), "--port", str(port)],
        start_new_session=True,
    )


def wait_until_ready(process: subprocess.Popen, state: Path, timeout: float = START_TIMEOUT_SECONDS) -> DevChainInfo:
    """Wait for the process started by ``start_process`` to answer; raise DevChainError if it exits or hangs."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        info = running(state)
        if info is not None and info.pid == process.pid:
            return info
        if process.poll() is not None:
            raise DevChainError(f"the development chain exited with status {process.returncode}; see its log above")
        time.sleep(0.05)
    stop(process)
    raise DevChainError(f"the development chain did not answer within {timeout:.0f} s")


def _start(state: Path) -> tuple[subprocess.Popen, DevChainInfo]:
    require_installed()
    process = start_process(state)
    return process, wait_until_ready(process, state)


def _handler_for(chain: Any) -> type[BaseHTTPRequestHandler]:
    class JsonRpcHandler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            if length > MAX_REQUEST_BYTES:
                self._reply(413, {"jsonrpc": "2.0", "id": None,
                                  "error": {"code": -32600, "message": "request too large"}})
                return
            try:
                request = json.loads(self.rfile.read(length))
            except ValueError:
                self._reply(400, {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse error"}})
                return
            self._reply(200, chain.handle(request))

        def _reply(self, status: int, body: Any) -> None:
            payload = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, format: str, *args: Any) -> None:
            log.debug("devchain http " + format, *args)

    return JsonRpcHandler


def _post(url: str, body: dict[str, Any], timeout: float = 2.0) -> dict[str, Any]:
    request = urllib.request.Request(url, data=json.dumps(body).encode(),  # noqa: S310 - our own http URL
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310
            return json.loads(response.read())
    except urllib.error.URLError as exc:
        raise OSError(str(exc)) from None


def _lock(path: Path, *, wait: bool) -> IO[str]:
    """An exclusive lock on ``path``, held until the returned file is closed (also when the process dies)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle = open(path, "a+")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        raise DevChainError(f"another development chain already serves {path.with_suffix('')}") from None
    return handle


def _write_atomically(path: Path, content: dict[str, Any]) -> None:
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(json.dumps(content))
    temporary.replace(path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m adnet.chain.devserver", description=__doc__.split("\n")[0])
    parser.add_argument("--state", type=Path, required=True, help="SQLite file holding the chain")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 = any free port (written to devchain.json)")
    args = parser.parse_args(argv)
    logs.configure()
    try:
        serve(args.state.resolve(), args.host, args.port)
    except DevChainError as exc:
        print(f"devchain: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
