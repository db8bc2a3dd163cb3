"""CSV exports that are safe to open in a spreadsheet.

A cell that begins with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return is run as a formula by spreadsheet
programs, so text written by others (viewers' answers, page URLs) could run there. Such a cell gets an apostrophe
before that character, which spreadsheets show as text (the OWASP guidance on CSV injection).

Its beginning is not the only place: a spreadsheet that splits a line on another separator than the comma (a
semicolon where the comma is the decimal mark, a bar, a tab, chosen by the locale or guessed) or that ignores the
quotes around a cell cuts one cell into several, and the text after such a separator begins a cell of its own. So
the apostrophe also goes before a formula character that follows any of ``SEPARATORS`` (a line break included),
spaces between them allowed (an import may trim them). A cell the comma alone splits is quoted by the CSV writer
as usual. Every CSV adnet exports is written through ``csv_text``.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable
from typing import Any

FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")
SEPARATORS = (",", ";", "|", "\t", "\r", "\n")
# Where a cell may begin, for some spreadsheet: the start of the text or just after a separator (spaces skipped),
# followed by a character that starts a formula; the apostrophe goes in at the end of the match.
_FORMULA_START = re.compile(
    f"(?:^|[{re.escape(''.join(SEPARATORS))}]) *(?=[{re.escape(''.join(FORMULA_PREFIXES))}])")


def neutralise(cell: Any) -> Any:
    """A CSV cell that a spreadsheet will show as text, never run as a formula, however it splits the line."""
    if isinstance(cell, str):
        return _FORMULA_START.sub(lambda start: start.group(0) + "'", cell)
    return cell


def csv_text(rows: Iterable[Iterable[Any]]) -> str:
    """``rows`` as CSV text with CR LF line ends (RFC 4180), every cell neutralised."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    for row in rows:
        writer.writerow([neutralise(cell) for cell in row])
    return buffer.getvalue()
