"""The interface every verifier implements, and the refusal they share."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from adnet.chain.client import ChainClient
from adnet.core.errors import Invalid, Unavailable, chain_unavailable
from adnet.tasks.models import Task, TaskKind


class ProofRejected(Invalid):
    """The proof does not show the task was done: ``invalid_proof`` with a named ``reason``."""

    def __init__(self, reason: str, message: str, *, field: str = "proof") -> None:
        super().__init__("invalid_proof", message, field=field, reason=reason)
        self.reason = reason


def proof_needs_chain() -> Unavailable:
    """The refusal of a proof that needs the chain while its node does not answer; nothing was recorded."""
    return chain_unavailable("The chain cannot be reached to check the proof")


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
    """An accepted proof. ``consume`` runs inside the completion's transaction and raises a DomainError when what the
    proof used is gone by then (a nonce used, a visit taken by a concurrent completion)."""

    tx_hash: str | None = None
    consume: Callable[[], Awaitable[None]] | None = field(default=None, compare=False)


class Verifier(Protocol):
    """Checks the proof of one kind of task."""

    kind: TaskKind

    async def verify(self, attempt: Attempt) -> Verified:
        """Accept the proof or raise a DomainError. Only a refusal that must stand is written before this returns (a
        wrong quiz answer); whatever the proof uses up is left to ``Verified.consume``."""
        ...

