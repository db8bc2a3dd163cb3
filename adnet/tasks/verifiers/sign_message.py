"""SIGN_MESSAGE: the wallet signed, with EIP-191, exactly the message adnet issued to it for this task.

The message carries a single-use nonce (``adnet.tasks.messages``), so a signature counts once and only for the
wallet and task it was issued for. A signature that does not recover to the wallet may still be the wallet's if the
wallet is a contract that accepts it (EIP-1271), which is asked on the chain.
"""

from __future__ import annotations

from typing import Any

from adnet.chain.client import ChainUnavailable
from adnet.chain.signatures import wallet_signed
from adnet.tasks.config import SignMessageConfig
from adnet.tasks.messages import open_nonces, render_message, use_nonce
from adnet.tasks.models import TaskKind
from adnet.tasks.verifiers.base import Attempt, ProofRejected, Verified, proof_needs_chain

MAX_MESSAGE_LENGTH = 4000
MAX_SIGNATURE_LENGTH = 2 + 2 * 4096


class SignMessageVerifier:
    """Checks ``proof.message`` against the open nonces of the wallet and ``proof.signature`` against the wallet."""

    kind = TaskKind.SIGN_MESSAGE

    async def verify(self, attempt: Attempt) -> Verified:
        config: SignMessageConfig = attempt.config
        message, signature = attempt.proof["message"], attempt.proof["signature"]
        if not isinstance(message, str) or len(message) > MAX_MESSAGE_LENGTH:
            raise ProofRejected("invalid_message", "message is the text that was signed.", field="proof.message")
        if not _is_hex(signature):
            raise ProofRejected("invalid_signature", "signature is the 0x-hex signature of the message.",
                                field="proof.signature")
        nonces = await open_nonces(attempt.task.id, attempt.wallet, attempt.now)
        nonce = next((candidate for candidate in nonces
                      if render_message(config.message, attempt.wallet, candidate) == message), None)
        if nonce is None:
            raise ProofRejected("message_not_issued", "This is not a message adnet issued to this wallet for this "
                                                      "task, or its nonce expired or was used.",
                                field="proof.message")
        try:
            signed = await wallet_signed(attempt.chain, attempt.wallet, message, signature)
        except ChainUnavailable:
            raise proof_needs_chain() from None
        if not signed:
            raise ProofRejected("bad_signature", "The signature is not the wallet's signature of the message.",
                                field="proof.signature")

        async def spend_nonce() -> None:
            if not await use_nonce(nonce, attempt.task.id, attempt.wallet, attempt.now):
                raise ProofRejected("message_not_issued", "This message's nonce was used by another completion.",
                                    field="proof.message")

        return Verified(consume=spend_nonce)


def _is_hex(value: Any) -> bool:
    if not isinstance(value, str) or not value.startswith("0x") or len(value) > MAX_SIGNATURE_LENGTH:
        return False
    try:
        bytes.fromhex(value[2:])
    except ValueError:
        return False
    return True


VERIFIER = SignMessageVerifier()
