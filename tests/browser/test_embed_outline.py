"""The embed in a publisher's page outline, in Chromium on another origin than adnet: a unit's question is a
heading one level below the page's last heading before it (or the level the publisher gives with
``data-heading-level``), and axe-core finds no serious or critical violation in the embed, heading order included."""

from __future__ import annotations

from typing import Any

from tests.browser.conftest import (
    LiveServer,
    PublisherSite,
    Visitor,
    axe_violations,
    publisher_page,
    serious_violations,
)

POLL = '<div id="slot-poll" data-adnet-slot data-kind="POLL" data-placement="unit"{level}></div>'
TASKS = ('<div id="slot-tasks" data-adnet-slot data-kind="BANNER" data-size="300x250" data-placement="sidebar" '
         "data-tasks></div>")


def poll_heading(visitor: Visitor, server: LiveServer, site: PublisherSite, before: str = "", level: str = "") -> str:
    """The tag of the poll's heading on a page whose article (under its h1) has ``before`` ahead of the slot."""
    page = publisher_page(visitor, server, site, before + POLL.format(level=level))
    slot = page.locator("#slot-poll")
    slot.scroll_into_view_if_needed()
    page.wait_for_selector("#slot-poll[data-adnet-unit]")
    return str(slot.evaluate("(host) => host.shadowRoot.querySelector('.heading').tagName"))


def test_the_heading_follows_the_pages_outline(server: LiveServer, visitor: Visitor,
                                               publisher_site: PublisherSite) -> None:
    assert poll_heading(visitor, server, publisher_site) == "H2"  # after the article's h1
    assert poll_heading(visitor, server, publisher_site, "<h2>Opinion</h2><h3>Readers</h3>") == "H4"
    assert poll_heading(visitor, server, publisher_site, "<h2>Opinion</h2>", ' data-heading-level="5"') == "H5"
    assert poll_heading(visitor, server, publisher_site, "", ' data-heading-level="9"') == "H2"  # not a level


def test_axe_finds_no_serious_violation_in_the_embed(server: LiveServer, visitor: Visitor,
                                                     publisher_site: PublisherSite,
                                                     live_campaigns: Any) -> None:
    live_campaigns(2)
    page = publisher_page(visitor, server, publisher_site, "<h2>Sponsored</h2>" + TASKS + POLL.format(level=""))
    for slot in ("#slot-tasks", "#slot-poll"):
        page.locator(slot).scroll_into_view_if_needed()
    page.wait_for_selector("#slot-tasks[data-adnet-ad]")
    page.wait_for_selector("#slot-poll[data-adnet-unit]")
    page.locator("#slot-tasks li[data-kind=ONCHAIN_EVENT]").wait_for()
    for slot in ("#slot-tasks", "#slot-poll"):
        assert serious_violations(page, slot) == [], slot
    assert axe_violations(page, rules=["heading-order"]) == []


def test_axe_would_see_a_heading_that_skips_levels(server: LiveServer, visitor: Visitor,
                                                   publisher_site: PublisherSite) -> None:
    """The check above has teeth: a level the publisher forces below the outline is what heading-order reports."""
    assert poll_heading(visitor, server, publisher_site, "", ' data-heading-level="5"') == "H5"
    assert [violation["id"] for violation in axe_violations(visitor.page, rules=["heading-order"])] == ["heading-order"]
