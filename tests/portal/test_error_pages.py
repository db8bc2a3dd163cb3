"""Errors on portal URLs are pages for people: a mistyped portal URL, a method a page lacks, a rate limit or a fault
answer an HTML page in the portal's layout with the error's status and code; the API's paths keep the JSON body."""

from __future__ import annotations

import pytest
from quart import Blueprint

from tests.portal.conftest import HTMX


@pytest.mark.parametrize(("method", "path", "status", "code"), [
    ("GET", "/portal/sitez", 404, "not_found"),
    ("GET", "/portal/advertise/campaigns/cmp_x/nothing", 404, "not_found"),
    ("POST", "/portal", 405, "method_not_allowed"),
    ("DELETE", "/portal/signin", 405, "method_not_allowed"),
])
async def test_an_error_on_a_portal_url_is_a_page_in_the_portal_layout(client, method, path, status, code):
    response = await client.open(path, method=method)
    page = await response.get_data(as_text=True)

    assert response.status_code == status and response.mimetype == "text/html"
    assert page.startswith("<!doctype html>") and '<a class="brand" href="/">adnet</a>' in page
    assert 'id="portal"' in page and f"<code>{code}</code>" in page
    assert '<a href="/portal">Back to the dashboard</a>' in page
    if status == 405:
        assert response.headers["Allow"]


async def test_htmx_gets_the_error_alone(client):
    response = await client.get("/portal/sitez", headers=HTMX)
    page = await response.get_data(as_text=True)
    assert response.status_code == 404
    assert page.lstrip().startswith('<div class="error-box"') and "<html" not in page


async def test_a_fault_on_a_portal_url_is_a_page_too(own_app):
    app, client = own_app, own_app.test_client()
    broken = Blueprint("broken_portal", __name__)

    @broken.get("/portal/test-broken")
    async def explode():
        raise RuntimeError("SELECT secret FROM table; Traceback")

    app.register_blueprint(broken)
    response = await client.get("/portal/test-broken")
    page = await response.get_data(as_text=True)
    assert response.status_code == 500 and response.mimetype == "text/html"
    assert "<code>internal_error</code>" in page and "SELECT" not in page


@pytest.mark.parametrize("path", ["/api/nothing-here", "/portalx", "/nothing-here"])
async def test_outside_the_portal_errors_stay_json(client, path):
    response = await client.get(path)
    assert response.status_code == 404
    assert (await response.get_json())["error"] == "not_found"
