"""The messages SIGN_MESSAGE tasks ask a wallet to sign: the advertiser's text with ``{wallet}`` and a single-use
``{nonce}`` filled in, so a signature proves this wallet signed now, for this task, and cannot be used again.

A nonce is issued to one wallet for one task, lives ``NONCE_LIFETIME``, and is used up by the completion that
presents its message (``use_nonce``, one conditional update inside the completion's transaction).
"""

from __future__ import annotations

import logging
import random
import string
from dataclasses import dataclass
from datetime import datetime, timedelta

from eth_utils import to_checksum_address

from adnet.tasks.commands import MessageRequest
from adnet.tasks.lookup import live_task_and_config
from adnet.tasks.models import TaskKind, TaskMessageNonce

log = logging.getLogger(__name__)

NONCE_LIFETIME = timedelta(minutes=10)
NONCE_LENGTH = 22  # alphanumeric: about 131 bits
_NONCE_ALPHABET = string.ascii_letters + string.digits


@dataclass(frozen=True)
class IssuedMessage:
    """The exact text the wallet must sign, and its nonce's expiry."""

    task_id: str
    wallet: str
    message: str
    nonce: str
    expires_at: datetime


def render_message(template: str, wallet: str, nonce: str) -> str:
    """The advertiser's message for ``wallet`` (shown in its EIP-55 form) and ``nonce``."""
    return template.replace("{wallet}", to_checksum_address(wallet)).replace("{nonce}", nonce)


async def issue_message(task_id: str, request: MessageRequest, *, now: datetime,
                        rng: random.Random) -> IssuedMessage:
    """A fresh nonce of SIGN_MESSAGE task ``task_id`` for the wallet, and the message to sign with it."""
    wallet = request.wallet
    task, config = await live_task_and_config(task_id, now, kinds={TaskKind.SIGN_MESSAGE})
    nonce = "".join(rng.choice(_NONCE_ALPHABET) for _ in range(NONCE_LENGTH))
    expires_at = now + NONCE_LIFETIME
    await TaskMessageNonce.create(nonce=nonce, task_id=task.id, wallet=wallet, created_at=now, expires_at=expires_at)
    log.info("task message issued task=%s wallet=%s", task.id, wallet)
    return IssuedMessage(task.id, wallet, render_message(config.message, wallet, nonce), nonce, expires_at)


async def open_nonces(task_id: str, wallet: str, now: datetime) -> list[str]:
    """The nonces issued to ``wallet`` for the task that are neither used nor expired."""
    nonces = await TaskMessageNonce.filter(task_id=task_id, wallet=wallet, used_at__isnull=True,
                                           expires_at__gt=now).values_list("nonce", flat=True)
    return [str(nonce) for nonce in nonces]


async def use_nonce(nonce: str, task_id: str, wallet: str, now: datetime) -> bool:
    """Use ``nonce`` up; False when it is no longer open (used by a concurrent completion, or expired)."""
    return bool(await TaskMessageNonce.filter(nonce=nonce, task_id=task_id, wallet=wallet, used_at__isnull=True,
                                              expires_at__gt=now).update(used_at=now))
