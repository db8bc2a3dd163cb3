"""The IAB Tech Lab Content Taxonomy: the ids by which a site says what its pages are about (OpenRTB ``site.cat``),
as other systems know them.

A site's own content categories are the publisher's statement about its content (``Site.content_categories``),
distinct from what it blocks (``adnet.delivery.controls``) and from campaigns' categories, which are Ad Product
Taxonomy ids (``adnet.campaigns.taxonomy``). The whole taxonomy ships as a data file with its name and version
(``data/iab_content_taxonomy.json``, converted row by row from IAB Tech Lab's published TSV, whose commit it names),
so no id is written in code; a new version is a new data file and a migration that maps the stored ids again. The
file is read once per process, when first asked.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path

DATA_FILE = Path(__file__).parent / "data" / "iab_content_taxonomy.json"
MAX_SITE_CATEGORIES = 10


class TaxonomyError(Exception):
    """The taxonomy data file is not one: an id twice, or a parent it does not hold."""


@dataclass(frozen=True)
class ContentCategory:
    """One entry: its id, its parent's (None for a first-tier one), its name, and its path of tier names."""

    id: str
    parent: str | None
    name: str
    tiers: tuple[str, ...]

    @property
    def label(self) -> str:
        """Its path in words, e.g. ``Technology & Computing / Computing``."""
        return " / ".join(self.tiers) or self.name


@dataclass(frozen=True)
class ContentTaxonomy:
    """The taxonomy, with its version, entries in the file's order (by tier 1, as IAB Tech Lab lists them)."""

    name: str
    version: str
    entries: dict[str, ContentCategory]


def read(path: Path) -> ContentTaxonomy:
    """The taxonomy of the data file at ``path``; TaxonomyError when an id repeats or a parent is missing."""
    document = json.loads(path.read_text(encoding="utf-8"))
    entries: dict[str, ContentCategory] = {}
    for row in document["entries"]:
        if row["id"] in entries:
            raise TaxonomyError(f"{path.name}: {row['id']} twice")
        entries[row["id"]] = ContentCategory(str(row["id"]), row["parent"], str(row["name"]), tuple(row["tiers"]))
    orphans = [entry.id for entry in entries.values() if entry.parent is not None and entry.parent not in entries]
    if orphans:
        raise TaxonomyError(f"{path.name}: no parent for {', '.join(orphans)}")
    return ContentTaxonomy(name=str(document["taxonomy"]), version=str(document["version"]), entries=entries)


@cache
def content_taxonomy() -> ContentTaxonomy:
    """The Content Taxonomy adnet ships, read once per process."""
    return read(DATA_FILE)


def categories_of(ids: list[str]) -> list[ContentCategory]:
    """The entries of ``ids`` (stored ids, so all known), in their order."""
    entries = content_taxonomy().entries
    return [entries[item] for item in ids if item in entries]
