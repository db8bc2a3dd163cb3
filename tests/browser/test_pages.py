"""The demo page and the SDK's quiet failures in Chromium, and how the SDK and /demo are served."""

from __future__ import annotations

import asyncio
import gzip
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor

from adnet.app import create_app
from adnet.delivery.sdk import sdk_path, sdk_version
from tests.browser.conftest import LiveServer, PublisherSite, Visitor, free_socket, publisher_page

SLOTS = ("slot-leaderboard", "slot-tasks", "slot-mobile", "slot-poll", "slot-feedback", "slot-survey", "slot-mixed")


def test_the_demo_page_fills_every_slot_without_a_console_error(server: LiveServer, visitor: Visitor) -> None:
    page = visitor.page
    page.goto(f"{server.url}/demo")
    for slot in SLOTS:
        page.locator(f"#{slot}").scroll_into_view_if_needed()
    page.wait_for_function(f"(window.__adnetEvents || []).filter((e) => e.name === 'serve').length === {len(SLOTS)}")
    page.wait_for_load_state("networkidle")

    served = {event["slot"]: event["kind"] for event in visitor.events("serve")}
    assert {slot: served[slot] for slot in SLOTS if slot != "slot-mixed"} == {
        "slot-leaderboard": "BANNER", "slot-tasks": "BANNER", "slot-mobile": "BANNER", "slot-poll": "POLL",
        "slot-feedback": "FEEDBACK", "slot-survey": "SURVEY"}
    assert served["slot-mixed"] in ("BANNER", "POLL")
    for slot, size in (("slot-leaderboard", (728, 90)), ("slot-mobile", (320, 50))):
        box = page.locator(f"#{slot}").bounding_box()
        assert box is not None and (box["width"], box["height"]) == size
        assert page.locator(f"#{slot}").get_by_text("Sponsored").is_visible()
    assert page.locator("#slot-tasks li[data-task]").count() >= 1
    assert visitor.console.messages == [] and visitor.console.page_errors == []


def test_nothing_to_serve_an_error_or_no_server_leave_the_slot_empty_and_the_console_quiet(
        server: LiveServer, visitor: Visitor, publisher_site: PublisherSite) -> None:
    closed = free_socket()
    dead_api = f"http://127.0.0.1:{closed.getsockname()[1]}"
    closed.close()
    cases = (
        ("none", '<div id="ad" data-adnet-slot data-size="970x250"></div>', {}),
        ("unavailable", '<div id="ad" data-adnet-slot data-size="300x250"></div>', {"site_id": "site_unknownunknown"}),
        ("unavailable", '<div id="ad" data-adnet-slot data-size="300x250" data-collapse></div>', {"api": dead_api}),
    )
    outcomes = []
    for reason, slot, options in cases:
        page = publisher_page(visitor, server, publisher_site, slot, **options)
        page.locator("#ad").scroll_into_view_if_needed()
        page.wait_for_selector("#ad[data-adnet-empty]", state="attached")
        outcomes.append((page.get_attribute("#ad", "data-adnet-empty"), visitor.events("empty")[0]["status"]))
        assert reason == outcomes[-1][0]

    assert outcomes == [("none", 200), ("unavailable", 404), ("unavailable", 0)]
    assert not visitor.page.locator("#ad").is_visible()  # data-collapse hides an empty slot
    # The browser itself notes each failed request; the SDK adds nothing, and nothing is thrown.
    assert visitor.console.script_errors() == [] and visitor.console.page_errors == []
    assert len(visitor.console.errors()) == 2


def test_the_sdk_has_a_versioned_url_cached_for_a_year(server: LiveServer) -> None:
    version = sdk_version()
    with urllib.request.urlopen(f"{server.url}/sdk/{version}/sdk.js") as response:  # noqa: S310 - our test server
        body = response.read()
        headers = response.headers

    assert body == sdk_path().read_bytes()
    assert headers["Cache-Control"] == "public, max-age=31536000, immutable"
    assert headers["Content-Type"].startswith("text/javascript")
    # One dependency-free file served as written, without a build step: at most 20 kB once compressed, as servers
    # and CDNs send it (docs/sdk.md).
    assert len(gzip.compress(body, 9)) <= 20_000


def test_an_older_sdk_url_redirects_to_the_current_version(server: LiveServer) -> None:
    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):
            return None

    opener = urllib.request.build_opener(NoRedirect)
    try:
        opener.open(f"{server.url}/sdk/0.0.1/sdk.js")
        raise AssertionError("expected a redirect")
    except urllib.error.HTTPError as moved:
        assert moved.code == 302
        assert moved.headers["Location"].endswith(f"/sdk/{sdk_version()}/sdk.js")


def test_the_demo_page_does_not_exist_in_production(server: LiveServer) -> None:
    settings = server.services.settings.model_copy(update={"env": "production"})

    async def get_demo() -> int:
        response = await create_app(settings).test_client().get("/demo")
        return response.status_code

    # Playwright's sync API holds this thread's event loop, so the app's test client runs on a thread of its own.
    with ThreadPoolExecutor(1) as thread:
        assert thread.submit(asyncio.run, get_demo()).result() == 404
