"""The verifiers of CTA tasks: one module per kind, all behind one interface.

A verifier checks a completion's ``proof`` against the task's configuration before anything is written, and
returns a ``Verified``: what the completion records (the transaction hash of an ONCHAIN_EVENT proof, a unique key
across all completions) and what must be used up together with it (a SIGN_MESSAGE nonce, a VISIT_URL visit), which
the completion does inside its own database transaction, so a proof is consumed only by a completion that commits.

A refused proof raises a ``DomainError``; ``ProofRejected`` is the common case, an ``invalid_proof`` with a named
reason (``dwell_too_short``, ``wrong_sender`` ...) that the completion logs.
"""

from __future__ import annotations

from adnet.tasks.models import TaskKind
from adnet.tasks.verifiers import onchain_event, quiz, sign_message, visit_url
from adnet.tasks.verifiers.base import Attempt, ProofRejected, Verified, Verifier

VERIFIERS: dict[TaskKind, Verifier] = {
    TaskKind.VISIT_URL: visit_url.VERIFIER,
    TaskKind.SIGN_MESSAGE: sign_message.VERIFIER,
    TaskKind.ONCHAIN_EVENT: onchain_event.VERIFIER,
    TaskKind.QUIZ: quiz.VERIFIER,
}

__all__ = ["VERIFIERS", "Attempt", "ProofRejected", "Verified", "Verifier"]
