"""What adnet's own pages need to embed the SDK: the SDK's version, which names its long-cached URL, and the demo
site that ``/demo`` shows it on."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Any

from tortoise.exceptions import DoesNotExist

from adnet.chain.devchain import dev_accounts
from adnet.demo import describe_demo

SDK_PATH = Path(__file__).resolve().parent.parent / "static" / "sdk.js"
_VERSION = re.compile(r'var VERSION = "([0-9]+\.[0-9]+\.[0-9]+)";')


@cache
def sdk_version() -> str:
    """The version the SDK declares in its source (one place to bump it)."""
    found = _VERSION.search(SDK_PATH.read_text(encoding="utf-8"))
    if found is None:
        raise RuntimeError(f"{SDK_PATH} declares no VERSION")
    return found.group(1)


async def demo_summary() -> dict[str, Any] | None:
    """The demo data (``adnet demo``) as ``describe_demo`` gives it, or None when it was never loaded."""
    accounts = dev_accounts()
    try:
        return await describe_demo(accounts[1].address.lower(), accounts[2].address.lower())
    except DoesNotExist:
        return None
