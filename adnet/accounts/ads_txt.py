"""Reading an ``ads.txt`` file (IAB Tech Lab ads.txt 1.1): the records that authorise advertising systems to sell a
domain's inventory, and its variables.

A line is a record, a variable or nothing: everything after ``#`` is a comment; a record is ``<advertising system
domain>, <seller account id>, <DIRECT|RESELLER>[, <certification authority id>]``, fields separated by commas and
surrounded by any whitespace, anything after ``;`` an extension that is ignored; a variable is ``NAME=value``
(``contact``, ``subdomain``, ``inventorypartnerdomain``, ``ownerdomain``, ``managerdomain`` …). Domains, the
relationship and variable names compare case-insensitively, an account id exactly (systems issue them; adnet's are
case-sensitive). A line that is neither (fewer than three fields, an unknown relationship) is skipped, as the
specification tells a reader to. The reader is pure: fetching is ``adnet.accounts.fetching``'s.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

RELATIONSHIPS = frozenset({"DIRECT", "RESELLER"})
# A variable's name: letters, digits and underscores before the first "="; a record's first field is a domain,
# which never holds "=".
_VARIABLE = re.compile(r"^\s*([A-Za-z][A-Za-z0-9_]*)\s*=(.*)$")


@dataclass(frozen=True)
class Record:
    """One authorisation: ``domain`` (lower case) lets ``account_id`` sell, directly or as a reseller."""

    domain: str
    account_id: str
    relationship: str
    certification_id: str | None = None


@dataclass(frozen=True)
class AdsTxt:
    """A parsed file: its records in order, and its variables as (lower-case name, value) pairs in order."""

    records: tuple[Record, ...]
    variables: tuple[tuple[str, str], ...]

    def direct_accounts(self, ads_system: str) -> frozenset[str]:
        """The account ids DIRECT records give ``ads_system`` (any case): a file authorises adnet to sell for a
        publisher when its id is among them. A certification authority id, when a record has one, does not matter
        (the field is optional)."""
        system = ads_system.strip().lower()
        return frozenset(record.account_id for record in self.records
                         if record.domain == system and record.relationship == "DIRECT")


def parse_line(line: str) -> Record | tuple[str, str] | None:
    """One line's record, variable (name, value), or None for a blank, comment-only or malformed line."""
    content = line.split("#", 1)[0].strip()
    if not content:
        return None
    variable = _VARIABLE.match(content)
    if variable is not None:
        return variable.group(1).lower(), variable.group(2).strip()
    fields = [field.strip() for field in content.split(";", 1)[0].split(",")]
    if len(fields) < 3 or not fields[0] or not fields[1]:
        return None
    relationship = fields[2].upper()
    if relationship not in RELATIONSHIPS:
        return None
    certification = fields[3] if len(fields) > 3 and fields[3] else None
    return Record(domain=fields[0].lower(), account_id=fields[1], relationship=relationship,
                  certification_id=certification)


def parse(text: str, *, truncated: bool = False) -> AdsTxt:
    """The records and variables of ``text``; a ``truncated`` text (cut at the fetcher's size limit) loses its last,
    partial line; a byte order mark before the first line is not part of it."""
    lines = text.removeprefix("\ufeff").splitlines()
    if truncated and lines:
        lines.pop()
    records: list[Record] = []
    variables: list[tuple[str, str]] = []
    for line in lines:
        parsed = parse_line(line)
        if isinstance(parsed, Record):
            records.append(parsed)
        elif parsed is not None:
            variables.append(parsed)
    return AdsTxt(tuple(records), tuple(variables))
