"""The domain's refusals: what went wrong, as a stable snake_case code, one sentence for a person, and details.

Domain code raises the kind of refusal that fits (``NotFound``, ``Conflict`` …) and knows nothing of HTTP; the
web layer maps each kind to a status code and to the JSON body or HTML page in one place (``api.errors``). The
codes are listed in docs/errors.md. ``details`` become extra keys of the JSON body (``field`` names the offending
input, ``retryAfter`` says when to try again, a repeated completion names its ``completionId`` …).
"""

from __future__ import annotations

from typing import Any


class DomainError(Exception):
    """A refusal a client can act on; nothing was changed by the request that met it."""

    def __init__(self, code: str, message: str, **details: Any) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = details

    @property
    def field(self) -> str | None:
        """The input the refusal is about, when there is one."""
        return self.details.get("field")


class Invalid(DomainError):
    """The input is malformed or breaks a rule about its value (an amount, a date, a proof)."""

    def __init__(self, code: str, message: str, field: str | None = None, **details: Any) -> None:
        if field is not None:
            details["field"] = field
        super().__init__(code, message, **details)


class Unauthorized(DomainError):
    """No valid proof of who is asking: no session, a bad signature, an expired or unknown nonce."""


class Forbidden(DomainError):
    """The caller is known but may not do this: another wallet's record, an operator's action."""


class NotFound(DomainError):
    """No such record (or one the caller may not learn exists)."""

    @classmethod
    def of(cls, what: str) -> NotFound:
        """``No such <what>.`` with the code ``not_found``."""
        return cls("not_found", f"No such {what}.")


class Conflict(DomainError):
    """The record's state refuses the action now: already done, ended, locked, out of budget."""


class Unavailable(DomainError):
    """Something adnet depends on (the chain) does not answer; nothing was changed, retry after ``retryAfter``
    seconds."""

    def __init__(self, code: str, message: str, retry_after: int = 10, **details: Any) -> None:
        super().__init__(code, message, retryAfter=retry_after, **details)


def chain_unavailable(what: str = "The chain cannot be reached") -> Unavailable:
    """The refusal of an action that needs the chain while its node does not answer."""
    return Unavailable("chain_unavailable", f"{what}; nothing was changed, retry later.")
