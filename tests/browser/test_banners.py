"""Banners in Chromium: served lazily into a reserved box, an impression only after half of the ad was in view for
one continuous second (page clock), a click tracked once that opens the advertiser's page with its click id, and no
click tracking when the campaign's budget is gone. The publisher's page is on another origin than adnet, as on the
web."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import pytest
from playwright.sync_api import Page
from quart import current_app
from tortoise.transactions import in_transaction

from adnet.core.ids import new_id
from adnet.delivery.models import EventType, TrackingEvent
from adnet.money import ledger
from tests.browser.conftest import LiveServer, PublisherSite, Visitor, publisher_page
from tests.conftest import rebuild_index

# Banners seen here are billed, and the billing caps count per client network (every visitor is 127.0.0.1).
pytestmark = pytest.mark.usefixtures("fresh_billing_windows")
ARTICLE_SLOT = '<div id="ad" data-adnet-slot data-kind="BANNER" data-size="300x250" data-placement="article"></div>'
TASKS_SLOT = ('<div id="ad" data-adnet-slot data-kind="BANNER" data-size="300x250" data-placement="article" '
              "data-tasks></div>")
# Resolves once the ad's creative is at least half in view ("in") or entirely out of view ("out"). It observes
# after the SDK does, so when it resolves the SDK has seen the same change.
VIEW_CHANGE = """([id, want]) => new Promise((resolve) => {
  const media = document.getElementById(id).shadowRoot.querySelector(".media");
  const observer = new IntersectionObserver((entries) => {
    const ratio = entries[entries.length - 1].intersectionRatio;
    if (want === "in" ? ratio >= 0.5 : ratio === 0) { observer.disconnect(); resolve(ratio); }
  }, { threshold: [0, 0.5, 1] });
  observer.observe(media);
})"""


def track_requests(visitor: Visitor) -> list[dict[str, Any]]:
    """Every event the page posts to /api/track, as sent."""
    sent: list[dict[str, Any]] = []

    def record(request: Any) -> None:
        if request.method == "POST" and request.url.endswith("/api/track"):
            sent.append(json.loads(request.post_data or "{}"))

    visitor.page.on("request", record)
    return sent


def stored_events(server: LiveServer, fingerprint: str, kind: EventType) -> list[dict[str, Any]]:
    return server.call(lambda: TrackingEvent.filter(fingerprint=fingerprint, type=kind).values(
        "creative_id", "rendered", "viewport_visible", "billable", "refusal_reason", "page_url"))


def wait_for_events(server: LiveServer, fingerprint: str, kind: EventType, count: int) -> list[dict[str, Any]]:
    deadline = time.monotonic() + 10
    while True:
        events = stored_events(server, fingerprint, kind)
        if len(events) >= count or time.monotonic() > deadline:
            return events
        time.sleep(0.05)


def rendered_ad(visitor: Visitor) -> str:
    """Stop the page's clock (installed before the page loaded), so that only ``let_time_pass`` moves it, then
    scroll the slot into view (which serves it) and wait until its creative has loaded; its ad id."""
    page = visitor.page
    page.clock.pause_at(page.evaluate("new Date(Date.now() + 1000).toISOString()"))
    page.locator("#ad").scroll_into_view_if_needed()
    page.wait_for_function("(window.__adnetEvents || []).some((event) => event.name === 'render')")
    return page.get_attribute("#ad", "data-adnet-ad") or ""


def let_time_pass(visitor: Visitor, server: LiveServer, milliseconds: int) -> None:
    """Move the page's clock and the server's by the same time (the server also refuses an impression reported
    less than a second after the ad was served). The server's goes first: what the page sends while its clock
    runs must find the server already that far on."""
    server.clock.advance(milliseconds=milliseconds)
    visitor.page.clock.run_for(milliseconds)


def bring_into_view(visitor: Visitor) -> None:
    visitor.page.locator("#ad").scroll_into_view_if_needed()
    visitor.page.evaluate(VIEW_CHANGE, ["ad", "in"])


def scroll_out_of_view(visitor: Visitor) -> None:
    visitor.page.evaluate("window.scrollTo(0, 0)")
    visitor.page.evaluate(VIEW_CHANGE, ["ad", "out"])


def seen_impression(visitor: Visitor, server: LiveServer, publisher_site: PublisherSite
                    ) -> tuple[Page, str, dict[str, Any]]:
    """A publisher's page whose ad was in view for a second (the page's clock installed): the page, its viewer id
    and the impression stored."""
    page = publisher_page(visitor, server, publisher_site, ARTICLE_SLOT)
    rendered_ad(visitor)
    fingerprint = page.evaluate("adnet.fingerprint()")
    bring_into_view(visitor)
    let_time_pass(visitor, server, 1100)
    (impression,) = wait_for_events(server, fingerprint, EventType.IMPRESSION, 1)
    return page, fingerprint, impression


def test_an_ad_is_served_only_near_the_viewport_into_its_reserved_box(
        server: LiveServer, visitor: Visitor, publisher_site: PublisherSite) -> None:
    page = publisher_page(visitor, server, publisher_site, ARTICLE_SLOT)
    page.wait_for_function("window.adnet && window.adnet.version")
    reserved = page.locator("#ad").bounding_box()

    assert visitor.events("serve") == []
    assert reserved is not None and (reserved["width"], reserved["height"]) == (300, 250)

    ad_id = rendered_ad(visitor)
    served = page.locator("#ad").bounding_box()
    assert ad_id.startswith("ad_")
    assert served is not None and (served["width"], served["height"]) == (300, 250)
    assert page.locator("#ad").get_by_text("Sponsored").is_visible()
    assert page.locator("#ad img").get_attribute("alt")


def test_an_impression_needs_half_the_ad_in_view_for_one_continuous_second(
        server: LiveServer, visitor: Visitor, publisher_site: PublisherSite) -> None:
    visitor.page.clock.install()
    sent = track_requests(visitor)
    page = publisher_page(visitor, server, publisher_site, ARTICLE_SLOT)
    ad_id = rendered_ad(visitor)
    fingerprint = page.evaluate("adnet.fingerprint()")

    bring_into_view(visitor)
    let_time_pass(visitor, server, 900)
    scroll_out_of_view(visitor)
    let_time_pass(visitor, server, 5000)
    visitor.page.wait_for_timeout(300)  # a beacon sent by mistake would have arrived by now (and been seen)

    assert sent == []
    assert stored_events(server, fingerprint, EventType.IMPRESSION) == []

    bring_into_view(visitor)
    let_time_pass(visitor, server, 1100)
    stored = wait_for_events(server, fingerprint, EventType.IMPRESSION, 1)
    scroll_out_of_view(visitor)
    bring_into_view(visitor)
    let_time_pass(visitor, server, 5000)
    visitor.page.wait_for_timeout(300)

    assert [event["type"] for event in sent] == ["IMPRESSION"]
    assert sent[0]["adId"] == ad_id and sent[0]["viewportVisible"] is True and sent[0]["rendered"] is True
    assert sent[0]["trackingToken"] and sent[0]["pageUrl"].startswith(publisher_site.origin)
    assert stored == stored_events(server, fingerprint, EventType.IMPRESSION)
    assert len(stored) == 1
    assert stored[0]["creative_id"] == ad_id
    assert stored[0]["rendered"] and stored[0]["viewport_visible"]
    assert stored[0]["billable"], stored[0]["refusal_reason"]


@pytest.mark.parametrize(("signal", "value"), [("globalPrivacyControl", "true"), ("doNotTrack", "'1'")])
def test_under_do_not_track_or_global_privacy_control_the_viewer_id_is_never_stored(
        server: LiveServer, visitor: Visitor, publisher_site: PublisherSite, signal: str, value: str) -> None:
    visitor.context.add_init_script(
        f"Object.defineProperty(Navigator.prototype, '{signal}', {{ get: () => {value} }});"
        "try { localStorage.setItem('adnet:fp', 'fp_from_an_earlier_visit'); } catch (error) {}")
    visitor.page.clock.install()
    page, fingerprint, impression = seen_impression(visitor, server, publisher_site)

    assert fingerprint.startswith("fp_") and fingerprint != "fp_from_an_earlier_visit"
    assert page.evaluate("adnet.fingerprint()") == fingerprint  # one id for the page's life
    assert page.evaluate("Object.keys(localStorage).filter((key) => key.startsWith('adnet:'))") == []
    assert impression["billable"], impression["refusal_reason"]


def test_a_click_is_tracked_once_and_opens_the_target(
        server: LiveServer, visitor: Visitor, publisher_site: PublisherSite,
        live_campaigns: Callable[..., list[str]]) -> None:
    live_campaigns(0)
    visitor.page.clock.install()
    sent = track_requests(visitor)
    page, fingerprint, impression = seen_impression(visitor, server, publisher_site)
    assert impression["billable"], impression["refusal_reason"]

    landings = []
    for _ in range(2):
        with visitor.context.expect_page() as opened:
            page.locator("#ad a.ad").click()
        landing = opened.value
        landing.wait_for_url("https://example.com/**")
        landings.append((landing.url, landing.evaluate("window.opener === null")))
        landing.close()
    clicks = wait_for_events(server, fingerprint, EventType.CLICK, 1)
    visitor.page.wait_for_timeout(300)

    (first, opener_gone), second = landings
    assert first.startswith("https://example.com/demo/1?adnet_click=") and opener_gone
    assert second == (first, True)  # the banner's link now carries the click id
    assert [event["type"] for event in sent] == ["IMPRESSION", "CLICK"]
    assert clicks == stored_events(server, fingerprint, EventType.CLICK)
    assert len(clicks) == 1 and clicks[0]["billable"], clicks[0]["refusal_reason"]
    assert visitor.console.script_errors() == [] and visitor.console.page_errors == []


def test_with_its_budget_exhausted_the_banner_shows_but_clicks_are_not_tracked(
        server: LiveServer, visitor: Visitor, publisher_site: PublisherSite,
        live_campaigns: Callable[..., list[str]]) -> None:
    (campaign_id,) = live_campaigns(2)
    drained = server.call(lambda: move_budget(campaign_id, to_zero=True, now=server.clock.now()))
    try:
        visitor.page.clock.install()
        sent = track_requests(visitor)
        page = publisher_page(visitor, server, publisher_site, TASKS_SLOT)
        rendered_ad(visitor)
        fingerprint = page.evaluate("adnet.fingerprint()")
        bring_into_view(visitor)
        let_time_pass(visitor, server, 1100)
        wait_for_events(server, fingerprint, EventType.IMPRESSION, 1)
        with visitor.context.expect_page() as opened:
            page.locator("#ad a.ad").click()
        opened.value.wait_for_load_state()
        visitor.page.wait_for_timeout(500)

        assert [event["type"] for event in sent] == ["IMPRESSION"]
        assert opened.value.url == "https://example.com/demo/3"
        assert stored_events(server, fingerprint, EventType.CLICK) == []
        assert [event["billable"] for event in stored_events(server, fingerprint, EventType.IMPRESSION)] == [False]
    finally:
        server.call(lambda: move_budget(campaign_id, amount=drained, now=server.clock.now()))


async def move_budget(campaign_id: str, *, now: Any, to_zero: bool = False, amount: int = 0) -> int:
    """Take a campaign's whole remaining budget out (``to_zero``) or give ``amount`` back; returns the amount."""
    account = ledger.campaign(campaign_id)
    async with in_transaction():
        if to_zero:
            amount = await ledger.balance(account)
        sign = -1 if to_zero else 1
        legs = [(account, sign * amount), (ledger.external("G$"), -sign * amount)]
        await ledger.book("test_budget", new_id("ltx"), legs, now=now, memo="browser test: budget taken and given back")
    await rebuild_index(current_app)
    return amount
