"""What a viewer asks of a unit: to record an answer."""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict, Field

from adnet.core.inputs import Command, Fingerprint, WalletAddress

MAX_ID_LENGTH = 64


class Submission(Command):
    """An answer to a POLL, FEEDBACK or SURVEY unit shown on a site (part 4.5 of the interface), with ``sessionId``
    for a survey's answers after its first. Without a wallet, the device is the respondent."""

    model_config = ConfigDict(extra="forbid")

    task_id: str = Field(max_length=MAX_ID_LENGTH)
    site_id: str = Field(max_length=MAX_ID_LENGTH)
    fingerprint: Fingerprint
    wallet: WalletAddress | None = None
    proof: dict[str, Any]
    session_id: str | None = Field(None, max_length=MAX_ID_LENGTH)
