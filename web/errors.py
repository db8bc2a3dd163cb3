"""The HTTP status of each kind of domain refusal, decided once for both surfaces: the API answers it with the JSON
body of docs/errors.md (``api.errors``), the portal with a page or beside the form (``portal.pages``)."""

from __future__ import annotations

from adnet.core.errors import Conflict, DomainError, Forbidden, Invalid, NotFound, Unauthorized, Unavailable

STATUS_OF = {Invalid: 400, Unauthorized: 401, Forbidden: 403, NotFound: 404, Conflict: 409, Unavailable: 503}


def status_of(error: DomainError) -> int:
    """The HTTP status of a domain refusal."""
    return next(status for kind, status in STATUS_OF.items() if isinstance(error, kind))
