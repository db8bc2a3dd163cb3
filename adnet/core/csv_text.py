"""CSV exports that are safe to open in a spreadsheet.

A cell that begins with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return is run as a formula by spreadsheet
programs, so text written by others (viewers' answers, page URLs) could run there. Such a cell gets a leading
apostrophe, which spreadsheets show as text. Every CSV adnet exports is written through ``csv_text``.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from typing import Any

FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


def neutralise(cell: Any) -> Any:
    """A CSV cell that a spreadsheet will show as text, never run as a formula."""
    if isinstance(cell, str) and cell.startswith(FORMULA_PREFIXES):
        return "'" + cell
    return cell


def csv_text(rows: Iterable[Iterable[Any]]) -> str:
    """``rows`` as CSV text with CR LF line ends (RFC 4180), every cell neutralised."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    for row in rows:
        writer.writerow([neutralise(cell) for cell in row])
    return buffer.getvalue()
