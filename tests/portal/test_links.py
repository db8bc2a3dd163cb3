"""Every link and form of the portal leads somewhere: signed in as a publisher, an advertiser and an operator with
something of every kind on their pages, the test follows each link to a portal page (as a page and as an htmx
fragment) and asserts that each one, each form's action, each ``hx-get``/``hx-post`` and each status URL a script
polls names a route that answers its method, and that every portal route is reached from some page. A ``url_for``
with a wrong endpoint fails the page that renders it (500); one with the wrong route for its form fails the match."""

from __future__ import annotations

from collections.abc import Iterator
from html.parser import HTMLParser
from urllib.parse import urldefrag, urlencode, urlsplit

import pytest
from eth_account import Account
from werkzeug.exceptions import HTTPException
from werkzeug.routing import RequestRedirect

from adnet.accounts import advertisers
from adnet.campaigns.models import CampaignStatus, CreativeStatus
from adnet.money import ledger
from adnet.tasks.models import TaskKind
from adnet.webhooks.models import WebhookEndpoint
from tests.api.test_interactions import POLL
from tests.chain.helpers import user
from tests.conftest import make_settings
from tests.factories import G, fund, make_campaign, make_creative, make_house_ad, make_publisher, make_site, make_task
from tests.portal.conftest import HTMX, Publisher, portal_sign_in
from tests.portal.test_ad_units import SIDEBAR
from tests.portal.test_advertiser_pages import create, registered
from tests.site_server import Answer

pytestmark = pytest.mark.usefixtures("banner_cdn")

OPERATOR = Account.from_key("0x" + "42" * 32)
# Portal routes no page links to, and why: the embed script's versioned URL is written in a publisher's own page,
# and the viewers' rewards page is linked from publishers' pages and the embed's docs (the crawl starts there too).
NOT_LINKED = {"portal_demo.sdk", "portal_rewards.rewards_page"}


@pytest.fixture
def settings(database_url, data_dir):
    """Test settings with one operator wallet."""
    return make_settings(database_url, data_dir, ADNET_OPERATORS=OPERATOR.address)


class Targets(HTMLParser):
    """The (method, URL) pairs a page's markup sends a browser or htmx to."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[tuple[str, str]] = []
        self.form_method = "GET"

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {name: value for name, value in attrs if value is not None}
        if tag == "form":
            self.form_method = values.get("method", "get").upper()
            if "action" in values:
                self.found.append((self.form_method, values["action"]))
        for name, method in (("href", "GET"), ("src", "GET"), ("hx-get", "GET"), ("hx-post", "POST"),
                             ("formaction", self.form_method)):
            if name in values:
                self.found.append((method, values[name]))
        if "data-status-url" in values:  # polled by static/portal.js: GET for a withdrawal, POST for a deposit
            self.found.append(("ANY", values["data-status-url"]))
        if "data-message-url" in values:  # where static/portal.js asks for the sign-in message
            self.found.append(("POST", values["data-message-url"]))

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self.form_method = "GET"


def targets_of(html: str) -> Iterator[tuple[str, str]]:
    parser = Targets()
    parser.feed(html)
    for method, url in parser.found:
        if url.startswith("/") and not url.startswith("//"):
            yield method, url


class Crawl:
    """The routes the pages reached so far name, and the targets that name none."""

    def __init__(self, app) -> None:
        self.routes = app.url_map.bind("localhost")
        self.endpoints: set[str] = set()
        self.broken: list[str] = []

    def check(self, method: str, url: str, page: str) -> str | None:
        """The endpoint ``url`` names for ``method`` (None, noted as broken, when it names none)."""
        path = urlsplit(url).path
        for tried in (("GET", "POST") if method == "ANY" else (method,)):
            try:
                endpoint, _ = self.routes.match(path, method=tried)
            except (HTTPException, RequestRedirect):
                continue
            self.endpoints.add(endpoint)
            return str(endpoint)
        self.broken.append(f"{method} {url} (on {page})")
        return None

    async def walk(self, who: Publisher, *starts: str) -> None:
        """Follow every GET link to a portal route from ``starts``, as a page and as an htmx fragment, checking every
        target on the way; each page answers without an error."""
        queue, seen = list(starts), set(starts)
        while queue:
            url = queue.pop(0)
            for htmx in (False, True):
                response = await who.client.get(url, headers=HTMX if htmx else {})
                assert response.status_code < 400, (url, htmx, response.status_code)
                for header in ("Location", "HX-Redirect"):
                    if header in response.headers:
                        self.check("GET", response.headers[header], url)
                if not response.content_type.startswith("text/html"):
                    continue
                for method, target in targets_of(await response.get_data(as_text=True)):
                    endpoint = self.check(method, target, url)
                    target = urldefrag(target).url  # a browser keeps the #fragment to itself
                    if method == "GET" and endpoint and endpoint.startswith("portal_") and target not in seen:
                        seen.add(target)
                        queue.append(target)


async def _publisher_world(publisher: Publisher, site_server, clock) -> None:
    """A verified site with money, a withdrawal, an ad unit and a house ad; an unverified one; an API key, a paused
    webhook endpoint and a member."""
    owner = await make_publisher(publisher.wallet)
    site = await make_site(owner, domain="links.example")
    await make_site(owner, domain="unproven.example", verified=False)
    await fund(ledger.site(site.id), 10 * G)
    assert (await publisher.post(f"/portal/sites/{site.id}/withdraw", {"amount": "1"}, htmx=True)).status_code == 200
    assert (await publisher.post(f"/portal/sites/{site.id}/ad-units", SIDEBAR, htmx=True)).status_code == 200
    await make_house_ad(site)
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    issued = await publisher.client.post("/portal/keys", headers=form, data=urlencode(
        [("name", "reports"), ("scopes", "reports:read"), ("csrf_token", publisher.csrf)]))
    assert issued.status_code == 201
    site_server.pages["/hook"] = Answer(200)
    added = await publisher.client.post("/portal/webhooks", headers=form, data=urlencode(
        [("url", site_server.url("/hook")), ("events", "campaign.approved"), ("csrf_token", publisher.csrf)]))
    assert added.status_code == 201
    await WebhookEndpoint.filter(wallet=publisher.wallet).update(paused_at=clock.now())
    member = {"wallet": user(4).address, "role": "viewer"}
    assert (await publisher.post("/portal/members", member)).status_code == 303


async def _advertiser_world(advertiser: Publisher, clock) -> None:
    """A withdrawal, a draft campaign with a creative, a task and a poll, and an approved campaign."""
    account = await advertisers.advertiser_of(advertiser.wallet)
    await fund(ledger.advertiser(account.id), 10 * G)
    assert (await advertiser.post("/portal/advertise/withdraw", {"amount": "1"}, htmx=True)).status_code == 200
    draft = await create(advertiser, clock)
    await make_creative(draft)
    await make_task(kind=TaskKind.VISIT_URL, campaign=draft, config={"url": "https://shop.example/visit"})
    await make_task(kind=TaskKind.POLL, campaign=draft, config=POLL)
    await make_creative(await make_campaign(account, status=CampaignStatus.APPROVED, now=clock.now()))


async def _operator_world(clock) -> None:
    """A campaign in review with a task, and a changed creative of an approved campaign in review."""
    in_review = await make_campaign(status=CampaignStatus.REVIEW, now=clock.now())
    await make_creative(in_review, status=CreativeStatus.REVIEW)
    await make_task(kind=TaskKind.VISIT_URL, campaign=in_review, config={"url": "https://shop.example/visit"})
    await make_creative(await make_campaign(status=CampaignStatus.APPROVED, now=clock.now()),
                        status=CreativeStatus.REVIEW)


async def test_every_link_and_form_of_the_portal_names_a_route_of_its_method(app, client, site_server, clock):
    publisher = await portal_sign_in(client, user(2))
    advertiser = await registered(app.test_client(), user(3))
    operator = await portal_sign_in(app.test_client(), OPERATOR)
    await _publisher_world(publisher, site_server, clock)
    await _advertiser_world(advertiser, clock)
    await _operator_world(clock)

    crawl = Crawl(app)
    for who in (publisher, advertiser, operator):
        await crawl.walk(who, "/", "/portal", "/rewards")
    assert crawl.broken == []
    portal_routes = {rule.endpoint for rule in app.url_map.iter_rules() if rule.endpoint.startswith("portal_")}
    assert portal_routes - NOT_LINKED - crawl.endpoints == set()
