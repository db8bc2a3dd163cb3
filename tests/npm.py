"""Node packages the tests need (anvil, prebid.js), installed by npm on first use from a package folder's committed
lock file, once however many test workers ask at the same time."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterable
from pathlib import Path

import pytest
from filelock import FileLock

INSTALL_TIMEOUT = 300


def npm_install(folder: Path, needed: Iterable[Path], what: str) -> None:
    """Install ``folder``'s package (its package-lock.json) unless every path of ``needed`` exists; fail the test
    naming ``what`` when npm is missing or the install does not produce them. ``npm install`` rather than
    ``npm ci``: it follows the lock file too, and accepts one that lists only this platform's optional binaries."""
    needed = tuple(needed)
    with FileLock(folder / ".install.lock"):  # the suite's parallel workers install it once
        if all(path.exists() for path in needed):
            return
        npm = shutil.which("npm")
        if npm is None:
            pytest.fail(f"these tests need {what} from npm, and npm is not installed (Node 20 + npm)")
        result = subprocess.run([npm, "install", "--no-audit", "--no-fund"], cwd=folder,  # noqa: S603
                                capture_output=True, text=True, timeout=INSTALL_TIMEOUT, check=False)
        if result.returncode != 0 or not all(path.exists() for path in needed):
            pytest.fail(f"`npm install` in {folder} could not install {what}:\n{result.stdout}\n{result.stderr}")
