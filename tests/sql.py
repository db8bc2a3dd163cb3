"""What the database is sent, for tests that count statements."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

# The ORM logs every statement it sends; adnet.db.sql logs every statement of the programs it runs.
LOGGERS = ("tortoise.db_client", "adnet.db.sql")


@contextmanager
def recorded_statements() -> Iterator[list[str]]:
    """Every SQL statement sent while the block runs (with its parameters), in order."""
    sent: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            sent.append(record.getMessage())

    loggers = [logging.getLogger(name) for name in LOGGERS]
    handler, levels = Collect(), [logger.level for logger in loggers]
    for logger in loggers:
        logger.addHandler(handler)
        logger.setLevel(logging.DEBUG)
    try:
        yield sent
    finally:
        for logger, level in zip(loggers, levels, strict=True):
            logger.removeHandler(handler)
            logger.setLevel(level)
