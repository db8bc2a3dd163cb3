"""VISIT_URL: the viewer stayed on the advertiser's page at least ``min_dwell_ms``.

adnet measures the dwell itself: from the visit's start, which our redirect to the page records for the fingerprint
(``adnet.tasks.visits``), to the completion's arrival. That measure alone lets a completion pass; there is no
allowance for network time, so a stay shorter than ``min_dwell_ms`` on the server's clock never passes.

The client's ``dwellMs`` is information: it must be a number of milliseconds and is logged beside the server's
measure, and a report below the minimum is believed (the client says the viewer came back early), but it never
makes a dwell long enough. A report longer than the server's measure is not refused: the client starts its clock
at the click, a network trip before our redirect records the start, so an honest report is often a little longer.
The completion uses the visit up.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from adnet.tasks.config import VisitUrlConfig
from adnet.tasks.models import TaskKind, TaskVisit
from adnet.tasks.verifiers.base import Attempt, ProofRejected, Verified

log = logging.getLogger(__name__)

# A day: longer claims are not dwell times.
MAX_DWELL_MS = 86_400_000


class VisitUrlVerifier:
    """Holds the dwell measured since the visit recorded by our redirect against the configured minimum."""

    kind = TaskKind.VISIT_URL

    async def verify(self, attempt: Attempt) -> Verified:
        config: VisitUrlConfig = attempt.config
        reported = attempt.proof["dwellMs"]
        if isinstance(reported, bool) or not isinstance(reported, int | float) or not 0 <= reported <= MAX_DWELL_MS:
            raise ProofRejected("invalid_dwell", f"dwellMs is a number of milliseconds up to {MAX_DWELL_MS}.",
                                field="proof.dwellMs")
        minimum = timedelta(milliseconds=config.min_dwell_ms)
        if reported < config.min_dwell_ms:
            raise ProofRejected("dwell_too_short", f"Stay on the page at least {config.min_dwell_ms} ms.",
                                field="proof.dwellMs")
        visit = await TaskVisit.get_or_none(task_id=attempt.task.id, fingerprint=attempt.fingerprint)
        if visit is None:
            raise ProofRejected("visit_not_started", "Open the page through the task's visit link first.",
                                field="proof.dwellMs")
        measured = attempt.now - visit.started_at
        log.info("visit dwell task=%s measured_ms=%d reported_ms=%d", attempt.task.id,
                 measured // timedelta(milliseconds=1), reported)
        if measured < minimum:
            raise ProofRejected("dwell_too_short", f"Stay on the page at least {config.min_dwell_ms} ms after opening "
                                                   "it through the task's visit link.", field="proof.dwellMs")

        async def use_visit() -> None:
            if not await TaskVisit.filter(id=visit.id).delete():
                raise ProofRejected("visit_not_started", "This visit was used by another completion.",
                                    field="proof.dwellMs")

        return Verified(consume=use_visit)


VERIFIER = VisitUrlVerifier()
