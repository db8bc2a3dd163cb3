"""Every form of the portal says its refusals in people's words: signed in as a publisher, an advertiser and an
operator with something of every kind on their pages, the test finds every form the pages carry, sends each one
empty and then with nonsense in its text fields (as a page and as an htmx fragment), and scans the refusals shown
for what only an API client reads: a JSON path (``blockedAdvertisers.0``, ``targeting.geoInclude``), a camelCase
name (``bannerUrl``) or pydantic's wording. The JSON API keeps its paths (clients rely on them)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from html import unescape
from html.parser import HTMLParser

import pytest

from adnet.core.errors import Invalid
from portal.words import in_words, label_of
from tests.chain.helpers import user
from tests.factories import make_publisher, make_site
from tests.portal.conftest import Publisher, portal_sign_in
from tests.portal.test_advertiser_pages import registered
from tests.portal.test_links import OPERATOR, Crawl, _advertiser_world, _operator_world, _publisher_world
from tests.portal.test_links import settings as settings  # the fixture with one operator wallet

pytestmark = pytest.mark.usefixtures("banner_cdn")

# What only a program reads: a camelCase name, a dotted path, a list index after a dot, pydantic's own words.
API_WORDS = re.compile(r"\b[a-z]+[A-Z][A-Za-z]*\b|\b[a-zA-Z]+\.\d+\b|\b[a-z]+\.[a-z]+[A-Z]|Value error|"
                       r"Input should|\bfield required\b")
_ERROR = re.compile(r'<p[^>]*class="error[^"]*"[^>]*>(.*?)</p>', re.S)
# Forms whose posting changes something without a field a person types (they are refused in no field's words).
NO_TEXT = ("signout", "/delete", "/revoke", "/pause", "/resume", "/end", "/submit", "/approve", "/duplicate",
           "/deactivate", "/activate", "/check", "/credit", "/redeemed")


@dataclass
class Form:
    action: str
    fields: list[tuple[str, str, str]] = field(default_factory=list)  # (name, type, value)


class Forms(HTMLParser):
    """The POST forms of a page, with their fields."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[Form] = []
        self.open: Form | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {name: value or "" for name, value in attrs}
        if tag == "form":
            post = values.get("method", "get").lower() == "post" and values.get("action", "").startswith("/portal")
            self.open = Form(values["action"]) if post else None
            if self.open:
                self.found.append(self.open)
        elif self.open is not None and tag in ("input", "textarea", "select") and values.get("name"):
            self.open.fields.append((values["name"], values.get("type", tag), values.get("value", "")))

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self.open = None


def _payloads(form: Form) -> list[list[tuple[str, str]]]:
    """The form sent empty, then with nonsense in every field a person types (hidden fields as the page has them)."""
    kept = [(name, value) for name, kind, value in form.fields if kind == "hidden"]
    typed = [name for name, kind, _ in form.fields if kind in ("text", "textarea", "url", "number", "date",
                                                               "datetime-local", "search", "select")]
    return [kept, kept + [(name, "zz!") for name in typed]]


async def _forms(crawl_who: Publisher, app) -> dict[str, Form]:
    """Every POST form on the pages ``crawl_who`` reaches, by action."""
    crawl = Crawl(app)
    found: dict[str, Form] = {}
    seen = {"/portal"}
    queue = ["/portal"]
    while queue:
        url = queue.pop(0)
        response = await crawl_who.client.get(url)
        html = await response.get_data(as_text=True)
        parser = Forms()
        parser.feed(html)
        for form in parser.found:
            found.setdefault(form.action, form)
        for link in re.findall(r'href="(/portal[^"#?]*)"', html):
            if link not in seen and crawl.check("GET", link, url) and not link.endswith(".csv"):
                seen.add(link)
                queue.append(link)
    return found


def _said(html: str) -> list[str]:
    return [unescape(re.sub(r"<[^>]+>", "", text)).strip() for text in _ERROR.findall(html)]


async def test_every_portal_form_refuses_in_the_words_of_its_labels(app, client, site_server, clock):
    publisher = await portal_sign_in(client, user(2))
    advertiser = await registered(app.test_client(), user(3))
    operator = await portal_sign_in(app.test_client(), OPERATOR)
    await _publisher_world(publisher, site_server, clock)
    await _advertiser_world(advertiser, clock)
    await _operator_world(clock)

    refusals: list[tuple[str, str]] = []
    tried = 0
    for who in (publisher, advertiser, operator):
        for action, form in (await _forms(who, app)).items():
            if any(part in action for part in NO_TEXT):
                continue
            for payload in _payloads(form):
                for htmx in (True, False):
                    answer = await who.post(action, [pair for pair in payload if pair[0] != "csrf_token"],
                                            htmx=htmx)
                    tried += 1
                    if answer.status_code >= 400:
                        refusals += [(action, said) for said in _said(await answer.get_data(as_text=True))]
    assert tried > 60 and len(refusals) > 40
    assert [(action, said) for action, said in refusals if API_WORDS.search(said)] == []
    # Fields the browser would have refused to send empty get a sentence from the server too.
    assert any(said == "Domain is required: fill it in." for _, said in refusals)


async def test_an_empty_required_field_is_refused_by_the_server_in_words(publisher, clock):
    response = await publisher.post("/portal/sites", {"domain": "", "name": ""})
    html = await response.get_data(as_text=True)
    assert response.status_code == 400 and "Domain is required: fill it in." in html
    fragment = await publisher.post("/portal/keys", {"name": ""}, htmx=True)
    assert fragment.status_code == 400 and "Name is required: fill it in." in await fragment.get_data(as_text=True)


async def test_the_json_api_keeps_its_field_paths(client):
    answer = await client.post("/api/track", json={"trackingToken": "t", "type": "IMPRESSION", "fingerprint": "f",
                                                   "viewportVisible": "maybe"})
    body = await answer.get_json()
    assert answer.status_code == 400 and body["field"] == "campaignId"
    assert body["message"] == "campaignId: this field is required"


@pytest.mark.parametrize(("path", "message", "said"), [
    ("domain", "domain: a site's DNS name", "Domain: a site's DNS name."),
    ("blockedAdvertisers.0", "blockedAdvertisers.0: an id such as adv_…",
     "Blocked advertisers, item 1: an id such as adv_…."),
    ("amount", "amount: an amount is a decimal string such as \"12.5\"",
     "Amount: enter an amount such as 2.5: digits, at most 18 decimals, no sign."),
    ("bannerUrl", "bannerUrl: this field is required", "Image URL is required: fill it in."),
    ("endsAt", "endsAt: endsAt must be after startsAt", "End must be after start."),
    ("targeting.geoInclude.2", "targeting.geoInclude.2: a country code",
     "Countries and regions, item 3: a country code."),
    ("config", "config: Value error, the answer must be one of the choices",
     "Task settings: the answer must be one of the choices."),
])
def test_a_refusal_is_said_with_its_fields_label(path, message, said):
    code = "invalid_amount" if path == "amount" else "invalid_field"
    assert in_words(Invalid(code, message, field=path)).message == said
    assert in_words(Invalid(code, message, field=path)).field == path  # the form still marks the input


def test_a_field_without_a_label_is_said_in_words():
    assert label_of("someNewField") == "Some new field"


async def test_categories_and_task_kinds_are_shown_by_their_names(publisher, clock):
    site = await make_site(await make_publisher(publisher.wallet))
    html = await (await publisher.get(f"/portal/sites/{site.id}/controls")).get_data(as_text=True)
    for name in ("DeFi", "NFT", "DAO", "Visit a page", "Sign a message", "On-chain action", "Quiz"):
        assert f"> {name}</label>" in html, name
    assert not re.search(r"> (Defi|Nft|Dao|visit url|onchain event)</label>", html)
