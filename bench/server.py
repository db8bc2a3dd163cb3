"""The server the benchmark measures: ``adnet serve`` exactly (migrations, the development chain, uvicorn with
uvloop and httptools, one worker), with the app factory adding one trivial JSON route, ``GET /bench/ceiling``,
that passes through the same middleware (request ids, security headers, the default rate limit) and does nothing
else: the ceiling every endpoint is compared to.

Run by ``bench/run.py``; by hand: ``python -m bench.server --port 8765`` with the same ``ADNET_*`` environment.
"""

from __future__ import annotations

import argparse
import asyncio

from quart import Quart, Response, jsonify

from adnet.app import create_server_app
from adnet.cli import chain as chain_cli
from adnet.config import load_settings
from adnet.db import migrations


def create_app() -> Quart:
    """adnet's app plus the ceiling route."""
    app = create_server_app()

    @app.get("/bench/ceiling")
    async def ceiling() -> Response:
        return jsonify({"status": "ok"})

    return app


def main() -> None:
    import uvicorn

    parser = argparse.ArgumentParser(description="adnet serve, plus the benchmark's ceiling route")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args()
    settings = load_settings()
    asyncio.run(migrations.migrate(settings.database_url))
    with chain_cli.serving(settings):
        uvicorn.run("bench.server:create_app", factory=True, host="127.0.0.1", port=args.port, workers=args.workers,
                    loop="uvloop", http="httptools", proxy_headers=False, server_header=False, access_log=False,
                    log_level="warning")


if __name__ == "__main__":
    main()
