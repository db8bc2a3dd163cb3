"""Where the files adnet ships with its code are: the portal's templates, the static files (htmx, the embed
script), the contracts' compiled artifacts.

An installed adnet carries them inside its package (``adnet/templates``, ``adnet/static``,
``adnet/contracts``: the wheel's package data); a checkout keeps them at the top of the repository, where they are
edited. Both are looked for, the package first.
"""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent


def shipped(*parts: str) -> Path:
    """The path of a shipped file or directory, e.g. ``shipped("static", "sdk.js")``."""
    installed = PACKAGE.joinpath(*parts)
    return installed if installed.exists() else PACKAGE.parent.joinpath(*parts)
