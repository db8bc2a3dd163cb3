"""Where a VISIT_URL dwell starts: our redirect to the advertiser's page records the time, so adnet measures the
dwell itself, from a start the client did not report, to the completion's arrival (``verifiers.visit_url``).

A fingerprint's visit of a task is one row (a unique key); the first visit through our link starts it, and a
completion uses it up, so a further completion (where a task allows several) needs a new visit.
"""

from __future__ import annotations

import logging
from datetime import datetime

from adnet.tasks.commands import VisitStart
from adnet.tasks.lookup import live_task_and_config
from adnet.tasks.models import TaskKind, TaskVisit

log = logging.getLogger(__name__)


async def start_visit(task_id: str, visit: VisitStart, now: datetime) -> str:
    """Record that the device starts visiting the page of VISIT_URL task ``task_id`` at ``now`` (unless a visit of
    it is already under way) and return the page's URL to redirect to."""
    fingerprint = visit.fingerprint
    task, config = await live_task_and_config(task_id, now, kinds={TaskKind.VISIT_URL})
    await TaskVisit.bulk_create([TaskVisit(task_id=task.id, fingerprint=fingerprint, started_at=now)],
                                ignore_conflicts=True)
    log.info("task visit task=%s", task.id)
    return str(config.url)
