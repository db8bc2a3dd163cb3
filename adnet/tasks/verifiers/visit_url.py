"""VISIT_URL: the viewer stayed on the advertiser's page at least ``minDwellMs``.

The dwell is the client's report, so it is held against what the server saw: the visit must have started through
our redirect (``adnet.tasks.visits``) for this fingerprint, and the claimed dwell cannot exceed the time since then
(give or take one network trip).
The completion uses the visit up.
"""

from __future__ import annotations

from adnet.tasks.config import VisitUrlConfig
from adnet.tasks.models import TaskKind, TaskVisit
from adnet.tasks.verifiers.base import Attempt, ProofRejected, Verified

# A day: longer claims are not dwell times.
MAX_DWELL_MS = 86_400_000
# The viewer's dwell starts at their click, ours when the redirect request reaches us, a network trip later; the
# dwell may exceed our measure by this much before it counts as longer than the visit.
LATENCY_ALLOWANCE_MS = 2000


class VisitUrlVerifier:
    """Checks ``proof.dwellMs`` against the configured minimum and the visit recorded by our redirect."""

    kind = TaskKind.VISIT_URL

    async def verify(self, attempt: Attempt) -> Verified:
        config: VisitUrlConfig = attempt.config
        dwell = attempt.proof["dwellMs"]
        if isinstance(dwell, bool) or not isinstance(dwell, int | float) or not 0 <= dwell <= MAX_DWELL_MS:
            raise ProofRejected("invalid_dwell", f"dwellMs is a number of milliseconds up to {MAX_DWELL_MS}.",
                                field="proof.dwellMs")
        if dwell < config.minDwellMs:
            raise ProofRejected("dwell_too_short", f"Stay on the page at least {config.minDwellMs} ms.",
                                field="proof.dwellMs")
        visit = await TaskVisit.get_or_none(task_id=attempt.task.id, fingerprint=attempt.fingerprint)
        if visit is None:
            raise ProofRejected("visit_not_started", "Open the page through the task's visit link first.",
                                field="proof.dwellMs")
        elapsed_ms = (attempt.now - visit.started_at).total_seconds() * 1000
        if dwell > elapsed_ms + LATENCY_ALLOWANCE_MS:
            raise ProofRejected("dwell_exceeds_visit", "The dwell is longer than the time since the visit started.",
                                field="proof.dwellMs")

        async def use_visit() -> None:
            if not await TaskVisit.filter(id=visit.id).delete():
                raise ProofRejected("visit_not_started", "This visit was used by another completion.",
                                    field="proof.dwellMs")

        return Verified(consume=use_visit)


VERIFIER = VisitUrlVerifier()
