"""The SDK loaded with Subresource Integrity, as the portal's pinned snippet writes it (``integrity`` and
``crossorigin="anonymous"``), from a publisher's page on another origin than adnet: Chromium fetches it in CORS
mode, checks its digest, runs it, and the page's slots are filled. The same tag with a digest of other bytes is
refused by the browser and nothing runs, so the digest is really checked."""

from __future__ import annotations

import base64
import hashlib

from adnet.core.ids import new_id
from adnet.delivery.sdk import embed_snippets, sdk_integrity
from tests.browser.conftest import LiveServer, PublisherSite, Visitor

SLOTS = ('<div id="ad" data-adnet-slot data-kind="BANNER" data-size="300x250" data-placement="article"></div>'
         '<div id="unit" data-adnet-slot data-kind="POLL,FEEDBACK,SURVEY" data-placement="article-end"></div>')


def pinned_script(server: LiveServer) -> str:
    snippets = {snippet.key: snippet.code for snippet in embed_snippets(server.url, server.demo["pageSiteId"])}
    return snippets["script-sri"]


def open_page(visitor: Visitor, site: PublisherSite, script: str) -> None:
    html = (f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Publisher</title>'
            f'<link rel="icon" href="data:,">{script}</head><body><h1>An article</h1>{SLOTS}</body></html>')
    visitor.page.goto(site.put(f"/pinned/{new_id('ev')}", html))


def test_the_pinned_snippet_loads_the_sdk_from_another_origin_and_fills_the_slots(
        server: LiveServer, visitor: Visitor, publisher_site: PublisherSite) -> None:
    script = pinned_script(server)
    assert 'integrity="sha384-' in script and 'crossorigin="anonymous"' in script
    assert not publisher_site.origin.startswith(server.url)
    open_page(visitor, publisher_site, script)

    page = visitor.page
    page.wait_for_function("window.adnet && window.adnet.version")
    page.wait_for_function("document.getElementById('ad').hasAttribute('data-adnet-ad')")
    page.wait_for_function("document.getElementById('unit').hasAttribute('data-adnet-unit')")
    assert (page.get_attribute("#ad", "data-adnet-ad") or "").startswith("ad_")
    assert page.locator("#ad").get_by_text("Sponsored").is_visible()
    assert visitor.console.errors() == [] and visitor.console.page_errors == []


def test_a_digest_of_other_bytes_is_refused_by_the_browser_and_nothing_runs(
        server: LiveServer, visitor: Visitor, publisher_site: PublisherSite) -> None:
    other = "sha384-" + base64.b64encode(hashlib.sha384(b"not adnet's script").digest()).decode()
    script = pinned_script(server).replace(sdk_integrity(), other)
    assert other in script
    open_page(visitor, publisher_site, script.replace("<script ", '<script onerror="window.__refused = true" ', 1))

    page = visitor.page
    page.wait_for_function("window.__refused === true")
    assert page.evaluate("typeof (window.adnet && window.adnet.render)") == "undefined"
    assert page.get_attribute("#ad", "data-adnet-ad") is None
    assert any("integrity" in error for error in visitor.console.errors())
