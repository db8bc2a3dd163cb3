"""QUIZ: the answer, trimmed, case-folded and NFKC-normalised, is one of the accepted answers.

The accepted answers never leave the server (``api.schemas.public_task`` shows the question and choices only). A
wallet has at most ``maxAttempts`` wrong tries: each try takes a free attempt number of that wallet (a unique key)
before its result is told, so even concurrent guesses never get more than ``maxAttempts`` answers checked. A wrong
answer keeps its number (written at once, so the refusal stands); a right one takes the lowest free number inside
the completion's transaction and gives it back there (``hold_free_attempt``), so it adds no write of its own, and a
wallet without a free number gets Conflict ``too_many_attempts`` whatever it answered.
"""

from __future__ import annotations

import logging
import unicodedata
from datetime import datetime

from tortoise.exceptions import IntegrityError

from adnet.core.errors import Conflict, DomainError, Invalid
from adnet.db import sql
from adnet.tasks.config import QuizConfig
from adnet.tasks.models import TaskAttempt, TaskKind
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
            raise Invalid("invalid_field", f"answer is a text of 1 to {MAX_ANSWER_LENGTH} characters.",
                          field="proof.answer")
        task_id, wallet, limit, now = attempt.task.id, attempt.wallet, config.maxAttempts, attempt.now
        if normalize_answer(answer) in {normalize_answer(accepted) for accepted in config.answers}:
            return Verified(consume=lambda: hold_free_attempt(task_id, wallet, limit, now))
        taken = await take_attempt(task_id, wallet, limit, now)
        if taken is None:
            raise too_many_attempts(limit)
        slot, used = taken
        log.info("quiz wrong answer task=%s wallet=%s attempt=%d", task_id, wallet, slot.attempt)
        raise Invalid("wrong_answer", "That answer is not right.", field="proof.answer",
                      attemptsLeft=max(limit - used, 0))


def too_many_attempts(limit: int) -> DomainError:
    """Conflict: the wallet has no try left at this quiz."""
    return Conflict("too_many_attempts", f"This wallet has used its {limit} tries at this quiz.")


async def hold_free_attempt(task_id: str, wallet: str, limit: int, now: datetime) -> None:
    """Inside the completion's transaction: take the lowest free attempt number of ``wallet`` and give it back.

    One statement picks and inserts the number, so the unique key orders this try against concurrent ones as it
    orders wrong answers (on PostgreSQL a concurrent insert of the same number waits for this transaction; a
    number taken meanwhile fails the insert and the completion retries). Raises Conflict ``too_many_attempts`` when no
    number is free."""
    numbers = " UNION ALL ".join(f"SELECT {number} AS attempt" for number in range(1, limit + 1))
    held = await sql.fetch(
        "INSERT INTO task_attempt (task_id, wallet, attempt, created_at) "  # noqa: S608
        f"SELECT :task_id, :wallet, free.attempt, :now FROM ({numbers}) AS free "
        "WHERE free.attempt NOT IN (SELECT attempt FROM task_attempt WHERE task_id = :task_id AND wallet = :wallet) "
        "ORDER BY free.attempt LIMIT 1 RETURNING id", task_id=task_id, wallet=wallet, now=now)
    if not held:
        raise too_many_attempts(limit)
    await sql.execute("DELETE FROM task_attempt WHERE id = :id", id=held[0]["id"])


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
