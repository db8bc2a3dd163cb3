"""The drain before a serving process stops, so that a rolling upgrade cuts no request.

Without it, uvicorn answers SIGTERM at once: it stops accepting, closes every idle keep-alive connection and waits
for the requests in flight. A balancer that has not yet noticed keeps sending on those connections, and a request
it writes as the server closes the connection is lost (a reset, or "server disconnected").

With it, SIGTERM first makes the process *draining* for ``ADNET_DRAIN_SECONDS``: health (and so readiness) answers
503 ``draining``, which takes the host out of a balancer's rotation, while every request that still comes is
served as usual, its answer carrying ``Connection: close`` so that its client opens its next connection elsewhere.
Then the signal goes on to the handler it would have reached (uvicorn's, which ends the process gracefully: it
stops accepting, lets the requests in flight finish and runs the app's shutdown, which writes what the writers
hold). SIGINT is not drained: an operator's Ctrl+C stops at once.

``install`` runs inside each worker once it serves (``adnet.app.create_server_app``): uvicorn's handler is in place
by then in every worker (and, with ``--workers N``, uvicorn's supervisor answers SIGTERM by sending each worker
one), so nothing of uvicorn is replaced, only put off.
"""

from __future__ import annotations

import asyncio
import logging
import signal
from dataclasses import dataclass, field
from types import FrameType

log = logging.getLogger(__name__)


@dataclass
class Drain:
    """Whether this process is draining, and the SIGTERM handler that starts it.

    ``seconds`` is how long the process keeps serving after SIGTERM before it stops (0: stops at once, as
    without a drain)."""

    seconds: float = 0.0
    draining: bool = field(default=False, init=False)

    def begin(self) -> None:
        """Start draining: health answers ``draining`` and every answer closes its connection from now on."""
        if not self.draining:
            log.info("draining seconds=%s", self.seconds)
        self.draining = True

    def install(self) -> None:
        """Handle SIGTERM in this process (call it from the serving event loop, in the main thread): drain, then
        give the signal to the handler that was there before (uvicorn's, while it serves) and raise it again."""
        loop = asyncio.get_running_loop()
        previous = signal.getsignal(signal.SIGTERM)

        def stop() -> None:
            signal.signal(signal.SIGTERM, previous)
            signal.raise_signal(signal.SIGTERM)

        def on_terminate(signum: int, frame: FrameType | None) -> None:
            if self.draining:  # a repeated SIGTERM does not prolong the drain
                return
            self.begin()
            loop.call_soon_threadsafe(loop.call_later, self.seconds, stop)

        signal.signal(signal.SIGTERM, on_terminate)
