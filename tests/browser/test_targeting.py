"""Targeting and frequency capping in Chromium, on a publisher's page of another origin: a slot's ``data-keywords``
reach ``/api/serve`` (cleaned: lower-cased, items the server would refuse left out), and a campaign that excludes
one of them is not shown there while it is shown beside other keywords; the serve request carries the viewer id
frequency caps count, except under Global Privacy Control."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

from tests.browser.conftest import LiveServer, PublisherSite, Visitor, publisher_page

SLOT = '<div id="ad" data-adnet-slot data-kind="BANNER" data-size="300x250" data-keywords="{keywords}"></div>'


def serve_with_keywords(visitor: Visitor, server: LiveServer, publisher_site: PublisherSite, keywords: str
                        ) -> tuple[str, str]:
    """Open a page whose slot names ``keywords``, bring the slot into view, and wait for its answer: the keywords
    the serve request sent, and what the slot became (an ad id, or ``empty``)."""
    query, outcome = served_query(visitor, server, publisher_site, keywords)
    return query.get("keywords", [""])[0], outcome


def served_query(visitor: Visitor, server: LiveServer, publisher_site: PublisherSite, keywords: str
                 ) -> tuple[dict[str, list[str]], str]:
    """The serve request's parameters for a slot that names ``keywords``, and what the slot became."""
    sent: list[str] = []
    visitor.page.on("request", lambda request: sent.append(request.url) if "/api/serve" in request.url else None)
    page = publisher_page(visitor, server, publisher_site, SLOT.format(keywords=keywords))
    page.locator("#ad").scroll_into_view_if_needed()
    page.wait_for_function("(window.__adnetEvents || []).some((e) => e.name === 'render' || e.name === 'empty')")
    (url,) = sent
    outcome = page.get_attribute("#ad", "data-adnet-ad") or ("empty" if visitor.events("empty") else "")
    return parse_qs(urlsplit(url).query), outcome


def test_a_slots_keywords_choose_whether_a_campaign_that_excludes_one_is_shown(
        server: LiveServer, visitor: Visitor, publisher_site: PublisherSite, live_campaigns) -> None:
    # The demo's first campaign excludes pages about gambling.
    live_campaigns(0)
    sent, outcome = serve_with_keywords(visitor, server, publisher_site, " News, GAMBLING, not valid!, news")
    assert sent == "news,gambling"
    assert outcome == "empty"


def test_a_campaign_shows_beside_keywords_it_does_not_exclude(
        server: LiveServer, visitor: Visitor, publisher_site: PublisherSite, live_campaigns) -> None:
    live_campaigns(0)
    sent, outcome = serve_with_keywords(visitor, server, publisher_site, "ReFi, climate")
    assert sent == "refi,climate"
    assert outcome.startswith("ad_")
    assert visitor.console.script_errors() == []


def test_the_serve_request_carries_the_viewer_id_unless_the_viewer_opted_out(
        server: LiveServer, visitor: Visitor, publisher_site: PublisherSite, live_campaigns) -> None:
    live_campaigns(0)
    query, _ = served_query(visitor, server, publisher_site, "news")
    assert query["viewer"] == [visitor.page.evaluate("adnet.fingerprint()")]


def test_under_global_privacy_control_no_viewer_id_is_sent(
        server: LiveServer, visitor: Visitor, publisher_site: PublisherSite, live_campaigns) -> None:
    live_campaigns(0)
    visitor.context.add_init_script("Object.defineProperty(navigator, 'globalPrivacyControl', {get: () => true})")
    query, outcome = served_query(visitor, server, publisher_site, "news")
    assert "viewer" not in query
    assert outcome.startswith("ad_")
