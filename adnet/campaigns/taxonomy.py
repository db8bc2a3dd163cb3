"""adnet's campaign categories in the IAB Tech Lab Ad Product Taxonomy, the ids other systems know them by (OpenRTB
``cat`` and ``bcat``).

adnet keeps its own names (``Category``: ``defi``, ``nft`` …) as the labels advertisers pick and publishers block;
each carries the id of the taxonomy entry nearest to it. The rows adnet uses ship as a data file with the
taxonomy's name and version (``data/iab_ad_product_taxonomy.json``, copied from IAB Tech Lab's published TSV), so
no id is written in code; a change of taxonomy version is a new data file and a migration that maps the stored
ids again. The file is read once (at the start of every process, ``adnet.services.start``); it must give every
category exactly one id, or the process does not start.

The site's own content categories are another taxonomy, IAB Content Taxonomy 3.1, with its own data file:
``adnet.accounts.content_taxonomy``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from adnet.campaigns.models import Category

DATA_FILE = Path(__file__).parent / "data" / "iab_ad_product_taxonomy.json"


class TaxonomyError(Exception):
    """The taxonomy data file does not map every category to one id."""


@dataclass(frozen=True)
class Entry:
    """One category in the taxonomy: adnet's name, the IAB id and the IAB name of the entry it maps to."""

    category: Category
    iab_id: str
    iab_name: str


@dataclass(frozen=True)
class Taxonomy:
    """The taxonomy adnet's categories map into, with its version, and each category's entry."""

    name: str
    version: str
    entries: dict[Category, Entry]

    def iab_id(self, category: Category | str) -> str:
        """The IAB id of ``category`` (a Category or its name)."""
        return self.entries[Category(category)].iab_id


def read(path: Path) -> Taxonomy:
    """The taxonomy of the data file at ``path``: TaxonomyError when it names an unknown category, one twice, or
    leaves one out, or an id is not the taxonomy's (digits)."""
    document = json.loads(path.read_text(encoding="utf-8"))
    entries: dict[Category, Entry] = {}
    for row in document["categories"]:
        try:
            category = Category(row["category"])
        except ValueError:
            raise TaxonomyError(f"{path.name}: unknown category {row['category']!r}") from None
        if category in entries:
            raise TaxonomyError(f"{path.name}: {category.value} is mapped twice")
        if not str(row["iabId"]).isdigit():
            raise TaxonomyError(f"{path.name}: {category.value} has no IAB id")
        entries[category] = Entry(category, str(row["iabId"]), str(row["iabName"]))
    missing = [category.value for category in Category if category not in entries]
    if missing:
        raise TaxonomyError(f"{path.name}: no IAB id for {', '.join(missing)}")
    return Taxonomy(name=str(document["taxonomy"]), version=str(document["version"]),
                    entries={category: entries[category] for category in Category})


@cache
def ad_products() -> Taxonomy:
    """The Ad Product Taxonomy adnet ships, read once per process."""
    return read(DATA_FILE)


def iab_id(category: Category | str) -> str:
    """The Ad Product Taxonomy id of one of adnet's categories."""
    return ad_products().iab_id(category)
