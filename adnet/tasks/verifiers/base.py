"""The interface every verifier implements, and the refusal they share."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from adnet.chain.client import ChainClient
from adnet.errors import ApiError
from adnet.models import Task, TaskKind


def chain_unavailable() -> ApiError:
    """The 503 of a proof that needs the chain while its node does not answer; nothing was recorded."""
    return ApiError(503, "chain_unavailable", "The chain cannot be reached to check the proof; nothing was changed, "
                                              "retry later.", retryAfter=10)


class ProofRejected(ApiError):
    """The proof does not show the task was done: 400 ``invalid_proof`` with a named ``reason``."""

    def __init__(self, reason: str, message: str, *, field: str = "proof") -> None:
        super().__init__(400, "invalid_proof", message, reason=reason, field=field)
        self.reason = reason


@dataclass(frozen=True)
class Attempt:
    """One completion request as a verifier sees it: the task, its parsed config, and the claimed proof."""

    task: Task
    config: Any
    wallet: str
    fingerprint: str
    proof: dict[str, Any]
    now: datetime
    chain: ChainClient


@dataclass(frozen=True)
class Verified:
    """An accepted proof. ``consume`` runs inside the completion's transaction and raises ApiError when what the
    proof used is gone by then (a nonce used, a visit taken by a concurrent completion)."""

    tx_hash: str | None = None
    consume: Callable[[], Awaitable[None]] | None = field(default=None, compare=False)


class Verifier(Protocol):
    """Checks the proof of one kind of task."""

    kind: TaskKind

    async def verify(self, attempt: Attempt) -> Verified:
        """Accept the proof or raise ApiError. Only a refusal that must stand is written before this returns (a
        wrong quiz answer); whatever the proof uses up is left to ``Verified.consume``."""
        ...

