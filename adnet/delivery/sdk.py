"""The embed script (``static/sdk.js``) as publishers get it: its version, which names its long-cached URL, its
Subresource Integrity value, and the snippets a publisher pastes into its pages, generic ones or one written from
an ad unit."""

from __future__ import annotations

import base64
import hashlib
import html
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from adnet.core.files import shipped
from adnet.delivery.ad_units import SlotSettings

_VERSION = re.compile(r'var VERSION = "([0-9]+\.[0-9]+\.[0-9]+)";')


@dataclass(frozen=True)
class Snippet:
    key: str
    title: str
    code: str


def sdk_path() -> Path:
    """The embed script's file."""
    return shipped("static", "sdk.js")


@cache
def sdk_version() -> str:
    """The version the SDK declares in its source (one place to bump it)."""
    path = sdk_path()
    found = _VERSION.search(path.read_text(encoding="utf-8"))
    if found is None:
        raise RuntimeError(f"{path} declares no VERSION")
    return found.group(1)


@cache
def sdk_integrity() -> str:
    """The SDK's Subresource Integrity value (``sha384-`` and the base64 of its SHA-384 digest), which a script tag's
    ``integrity`` attribute pins the file to: the browser runs it only if the bytes it gets have that digest."""
    digest = hashlib.sha384(sdk_path().read_bytes()).digest()
    return "sha384-" + base64.b64encode(digest).decode("ascii")


def embed_snippets(public_url: str, site_id: str) -> list[Snippet]:
    """The HTML a publisher pastes into its pages: the SDK script once, plain (it follows new versions through the
    redirect of its URL) or pinned to this version's bytes with Subresource Integrity (a new version needs the new
    snippet), and a slot for banners or for units (as plain text; the page escapes it)."""
    src = f"{public_url}/sdk/{sdk_version()}/sdk.js"
    script = f'<script async src="{src}" data-site-id="{site_id}"></script>'
    pinned = (f'<script async src="{src}" integrity="{sdk_integrity()}" crossorigin="anonymous" '
              f'data-site-id="{site_id}"></script>')
    return [
        Snippet("script", "Script (once per page, before </body>)", script),
        Snippet("script-sri", f"Or the script pinned with Subresource Integrity (version {sdk_version()}: paste "
                              "the new snippet when adnet's script changes version)", pinned),
        Snippet("banner", "Banner slot", '<div data-adnet-slot data-kind="BANNER" data-size="300x250" '
                                         'data-placement="sidebar"></div>'),
        Snippet("units", "Unit slot (polls, feedback, surveys)",
                '<div data-adnet-slot data-kind="POLL,FEEDBACK,SURVEY" data-placement="article-end"></div>'),
    ]


def unit_snippet(unit: SlotSettings) -> str:
    """The slot element of an ad unit, with the ``data-`` attributes ``static/sdk.js`` reads (docs/sdk.md): a size
    only for a fixed-size unit (without one the slot is responsive), ``data-tasks`` only when its banners show their
    attached tasks, a placement only when it has one (quoted for HTML), ``data-house="off"`` only when its banner
    slot shows no house ad."""
    attributes = ["data-adnet-slot", f'data-kind="{",".join(unit.kinds)}"']
    if unit.size:
        attributes.append(f'data-size="{unit.size}"')
    if unit.placement:
        attributes.append(f'data-placement="{html.escape(unit.placement, quote=True)}"')
    if unit.attached_tasks:
        attributes.append("data-tasks")
    if not unit.house_ads:
        attributes.append('data-house="off"')
    return f"<div {' '.join(attributes)}></div>"
