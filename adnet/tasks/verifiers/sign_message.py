"""SIGN_MESSAGE: the wallet signed, with EIP-191, exactly the message adnet issued to it for this task.

The message carries a single-use nonce (``adnet.tasks.messages``), so a signature counts once and only for the
wallet and task it was issued for. The signature is checked by ``adnet.chain.signatures.check_wallet_signature``, as
every signature adnet takes: anything in ``proof.signature`` that is not the wallet's signature of the message is
401 ``invalid_signature``, unless the wallet is a contract that accepts it (EIP-1271), which is asked on the chain.
"""

from __future__ import annotations

from adnet.chain.client import ChainUnavailable
from adnet.chain.signatures import check_wallet_signature
from adnet.tasks.config import SignMessageConfig
from adnet.tasks.messages import open_nonces, render_message, use_nonce
from adnet.tasks.models import TaskKind
from adnet.tasks.verifiers.base import Attempt, ProofRejected, Verified, proof_needs_chain

MAX_MESSAGE_LENGTH = 4000


class SignMessageVerifier:
    """Checks ``proof.message`` against the open nonces of the wallet and ``proof.signature`` against the wallet."""

    kind = TaskKind.SIGN_MESSAGE

    async def verify(self, attempt: Attempt) -> Verified:
        config: SignMessageConfig = attempt.config
        message, signature = attempt.proof["message"], attempt.proof["signature"]
        if not isinstance(message, str) or len(message) > MAX_MESSAGE_LENGTH:
            raise ProofRejected("invalid_message", "message is the text that was signed.", field="proof.message")
        nonces = await open_nonces(attempt.task.id, attempt.wallet, attempt.now)
        nonce = next((candidate for candidate in nonces
                      if render_message(config.message, attempt.wallet, candidate) == message), None)
        if nonce is None:
            raise ProofRejected("message_not_issued", "This is not a message adnet issued to this wallet for this "
                                                      "task, or its nonce expired or was used.",
                                field="proof.message")
        try:
            await check_wallet_signature(attempt.chain, attempt.wallet, message, signature, field="proof.signature")
        except ChainUnavailable:
            raise proof_needs_chain() from None

        async def spend_nonce() -> None:
            if not await use_nonce(nonce, attempt.task.id, attempt.wallet, attempt.now):
                raise ProofRejected("message_not_issued", "This message's nonce was used by another completion.",
                                    field="proof.message")

        return Verified(consume=spend_nonce)


VERIFIER = SignMessageVerifier()
