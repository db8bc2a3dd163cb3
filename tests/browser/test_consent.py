"""Consent signals in Chromium: a publisher's page on another origin than adnet with a consent management platform
(stub ``__tcfapi`` and ``__gpp``, or a ``__tcfapiLocator`` frame answering by postMessage when the article is framed).
Consent refused: the embed keeps no viewer id on the device (localStorage, cookies) and sends none for frequency caps,
and adnet still records and bills the impression, as consent-limited. Consent given, or no platform: as before."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from playwright.sync_api import Request

from adnet.core.ids import new_id
from adnet.delivery.models import EventType, TrackingEvent
from tests.adnet.delivery.test_consent import PURPOSE_1_GIVEN, PURPOSE_1_REFUSED, USNAT_DEFAULT
from tests.browser.conftest import LiveServer, PublisherSite, Visitor, publisher_page
from tests.browser.test_banners import ARTICLE_SLOT, bring_into_view, let_time_pass, rendered_ad

# The impressions here are billed, and the billing caps count per client network.
pytestmark = pytest.mark.usefixtures("fresh_billing_windows")
EARLIER_VISIT = "try { localStorage.setItem('adnet:fp', 'fp_from_an_earlier_visit'); } catch (error) {}"


def stub_cmp(tc_string: str) -> str:
    """A consent management platform's API as a page carries it: TCF (GDPR applies, ``tc_string``) and GPP (usnat
    applies, nothing opted out)."""
    return (
        "window.__tcfapi = (command, version, callback) => { if (command === 'addEventListener') "
        f"callback({{ gdprApplies: true, eventStatus: 'tcloaded', tcString: {json.dumps(tc_string)}, listenerId: 1 }},"
        " true); };"
        "window.__gpp = (command, callback) => { if (command === 'addEventListener') callback({ eventName: "
        "'listenerRegistered', listenerId: 1, data: true, pingData: { gppVersion: '1.1', cmpStatus: 'loaded', "
        f"signalStatus: 'ready', gppString: {json.dumps(USNAT_DEFAULT)}, applicableSections: [7] }} }}, true); }};")


def requests_to(visitor: Visitor, server: LiveServer) -> list[Request]:
    sent: list[Request] = []
    visitor.page.on("request", lambda request: sent.append(request) if request.url.startswith(server.url) else None)
    return sent


def impressions_of(server: LiveServer, ad_id: str) -> list[dict[str, Any]]:
    return server.call(lambda: TrackingEvent.filter(creative_id=ad_id, type=EventType.IMPRESSION).values(
        "id", "fingerprint", "consent_limited", "billable", "refusal_reason"))


def impression_of(server: LiveServer, ad_id: str, earlier: set[str]) -> dict[str, Any]:
    """The impression of ``ad_id`` recorded after those of ``earlier`` (earlier tests showed the same ad)."""
    deadline = time.monotonic() + 20
    while True:
        events = [event for event in impressions_of(server, ad_id) if event["id"] not in earlier]
        if events or time.monotonic() > deadline:
            assert len(events) == 1, f"impressions recorded: {events}"
            return events[0]
        time.sleep(0.05)


def seen(visitor: Visitor, server: LiveServer, publisher_site: PublisherSite) -> tuple[str, dict[str, Any]]:
    """The page's ad in view for a second; its viewer id as the page sees it and the impression stored."""
    page = publisher_page(visitor, server, publisher_site, ARTICLE_SLOT)
    ad_id = rendered_ad(visitor)
    earlier = {event["id"] for event in impressions_of(server, ad_id)}
    fingerprint = page.evaluate("adnet.fingerprint()")
    bring_into_view(visitor)
    let_time_pass(visitor, server, 1100)
    return fingerprint, impression_of(server, ad_id, earlier)


def adnet_storage(visitor: Visitor) -> list[str]:
    return visitor.page.evaluate(
        "[...Object.keys(localStorage), ...Object.keys(sessionStorage)].filter((key) => key.startsWith('adnet:'))")


def test_consent_refused_keeps_no_viewer_id_on_the_device_and_the_event_still_counts(
        server: LiveServer, visitor: Visitor, publisher_site: PublisherSite) -> None:
    visitor.context.add_init_script(stub_cmp(PURPOSE_1_REFUSED) + EARLIER_VISIT)
    visitor.page.clock.install()
    sent = requests_to(visitor, server)
    fingerprint, impression = seen(visitor, server, publisher_site)

    assert fingerprint.startswith("fp_") and fingerprint != "fp_from_an_earlier_visit"  # the page's alone
    assert adnet_storage(visitor) == [] and visitor.context.cookies() == []
    serve = next(request for request in sent if "/api/serve?" in request.url)
    assert "viewer=" not in serve.url and "gdpr=1" in serve.url and "gdprConsent=" in serve.url
    assert "gpp=" in serve.url and "gppSid=7" in serve.url
    track = next(json.loads(request.post_data or "{}") for request in sent if request.url.endswith("/api/track"))
    assert (track["gdpr"], track["gdprConsent"], track["gppSid"]) == (1, PURPOSE_1_REFUSED, "7")
    assert (impression["consent_limited"], impression["fingerprint"]) == (True, "")
    assert impression["billable"], impression["refusal_reason"]
    assert visitor.console.script_errors() == [] and visitor.console.page_errors == []


def test_consent_given_keeps_the_viewer_id_as_before(
        server: LiveServer, visitor: Visitor, publisher_site: PublisherSite) -> None:
    visitor.context.add_init_script(stub_cmp(PURPOSE_1_GIVEN))
    visitor.page.clock.install()
    sent = requests_to(visitor, server)
    fingerprint, impression = seen(visitor, server, publisher_site)

    assert visitor.page.evaluate("localStorage.getItem('adnet:fp')") == fingerprint
    serve = next(request for request in sent if "/api/serve?" in request.url)
    assert f"viewer={fingerprint}" in serve.url and "gdpr=1" in serve.url
    assert (impression["consent_limited"], impression["fingerprint"]) == (False, fingerprint)
    assert impression["billable"], impression["refusal_reason"]


def test_without_a_consent_platform_nothing_changes_and_nothing_more_is_asked(
        server: LiveServer, visitor: Visitor, publisher_site: PublisherSite) -> None:
    visitor.page.clock.install()
    sent = requests_to(visitor, server)
    fingerprint, impression = seen(visitor, server, publisher_site)

    assert visitor.page.evaluate("localStorage.getItem('adnet:fp')") == fingerprint
    assert not any("/api/consent" in request.url or "gdpr" in request.url for request in sent)
    assert (impression["consent_limited"], impression["fingerprint"]) == (False, fingerprint)


def test_a_framed_article_asks_the_platform_through_its_locator_frame(
        server: LiveServer, visitor: Visitor, publisher_site: PublisherSite) -> None:
    # The article, with the embed, in a frame of the publisher's page, which alone has the platform: reached by
    # postMessage through the frame named __tcfapiLocator, as the TCF specifies.
    answer = {"gdprApplies": True, "eventStatus": "tcloaded", "tcString": PURPOSE_1_REFUSED, "listenerId": 1}
    article = publisher_site.put(f"/framed/{new_id('ev')}", (
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Article</title>'
        f'<script async src="{server.url}/static/sdk.js" data-site-id="{server.demo["pageSiteId"]}"></script>'
        f"</head><body>{ARTICLE_SLOT}</body></html>"))
    top = publisher_site.put(f"/top/{new_id('ev')}", (
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Publisher</title><script>'
        "window.__tcfapi = () => {};"
        "window.addEventListener('message', (event) => { const call = event.data && event.data.__tcfapiCall;"
        " if (call && call.command === 'addEventListener') event.source.postMessage({ __tcfapiReturn: {"
        f" returnValue: {json.dumps(answer)}, success: true, callId: call.callId }} }}, '*'); }});"
        '</script></head><body><iframe name="__tcfapiLocator" hidden></iframe>'
        f'<iframe id="article" src="{article}" width="800" height="600"></iframe></body></html>'))
    sent = requests_to(visitor, server)
    visitor.page.goto(top)
    frame = visitor.page.frame_locator("#article")
    frame.locator("#ad[data-adnet-ad]").wait_for()
    inner = next(f for f in visitor.page.frames if f.url == article)
    ad_id = inner.get_attribute("#ad", "data-adnet-ad") or ""

    assert inner.evaluate("Object.keys(localStorage).filter((key) => key.startsWith('adnet:'))") == []
    serve = next(request for request in sent if "/api/serve?" in request.url)
    assert "gdpr=1" in serve.url and "viewer=" not in serve.url
    assert ad_id
