"""QUIZ: the answer, trimmed, case-folded and NFKC-normalised, is one of the accepted answers.

The accepted answers never leave the server (``api.schemas.public_task`` shows the question and choices only). A
wallet has at most ``max_attempts`` wrong tries, and so has a device, whatever wallets it uses: each try takes a free
attempt number of its wallet and a free attempt number of its device (1 to ``max_attempts``, two unique keys of one
``TaskAttempt`` row, so one insert takes both or neither) before its result is told, so even concurrent guesses
never get more than ``max_attempts`` answers checked per wallet or per device. A wrong answer keeps its numbers
(written at once, so the refusal stands); a right one takes the lowest free numbers inside the completion's
transaction and gives them back there (``hold_free_attempt``), so it adds no write of its own, and a wallet or
device without a free number gets Conflict ``too_many_attempts`` whatever it answered.
"""

from __future__ import annotations

import logging
from datetime import datetime

from tortoise.exceptions import IntegrityError
from tortoise.expressions import Q

from adnet.core.errors import Conflict, DomainError, Invalid
from adnet.db import sql
from adnet.tasks.config import QuizConfig, normalize_answer
from adnet.tasks.models import TaskAttempt, TaskKind
from adnet.tasks.verifiers.base import Attempt, Verified

log = logging.getLogger(__name__)

MAX_ANSWER_LENGTH = 200


class QuizVerifier:
    """Checks ``proof.answer``, counting wrong tries per wallet and per device."""

    kind = TaskKind.QUIZ

    async def verify(self, attempt: Attempt) -> Verified:
        config: QuizConfig = attempt.config
        answer = attempt.proof["answer"]
        if not isinstance(answer, str) or not answer.strip() or len(answer) > MAX_ANSWER_LENGTH:
            raise Invalid("invalid_field", f"answer is a text of 1 to {MAX_ANSWER_LENGTH} characters.",
                          field="proof.answer")
        task_id, wallet, fingerprint, limit, now = (attempt.task.id, attempt.wallet, attempt.fingerprint,
                                                    config.max_attempts, attempt.now)
        if normalize_answer(answer) in {normalize_answer(accepted) for accepted in config.answers}:
            return Verified(consume=lambda: hold_free_attempt(task_id, wallet, fingerprint, limit, now))
        taken = await take_attempt(task_id, wallet, fingerprint, limit, now)
        if taken is None:
            raise too_many_attempts(limit)
        slot, used = taken
        log.info("quiz wrong answer task=%s wallet=%s attempt=%d device_attempt=%d", task_id, wallet, slot.attempt,
                 slot.fingerprint_attempt)
        raise Invalid("wrong_answer", "That answer is not right.", field="proof.answer",
                      attemptsLeft=max(limit - used, 0))


def too_many_attempts(limit: int) -> DomainError:
    """Conflict: the wallet or the device has no try left at this quiz."""
    return Conflict("too_many_attempts", f"This wallet or this device has used its {limit} tries at this quiz.")


def _numbers(limit: int) -> str:
    """The attempt numbers 1 to ``limit`` as a derived table's rows."""
    return " UNION ALL ".join(f"SELECT {number} AS attempt" for number in range(1, limit + 1))


async def hold_free_attempt(task_id: str, wallet: str, fingerprint: str, limit: int, now: datetime) -> None:
    """Inside the completion's transaction: take the lowest free attempt numbers of ``wallet`` and of
    ``fingerprint`` and give them back.

    One statement picks and inserts both numbers, so the unique keys order this try against concurrent ones as they
    order wrong answers (on PostgreSQL a concurrent insert of the same number waits for this transaction; a
    number taken meanwhile fails the insert and the completion retries). Raises Conflict ``too_many_attempts`` when
    the wallet or the device has no number free."""
    numbers = _numbers(limit)
    held = await sql.fetch(
        "INSERT INTO task_attempt (task_id, wallet, attempt, fingerprint, fingerprint_attempt, created_at) "  # noqa: S608
        f"SELECT :task_id, :wallet, own.attempt, :fingerprint, device.attempt, :now FROM ({numbers}) AS own, "
        f"({numbers}) AS device "
        "WHERE own.attempt NOT IN (SELECT attempt FROM task_attempt WHERE task_id = :task_id AND wallet = :wallet) "
        "AND device.attempt NOT IN (SELECT fingerprint_attempt FROM task_attempt WHERE task_id = :task_id "
        "AND fingerprint = :fingerprint AND fingerprint_attempt IS NOT NULL) "
        "ORDER BY own.attempt, device.attempt LIMIT 1 RETURNING id", task_id=task_id, wallet=wallet,
        fingerprint=fingerprint, now=now)
    if not held:
        raise too_many_attempts(limit)
    await sql.execute("DELETE FROM task_attempt WHERE id = :id", id=held[0]["id"])


async def take_attempt(task_id: str, wallet: str, fingerprint: str, limit: int,
                       now: datetime) -> tuple[TaskAttempt, int] | None:
    """Take the lowest free attempt numbers (1 to ``limit``) of ``wallet`` and of ``fingerprint`` at the task, in one
    row, and return it with how many tries the wallet or the device (whichever has used more) has used now; None
    when either has none free. The unique keys decide between concurrent tries: an insert that loses either
    number fails whole and reads again. Each failure is a number a committed try holds, so the numbers run out
    after at most ``2 * limit`` of them."""
    for _ in range(2 * limit + 1):
        rows = await TaskAttempt.filter(Q(wallet=wallet) | Q(fingerprint=fingerprint), task_id=task_id).values_list(
            "wallet", "attempt", "fingerprint", "fingerprint_attempt")
        own = {attempt for row_wallet, attempt, _, _ in rows if row_wallet == wallet}
        device = {number for _, _, row_fingerprint, number in rows
                  if row_fingerprint == fingerprint and number is not None}
        own_free = [number for number in range(1, limit + 1) if number not in own]
        device_free = [number for number in range(1, limit + 1) if number not in device]
        if not own_free or not device_free:
            return None
        try:
            slot = await TaskAttempt.create(task_id=task_id, wallet=wallet, attempt=own_free[0],
                                            fingerprint=fingerprint, fingerprint_attempt=device_free[0],
                                            created_at=now)
        except IntegrityError:
            continue
        return slot, max(len(own), len(device)) + 1
    return None


VERIFIER = QuizVerifier()
