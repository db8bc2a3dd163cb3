"""QUIZ: the answer, trimmed, case-folded and NFKC-normalised, is one of the accepted answers.

The accepted answers never leave the server (``public_task`` shows the question and choices only). A wallet has at
most ``maxAttempts`` wrong tries: each try first takes a free attempt number of that wallet (a unique key), which a
correct answer gives back, so even concurrent guesses never get more than ``maxAttempts`` wrong answers checked.
"""

from __future__ import annotations

import logging
import unicodedata
from datetime import datetime

from tortoise.exceptions import IntegrityError

from adnet.errors import ApiError, bad_request, conflict
from adnet.models import TaskAttempt, TaskKind
from adnet.tasks.config import QuizConfig
from adnet.tasks.verifiers.base import Attempt, Verified

log = logging.getLogger(__name__)

MAX_ANSWER_LENGTH = 200


def normalize_answer(text: str) -> str:
    """The form answers are compared in: NFKC, trimmed, case-folded."""
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).strip().casefold())


class QuizVerifier:
    """Checks ``proof.answer``, counting wrong tries per wallet."""

    kind = TaskKind.QUIZ

    async def verify(self, attempt: Attempt) -> Verified:
        config: QuizConfig = attempt.config
        answer = attempt.proof["answer"]
        if not isinstance(answer, str) or not answer.strip() or len(answer) > MAX_ANSWER_LENGTH:
            raise bad_request("invalid_field", f"answer is a text of 1 to {MAX_ANSWER_LENGTH} characters.",
                              field="proof.answer")
        taken = await take_attempt(attempt.task.id, attempt.wallet, config.maxAttempts, attempt.now)
        if taken is None:
            raise conflict("too_many_attempts", f"This wallet has used its {config.maxAttempts} tries at this quiz.")
        slot, used = taken
        if normalize_answer(answer) in {normalize_answer(accepted) for accepted in config.answers}:
            await TaskAttempt.filter(id=slot.id).delete()
            return Verified()
        log.info("quiz wrong answer task=%s wallet=%s attempt=%d", attempt.task.id, attempt.wallet, slot.attempt)
        raise ApiError(400, "wrong_answer", "That answer is not right.", field="proof.answer",
                       attemptsLeft=max(config.maxAttempts - used, 0))


async def take_attempt(task_id: str, wallet: str, limit: int, now: datetime) -> tuple[TaskAttempt, int] | None:
    """Take the lowest free attempt number (1 to ``limit``) of ``wallet`` at the task and return it with how many
    numbers are taken now; None when all are taken. The unique key decides between concurrent tries."""
    for _ in range(limit + 2):
        taken = set(await TaskAttempt.filter(task_id=task_id, wallet=wallet).values_list("attempt", flat=True))
        free = [number for number in range(1, limit + 1) if number not in taken]
        if not free:
            return None
        try:
            slot = await TaskAttempt.create(task_id=task_id, wallet=wallet, attempt=free[0], created_at=now)
        except IntegrityError:
            continue
        return slot, len(taken) + 1
    return None


VERIFIER = QuizVerifier()
