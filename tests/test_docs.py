"""The docs name tests as proof (docs/security.md maps each known hole to its tests): every test they name exists."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NAMED = re.compile(r"`(tests/[\w/]+\.py)::(\w+)`")


def test_every_test_the_docs_name_exists():
    named = {(document.name, path, name) for document in [*sorted((ROOT / "docs").glob("*.md")), ROOT / "README.md"]
             for path, name in NAMED.findall(document.read_text())}
    assert len(named) > 50
    missing = [f"{document}: {path}::{name}" for document, path, name in sorted(named)
               if not (ROOT / path).is_file()
               or not re.search(rf"^(async )?def {name}\(", (ROOT / path).read_text(), re.M)]
    assert missing == []
