"""How adnet's processes write their log: one line per event, stamped in UTC, fields as ``key=value``.

    2026-11-28T06:32:48.123+00:00 level=WARNING logger=adnet.core.redis_link pid=4242 redis unreachable where=…

A line is the time (ISO 8601, milliseconds, always in UTC with its ``+00:00`` offset, whatever the host's time
zone, so the lines of hosts in different zones sort together), then ``level``, ``logger`` and ``pid`` (the worker
that wrote it), then the message, whose own fields are ``key=value`` by the project's convention. A record is never
more than one line: a newline or carriage return in the message (a value a client sent, a multi-line error) is
written ``\\n`` or ``\\r`` and a backslash ``\\\\``, so nothing a client sends can forge a line; a traceback follows
the message as one quoted field, ``traceback="Traceback (most recent call last):\\n  File …"``, with quotes
written ``\\"``.

``configure`` sets this up for a command's process; ``LOG_CONFIG`` is the same configuration as
``logging.config.dictConfig`` takes it, which ``adnet serve`` hands uvicorn so that its supervisor, every worker
and uvicorn's own loggers write the same lines.
"""

from __future__ import annotations

import logging
import logging.config
import sys
from datetime import UTC, datetime
from types import TracebackType
from typing import Any

LOG_CONFIG: dict[str, Any] = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"line": {"()": "adnet.core.logs.LineFormatter"}},
    "handlers": {"stderr": {"class": "logging.StreamHandler", "formatter": "line", "stream": "ext://sys.stderr"}},
    "root": {"level": "INFO", "handlers": ["stderr"]},
    # uvicorn's loggers write through the root's handler, not handlers of their own.
    "loggers": {name: {"handlers": [], "propagate": True} for name in ("uvicorn", "uvicorn.error", "uvicorn.access")},
}
_ESCAPES = str.maketrans({"\\": "\\\\", "\n": "\\n", "\r": "\\r"})


class LineFormatter(logging.Formatter):
    """A record as one line: UTC time, ``level``, ``logger``, ``pid``, the message, and any traceback as a quoted
    field."""

    def format(self, record: logging.LogRecord) -> str:
        stamp = datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds")
        line = (f"{stamp} level={record.levelname} logger={record.name} pid={record.process} "
                f"{one_line(record.getMessage().rstrip())}")
        if record.exc_info:
            line += f' traceback="{quoted(self.formatException(record.exc_info))}"'
        elif record.exc_text:
            line += f' traceback="{quoted(record.exc_text)}"'
        if record.stack_info:
            line += f' stack="{quoted(self.formatStack(record.stack_info))}"'
        return line


def one_line(text: str) -> str:
    """``text`` with its line breaks and backslashes escaped."""
    return text.translate(_ESCAPES)


def quoted(text: str) -> str:
    """``text`` as the inside of a double-quoted field value."""
    return one_line(text).replace('"', '\\"')


def configure() -> None:
    """Log this process's records at INFO and above to stderr as ``LineFormatter`` lines, Python's warnings and an
    exception that ends the process too; unless its logging is configured already (as ``logging.basicConfig``
    does: a command run inside pytest keeps pytest's)."""
    if logging.getLogger().handlers:
        return
    logging.config.dictConfig(LOG_CONFIG)
    logging.captureWarnings(True)
    sys.excepthook = _log_uncaught


def _log_uncaught(kind: type[BaseException], error: BaseException, trace: TracebackType | None) -> None:
    if issubclass(kind, KeyboardInterrupt):
        sys.__excepthook__(kind, error, trace)
        return
    logging.getLogger("adnet").critical("uncaught exception, the process ends", exc_info=(kind, error, trace))
