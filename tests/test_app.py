"""The app's contract on every endpoint: error shape, request ids, body limits, JSON-only, security headers."""

import gc

from quart import Blueprint
from werkzeug.routing import AnyConverter, BaseConverter

from adnet.app import create_app, create_server_app

ERROR_KEYS = {"error", "message"}


def assert_error(body: dict, code: str) -> None:
    assert ERROR_KEYS <= body.keys()
    assert body["error"] == code
    assert isinstance(body["message"], str) and body["message"]


async def test_unknown_route_is_json_404(client):
    response = await client.get("/api/nothing-here")
    assert response.status_code == 404
    assert_error(await response.get_json(), "not_found")
    assert response.headers["X-Request-ID"]


async def test_wrong_method_is_json_405(client):
    response = await client.delete("/healthz")
    assert response.status_code == 405
    assert_error(await response.get_json(), "method_not_allowed")


async def test_post_that_is_not_json_is_415(client):
    response = await client.post("/api/track", data="type=CLICK",
                                 headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert response.status_code == 415
    response = await client.post("/api/advertisers/register", data="{}", headers={"Content-Type": "text/plain"})
    assert response.status_code == 415  # text/plain is a beacon's, taken by the public routes only
    assert_error(await response.get_json(), "unsupported_media_type")


async def test_body_over_64_kib_is_413(client):
    body = b'{"pad": "' + b"x" * (64 * 1024) + b'"}'
    response = await client.post(
        "/api/track", data=body,
        headers={"Content-Type": "application/json", "Content-Length": str(len(body))},
    )
    assert response.status_code == 413
    assert_error(await response.get_json(), "payload_too_large")


async def test_request_id_is_echoed_when_well_formed_and_replaced_otherwise(client):
    kept = await client.get("/healthz", headers={"X-Request-ID": "abc-12345678"})
    assert kept.headers["X-Request-ID"] == "abc-12345678"
    replaced = await client.get("/healthz", headers={"X-Request-ID": "<script>"})
    assert replaced.headers["X-Request-ID"] != "<script>"
    assert len(replaced.headers["X-Request-ID"]) == 16


async def test_security_headers_on_every_response(client):
    for path in ("/", "/healthz", "/api/nothing-here"):
        headers = (await client.get(path)).headers
        assert "frame-ancestors 'none'" in headers["Content-Security-Policy"]
        assert headers["X-Content-Type-Options"] == "nosniff"
        assert headers["Referrer-Policy"] == "strict-origin-when-cross-origin"
        assert "Strict-Transport-Security" not in headers  # only in production


async def test_internal_error_leaks_nothing(own_app):
    app = own_app
    broken = Blueprint("broken", __name__)

    @broken.get("/api/test-broken")
    async def explode():
        raise RuntimeError("SELECT secret FROM table; Traceback")

    app.register_blueprint(broken)
    response = await app.test_client().get("/api/test-broken")
    assert response.status_code == 500
    body = await response.get_json()
    assert_error(body, "internal_error")
    assert "SELECT" not in str(body) and "Traceback" not in str(body)
    assert response.headers["X-Request-ID"]


async def test_openapi_document_and_docs_page(client):
    document = await (await client.get("/openapi.json")).get_json()
    assert document["info"]["title"] == "adnet"
    docs = await client.get("/docs")
    assert docs.status_code == 200
    assert "swagger" in (await docs.get_data(as_text=True)).lower()


async def test_session_cookies_are_signed_by_a_serializer_built_once_per_secret(own_app):
    app = own_app
    sessions = app.session_interface
    signer = sessions.get_signing_serializer(app)
    assert sessions.get_signing_serializer(app) is signer
    cookie = signer.dumps({"wallet": "0xabc"})

    app.config["SECRET_KEY_FALLBACKS"] = ["a-retired-secret"]
    rotated = sessions.get_signing_serializer(app)
    assert rotated is not signer
    assert rotated.loads(cookie) == {"wallet": "0xabc"}  # the current secret still signs and verifies


async def test_a_served_app_freezes_what_it_loaded_once_started(settings):
    plain = create_app(settings)
    async with plain.test_app():
        assert gc.get_freeze_count() == 0  # the tests' apps leave the collector alone

    served = create_server_app(settings)
    try:
        async with served.test_app():
            assert len(gc.get_objects()) < gc.get_freeze_count()  # a full collection walks less than it loaded
    finally:
        gc.unfreeze()


async def test_every_route_answers_a_method_it_lacks_with_405_and_allow(app, client):
    """Also with a body: the JSON-only and body-size checks must not answer for a route that does not exist."""
    adapter = app.url_map.bind("adnet.test")
    checked = 0
    for rule in app.url_map.iter_rules():
        defaults = rule.defaults or {}  # a rule's fixed values (a page's first section) are no part of its path
        values = {name: defaults[name] if name in defaults else _sample(rule._converters[name])
                  for name in rule.arguments}
        path = adapter.build(rule.endpoint, values, method=next(iter(rule.methods or ())))
        allowed = adapter.allowed_methods(path)
        for method in sorted({"GET", "POST", "PUT", "PATCH", "DELETE"} - set(allowed)):
            for headers in ({}, {"Content-Type": "text/plain"}, {"Content-Type": "application/json"}):
                response = await client.open(path, method=method, data="{}", headers=headers)
                assert response.status_code == 405, (method, path, headers)
                if path.startswith("/portal"):  # a page for people (tests/portal/test_error_pages.py)
                    assert "<code>method_not_allowed</code>" in await response.get_data(as_text=True)
                else:
                    assert_error(await response.get_json(), "method_not_allowed")
                assert set(response.headers["Allow"].split(", ")) == set(allowed), (method, path)
                checked += 1
    assert checked > 300


def _sample(converter: BaseConverter) -> str:
    """A value the converter accepts."""
    return sorted(converter.items)[0] if isinstance(converter, AnyConverter) else "x"
