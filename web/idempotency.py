"""Idempotency keys: what makes a request that moves money safe to send again. The API reads one from the
``Idempotency-Key`` header (``api.http.idempotent``), the portal from a form's hidden field drawn when the form was
rendered (``portal.pages.form_idempotency_key``); both are checked here, the same way."""

from __future__ import annotations

import re

from adnet.core.errors import Invalid

IDEMPOTENCY_HEADER = "Idempotency-Key"
_IDEMPOTENCY_KEY = re.compile(r"^[\x21-\x7e]{1,255}$")


def checked_idempotency_key(value: str | None, field: str = IDEMPOTENCY_HEADER) -> str | None:
    """``value`` as an idempotency key (None for none); Invalid ``invalid_idempotency_key``, naming ``field``, when
    it is not 1 to 255 visible ASCII characters."""
    if value is not None and not _IDEMPOTENCY_KEY.match(value):
        raise Invalid("invalid_idempotency_key", "Idempotency-Key is 1 to 255 visible ASCII characters (a UUID).",
                      field=field)
    return value
