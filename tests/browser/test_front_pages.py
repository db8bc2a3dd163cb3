"""The front page and /docs in Chromium. The front page fits a phone's width and leads each kind of visitor in; the
API reference renders every operation of the OpenAPI document from adnet's own files, under adnet's CSP, without
asking any other host for anything (so it works offline), and without a console error."""

from __future__ import annotations

import json
import urllib.request

import pytest
from playwright.sync_api import Browser, Route, expect

from tests.browser.conftest import LiveServer, watch_console


@pytest.mark.parametrize("width", [390, 1280])
def test_the_front_page_fits_the_screen_and_leads_each_visitor_in(browser: Browser, server: LiveServer,
                                                                  width: int) -> None:
    context = browser.new_context(viewport={"width": width, "height": 844})
    page = context.new_page()
    console = watch_console(page)
    try:
        page.goto(f"{server.url}/")
        for heading in ("Publishers", "Advertisers", "Developers"):
            expect(page.get_by_role("heading", name=heading, exact=True)).to_be_visible()
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        page.get_by_role("link", name="Sign in to advertise").click()
        expect(page.get_by_role("button", name="Connect wallet and sign in")).to_be_visible()
        page.go_back()
        page.get_by_role("link", name="API reference").click()
        page.wait_for_selector(".opblock-summary")
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        assert console.errors() == [] and console.page_errors == []
    finally:
        context.close()


def test_the_api_reference_renders_every_operation_offline_under_the_csp(browser: Browser, server: LiveServer) -> None:
    with urllib.request.urlopen(f"{server.url}/openapi.json") as answer:  # noqa: S310 - our test server
        document = json.load(answer)
    operations = {(method.upper(), path) for path, item in document["paths"].items() for method in item}
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    elsewhere: list[str] = []

    def only_adnet(route: Route) -> None:
        if route.request.url.startswith(server.url):
            route.continue_()
        else:  # as if offline: no other host answers
            elsewhere.append(route.request.url)
            route.abort("internetdisconnected")

    context.route("**/*", only_adnet)
    page = context.new_page()
    console = watch_console(page)
    try:
        answer = page.goto(f"{server.url}/docs")
        assert answer is not None and "'unsafe-inline'" not in answer.headers["content-security-policy"]
        page.wait_for_selector(".opblock-summary")
        page.wait_for_load_state("networkidle")
        rendered = {tuple(operation) for operation in page.evaluate("""[...document.querySelectorAll('.opblock')].map(
            (block) => [block.querySelector('.opblock-summary-method').textContent,
                        block.querySelector('.opblock-summary-path').dataset.path])""")}
        assert len(operations) > 40
        assert rendered == operations
        assert page.get_by_text("/api/advertisers/campaigns/{campaign_id}/{action}").first.is_visible()

        withdraw = page.locator(".opblock").filter(has=page.locator('[data-path="/api/publishers/withdraw"]'))
        withdraw.locator(".opblock-summary").click()
        responses = withdraw.locator(".responses-table .response")
        responses.first.wait_for()
        assert {"201", "400", "401", "403"} <= set(responses.evaluate_all(
            "(rows) => rows.map((row) => row.dataset.code)"))
        assert withdraw.locator(".authorization__btn").is_visible()  # the operation names its security
        assert elsewhere == []
        assert console.errors() == [] and console.page_errors == []
    finally:
        context.close()
