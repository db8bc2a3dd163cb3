"""How the embed looks and is used on a publisher's page of another origin than adnet, in Chromium: its cards take
the page's font and text colour, ``data-theme`` (light, dark, auto by ``prefers-color-scheme``) and the
``--adnet-*`` custom properties set their colours, a unit is as tall as its content in a slot sized for a banner,
a poll and a quiz are completed with the keyboard alone, axe-core finds nothing in any theme, and the page's own
CSS neither reaches into a card nor changes it. ``make screenshots`` keeps the pictures of docs/sdk.md here."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import pytest
from eth_account import Account
from playwright.sync_api import Page

from adnet.core.ids import new_id
from adnet.interactions.models import Interaction
from tests.browser.conftest import LiveServer, PublisherSite, Visitor, axe_violations

# The pictures of docs/sdk.md, rewritten only by ``make screenshots``.
SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
UPDATE_SCREENSHOTS = os.environ.get("ADNET_UPDATE_SCREENSHOTS") == "1"

PAGE_STYLE = "body { font-family: Georgia, serif; color: rgb(51, 17, 85); background: rgb(250, 248, 240); }"
# The innermost focused element, through the shadow roots it is in: its text, outline and its slot's id.
FOCUSED = """() => {
  let node = document.activeElement, host = null;
  while (node && node.shadowRoot && node.shadowRoot.activeElement) {
    host = node;
    node = node.shadowRoot.activeElement;
  }
  const style = getComputedStyle(node);
  return { text: node.textContent, slot: host && host.id, outline: style.outlineStyle,
           outlineWidth: style.outlineWidth, outlineColor: style.outlineColor };
}"""
SPACER = '<div style="height: 200vh"></div>'
# The banners here are in view long enough to be billed, and the billing caps count per client network (every visitor
# is 127.0.0.1): each test starts in fresh windows and leaves fresh ones.
pytestmark = pytest.mark.usefixtures("fresh_billing_windows")
LIGHT = {"background": "rgb(255, 255, 255)", "color": "rgb(28, 33, 40)"}
DARK = {"background": "rgb(22, 27, 34)", "color": "rgb(230, 237, 243)"}


def own_wallet(visitor: Visitor, name: str) -> None:
    """Give the visitor's injected wallet an account of its own, derived from ``name``: the tasks it completes here
    stay open to the shared test wallet of the other browser tests (test_tasks answers the same quiz)."""
    account = Account.from_key(hashlib.sha256(name.encode()).digest())
    visitor.wallet.account = account
    visitor.wallet.address = account.address.lower()


def embed_page(visitor: Visitor, server: LiveServer, site: PublisherSite, slots: str, style: str = "",
               below: bool = False) -> Page:
    """A publisher's short article on its own origin with the snippet, ``style`` in its head and ``slots`` in its
    main column after a link (where keyboard tests start); ``below``: the slots start two screens down, so that
    they are served only once scrolled to."""
    html = (f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Publisher</title>'
            f'<link rel="icon" href="data:,"><style>{style}</style>'
            f'<script async src="{server.url}/static/sdk.js" data-site-id="{server.demo["pageSiteId"]}"></script>'
            f'</head><body><main><h1>An article</h1><p>Some text of the article, and <a id="before" href="#end">'
            f'a link</a>.</p>{SPACER if below else ""}<h2>Sponsored</h2>{slots}'
            f'<p id="end">The end.</p></main></body></html>')
    visitor.page.goto(site.put(f"/article/{new_id('ev')}", html))
    return visitor.page


def slot(kind: str, slot_id: str, attributes: str = "") -> str:
    return f'<div id="{slot_id}" data-adnet-slot data-kind="{kind}" data-placement="article"{attributes}></div>'


def filled(page: Page, *slot_ids: str) -> None:
    """Wait until each slot shows what it was served (a banner's image loaded, its tasks drawn)."""
    for slot_id in slot_ids:
        page.locator(f"#{slot_id}").scroll_into_view_if_needed()
        page.wait_for_selector(f"#{slot_id}[data-adnet-unit], #{slot_id}[data-adnet-ad]")
        if page.get_attribute(f"#{slot_id}", "data-adnet-ad"):
            page.wait_for_function("(id) => { const img = document.getElementById(id).shadowRoot"
                                   ".querySelector('img.media'); return img && img.complete && img.naturalWidth; }",
                                   arg=slot_id)


def colours(page: Page, selector: str) -> dict[str, str]:
    return page.locator(selector).evaluate(
        "(node) => { const s = getComputedStyle(node); return { background: s.backgroundColor, color: s.color }; }")


def tab_to(page: Page, slot_id: str, text: str) -> dict[str, Any]:
    """Press Tab from the article's link until the focus is on ``text`` in slot ``slot_id``; what is focused."""
    page.focus("#before")
    for _ in range(12):
        page.keyboard.press("Tab")
        focused: dict[str, Any] = page.evaluate(FOCUSED)
        if focused["slot"] == slot_id and focused["text"] == text:
            return focused
    raise AssertionError(f"Tab never reached {text!r} in #{slot_id}")


def test_cards_take_the_pages_font_and_text_colour(server: LiveServer, visitor: Visitor,
                                                   publisher_site: PublisherSite, live_campaigns: Any) -> None:
    live_campaigns(0)
    page = embed_page(visitor, server, publisher_site,
                      slot("BANNER", "tasks", ' data-size="300x250" data-tasks') + slot("POLL", "poll"), PAGE_STYLE)
    filled(page, "tasks", "poll")

    for selector in ("#poll .heading", "#poll button", "#poll .tag", "#tasks .t", "#tasks button"):
        node = page.locator(selector).first
        assert node.evaluate("(n) => getComputedStyle(n).fontFamily") == "Georgia, serif", selector
    assert colours(page, "#poll .card") == {"background": "rgba(0, 0, 0, 0)", "color": "rgb(51, 17, 85)"}
    assert colours(page, "#poll button >> nth=0")["color"] == "rgb(51, 17, 85)"
    assert colours(page, "#tasks .t >> nth=0")["color"] == "rgb(51, 17, 85)"
    # Borders and muted text are the page's colour, lighter; not a grey of their own.
    border = page.locator("#poll .card").evaluate("(n) => getComputedStyle(n).borderTopColor")
    assert border.startswith("color(srgb 0.2 0.0666") or border.startswith("rgba(51, 17, 85"), border
    assert visitor.console.errors() == [] and visitor.console.page_errors == []


def test_data_theme_sets_light_and_dark_colours_and_auto_follows_the_viewer(
        server: LiveServer, visitor: Visitor, publisher_site: PublisherSite) -> None:
    page = embed_page(visitor, server, publisher_site, "".join(
        slot("POLL", name, f' data-theme="{name}"') for name in ("light", "dark", "auto")), PAGE_STYLE)
    filled(page, "light", "dark", "auto")

    assert [colours(page, f"#{name} .card") for name in ("light", "dark", "auto")] == [LIGHT, DARK, LIGHT]
    page.emulate_media(color_scheme="dark")
    assert [colours(page, f"#{name} .card") for name in ("light", "dark", "auto")] == [LIGHT, DARK, DARK]
    assert colours(page, "#dark .heading")["color"] == DARK["color"]
    page.emulate_media(color_scheme="light")
    assert colours(page, "#auto .card") == LIGHT


def test_custom_properties_set_colours_radius_and_font(server: LiveServer, visitor: Visitor,
                                                       publisher_site: PublisherSite) -> None:
    style = (PAGE_STYLE + " #custom { --adnet-accent: #c2185b; --adnet-bg: #fffbe6; --adnet-fg: #222222; "
             "--adnet-border: #999999; --adnet-radius: 0px; --adnet-font: monospace; --adnet-font-size: 15px; }")
    page = embed_page(visitor, server, publisher_site, slot("POLL", "custom"), style)
    filled(page, "custom")

    card = page.locator("#custom .card").evaluate("""(n) => { const s = getComputedStyle(n);
      return [s.backgroundColor, s.color, s.borderTopColor, s.borderTopLeftRadius, s.fontFamily, s.fontSize]; }""")
    assert card == ["rgb(255, 251, 230)", "rgb(34, 34, 34)", "rgb(153, 153, 153)", "0px", "monospace", "15px"]
    assert page.locator("#custom button").first.evaluate("(n) => getComputedStyle(n).borderTopLeftRadius") == "0px"
    focused = tab_to(page, "custom", "Celo")
    assert (focused["outline"], focused["outlineWidth"], focused["outlineColor"]) == ("solid", "2px",
                                                                                      "rgb(194, 24, 91)")


def test_a_poll_in_a_336x280_slot_is_as_tall_as_its_content(server: LiveServer, visitor: Visitor,
                                                            publisher_site: PublisherSite) -> None:
    page = embed_page(visitor, server, publisher_site, slot("POLL", "poll", ' data-size="336x280"'), below=True)
    page.wait_for_function("window.adnet && window.adnet.version")
    reserved = page.locator("#poll").bounding_box()
    filled(page, "poll")

    host = page.locator("#poll").bounding_box()
    card = page.locator("#poll .card").bounding_box()
    buttons = [page.locator("#poll button").nth(index).bounding_box() for index in range(3)]
    assert reserved is not None and (reserved["width"], reserved["height"]) == (336, 280)
    assert host is not None and card is not None and all(buttons)
    assert host["width"] == 336 and host["height"] == card["height"] < 280
    assert card["y"] + card["height"] - max(b["y"] + b["height"] for b in buttons if b) <= 24  # padding, no more
    # In a 336 px card the three choices are full-width rows, one under the other.
    assert len({b["x"] for b in buttons if b}) == 1 and len({b["y"] for b in buttons if b}) == 3


def test_a_banner_slot_reserves_two_task_rows_and_then_fits_the_tasks_it_got(
        server: LiveServer, visitor: Visitor, publisher_site: PublisherSite, live_campaigns: Any) -> None:
    live_campaigns(2)  # one attached task
    page = embed_page(visitor, server, publisher_site, slot("BANNER", "tasks", ' data-size="300x250" data-tasks'),
                      below=True)
    page.wait_for_function("window.adnet && window.adnet.version")
    reserved = page.locator("#tasks").bounding_box()
    filled(page, "tasks")
    page.locator("#tasks li[data-task]").wait_for()

    host, banner, tasks = (page.locator(selector).bounding_box() for selector in ("#tasks", "#tasks .box", "#tasks ul"))
    assert reserved is not None and reserved["height"] > 250 + 2 * 44
    assert host is not None and banner is not None and tasks is not None
    assert page.locator("#tasks li[data-task]").count() == 1
    assert (banner["width"], banner["height"]) == (300, 250)
    assert host["height"] == banner["height"] + tasks["height"]  # no reserved space left empty under the task


def test_a_poll_is_answered_with_the_keyboard_alone(server: LiveServer, visitor: Visitor,
                                                    publisher_site: PublisherSite) -> None:
    page = embed_page(visitor, server, publisher_site, slot("POLL", "poll", ' data-theme="auto"'))
    filled(page, "poll")
    (poll_id,) = server.demo["taskIds"]["POLL"]

    assert page.locator("#poll fieldset").get_attribute("aria-labelledby") == "q"
    assert page.locator("#poll").get_by_role("group", name="Which chain do you use most?").count() == 1
    focused = tab_to(page, "poll", "Rootstock")
    assert (focused["outline"], focused["outlineWidth"]) == ("solid", "2px")  # a visible focus ring
    page.keyboard.press("Enter")
    page.locator("#poll").get_by_text("Thank you!").wait_for()

    assert page.evaluate(FOCUSED)["text"] == "Thank you!"  # the focus moves to the result, not to the page's top
    assert page.locator("#poll [aria-live=polite]").text_content() == "Thank you, your answer was recorded."
    fingerprint = page.evaluate("adnet.fingerprint()")
    recorded = server.call(lambda: Interaction.filter(unit_id=poll_id, fingerprint=fingerprint).values("answers"))
    assert recorded == [{"answers": {"optionId": "rootstock"}}]

    page = embed_page(visitor, server, publisher_site, slot("POLL", "poll"))  # answered already: adnet says so
    filled(page, "poll")
    tab_to(page, "poll", "Celo")
    page.keyboard.press("Enter")
    page.locator("#poll").get_by_text("Thank you!").wait_for()
    assert page.locator("#poll .content").inner_text() == "Thank you!"  # no reward this time, and nothing else


def test_a_quiz_lays_out_its_question_above_its_choices_and_is_answered_with_the_keyboard(
        server: LiveServer, visitor: Visitor, publisher_site: PublisherSite, live_campaigns: Any) -> None:
    live_campaigns(0)
    own_wallet(visitor, "test_embed_look quiz")
    page = embed_page(visitor, server, publisher_site, slot("BANNER", "tasks", ' data-size="300x250" data-tasks'))
    filled(page, "tasks")
    row = page.locator("#tasks li[data-kind=QUIZ]")
    row.wait_for()

    legend = row.locator("legend").bounding_box()
    choices = [row.get_by_role("button", name=name).bounding_box() for name in ("G$", "SOV", "ETH")]
    assert row.locator("legend").text_content() == "Which token pays adnet rewards?"
    assert row.get_by_role("group", name="Which token pays adnet rewards?").count() == 1
    assert legend is not None and all(choices)
    assert all(b["y"] >= legend["y"] + legend["height"] for b in choices if b)  # below the question, not beside it
    assert len({b["y"] for b in choices if b}) == 1  # on one line under it

    focused = tab_to(page, "tasks", "SOV")
    assert (focused["outline"], focused["outlineWidth"]) == ("solid", "2px")
    page.keyboard.press("Enter")
    row.get_by_text("That answer is not right.").wait_for()
    page.keyboard.press("Shift+Tab")
    assert page.evaluate(FOCUSED)["text"] == "G$"
    page.keyboard.press("Space")
    row.get_by_text("Done", exact=True).wait_for()
    assert page.evaluate(FOCUSED)["text"] == "Done"
    assert [event["taskId"] for event in visitor.events("complete")] == [row.get_attribute("data-task")]


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_axe_finds_nothing_in_any_theme(server: LiveServer, visitor: Visitor, publisher_site: PublisherSite,
                                        live_campaigns: Any, scheme: str) -> None:
    live_campaigns(0)
    visitor.page.emulate_media(color_scheme=scheme)  # type: ignore[arg-type]
    page_style = ("" if scheme == "light" else "body { background: #0f1115; color: #d6d9de; }"
                  " a { color: #8ab4f8; }")
    slots = (slot("BANNER", "tasks", ' data-size="300x250" data-tasks') + slot("POLL", "poll", ' data-theme="dark"')
             + slot("FEEDBACK", "feedback", ' data-theme="light"') + slot("SURVEY", "survey", ' data-theme="auto"'))
    page = embed_page(visitor, server, publisher_site, slots, page_style)
    filled(page, "tasks", "poll", "feedback", "survey")
    page.locator("#feedback").get_by_role("radio", name="4 of 5").click()  # a chosen star too

    for slot_id in ("tasks", "poll", "feedback", "survey"):
        assert axe_violations(page, f"#{slot_id}") == [], slot_id
    assert visitor.console.errors() == [] and visitor.console.page_errors == []


HOSTILE = """
button { background: red !important; color: yellow !important; font-size: 40px !important; padding: 30px !important; }
h1, h2, h3, h4 { font-size: 60px; letter-spacing: 10px; }
div { line-height: 3; text-align: center; text-transform: uppercase; letter-spacing: 6px; }
.card, .head, .tag, .opts, .box, .content, fieldset { display: none !important; border: 8px solid red; }
"""
MEASURE = """(host) => {
  const root = host.shadowRoot, card = root.querySelector('.card'), button = root.querySelector('button');
  const b = getComputedStyle(button), h = getComputedStyle(root.querySelector('.heading'));
  return { height: host.getBoundingClientRect().height, width: host.getBoundingClientRect().width,
           cardDisplay: getComputedStyle(card).display, buttonBackground: b.backgroundColor, buttonColor: b.color,
           buttonFontSize: b.fontSize, buttonTransform: b.textTransform, headingSize: h.fontSize,
           headingSpacing: h.letterSpacing, lineHeight: getComputedStyle(card).lineHeight };
}"""


def test_the_pages_own_css_does_not_change_a_card(server: LiveServer, visitor: Visitor,
                                                  publisher_site: PublisherSite) -> None:
    looks = []
    for style in ("", HOSTILE):
        page = embed_page(visitor, server, publisher_site, slot("POLL", "poll", ' data-size="336x280"'), style)
        filled(page, "poll")
        looks.append(page.locator("#poll").evaluate(MEASURE))
        if style:  # the page's rules are in force on its own elements
            assert page.locator("h1").evaluate("(n) => getComputedStyle(n).fontSize") == "60px"

    plain, hostile = looks
    assert hostile == plain
    assert plain["buttonBackground"] != "rgb(255, 0, 0)" and plain["cardDisplay"] == "block"
    assert plain["buttonTransform"] == "none" and plain["headingSpacing"] == "normal"


def test_screenshots_of_the_embed_in_light_and_dark(server: LiveServer, visitor: Visitor,
                                                    publisher_site: PublisherSite, live_campaigns: Any,
                                                    tmp_path: Path) -> None:
    """The embed on a publisher's page with its own typography, in its light and dark modes (docs/sdk.md)."""
    live_campaigns(0)
    style = """
      body { font-family: Georgia, 'DejaVu Serif', serif; color: #24292f; background: #fbfaf7; margin: 0; }
      main { max-width: 760px; margin: 0 auto; padding: 24px; }
      .slots { display: grid; grid-template-columns: 1fr 1fr; gap: 24px; align-items: start; }
      [data-adnet-slot] + [data-adnet-slot] { margin-top: 24px; }
      @media (prefers-color-scheme: dark) { body { color: #dfe3e8; background: #111418; } a { color: #8ab4f8; } }
    """
    slots = ('<div class="slots"><div>' + slot("BANNER", "tasks", ' data-size="300x250" data-tasks')
             + slot("SURVEY", "survey") + "</div><div>" + slot("POLL", "poll", ' data-size="336x280"')
             + slot("FEEDBACK", "feedback") + "</div></div>")
    visitor.page.set_viewport_size({"width": 900, "height": 900})
    for scheme in ("light", "dark"):
        visitor.page.emulate_media(color_scheme=scheme)  # type: ignore[arg-type]
        page = embed_page(visitor, server, publisher_site, slots, style)
        filled(page, "tasks", "survey", "poll", "feedback")
        page.evaluate("window.scrollTo(0, 0)")
        name = f"embed-{scheme}.png"
        screenshot = SCREENSHOTS / name if UPDATE_SCREENSHOTS else tmp_path / name
        page.screenshot(path=str(screenshot), full_page=True)
        assert screenshot.stat().st_size > 10_000  # a rendered page, not a blank one
