"""Every route is rate limited: the URL map is walked, so a new route without a limit fails here."""

from __future__ import annotations

from quart_rate_limiter import QUART_RATE_LIMITER_EXEMPT_ATTRIBUTE, QUART_RATE_LIMITER_LIMITS_ATTRIBUTE

from tests.conftest import make_settings


def view_limits(app, rule):
    view = app.view_functions[rule.endpoint]
    blueprint = app.blueprints.get(rule.endpoint.rpartition(".")[0])
    own = getattr(view, QUART_RATE_LIMITER_LIMITS_ATTRIBUTE, [])
    inherited = getattr(blueprint, QUART_RATE_LIMITER_LIMITS_ATTRIBUTE, []) if blueprint else []
    return view, own + inherited


async def test_every_route_has_a_limit_and_api_routes_their_own(app):
    rules = list(app.url_map.iter_rules())
    assert len(rules) > 5
    unlimited, exempt = [], []
    for rule in rules:
        view, limits = view_limits(app, rule)
        if getattr(view, QUART_RATE_LIMITER_EXEMPT_ATTRIBUTE, False):
            exempt.append(rule.rule)
        if rule.rule.startswith("/api/") and not limits:
            unlimited.append(rule.rule)

    assert exempt == []
    assert unlimited == []


async def test_a_route_over_its_limit_answers_429_with_retry_after(database_url, tmp_path, clock):
    from adnet.app import create_app

    app = create_app(make_settings(database_url, tmp_path, ADNET_RATE_LIMIT_PUBLIC="3/60"), clock=clock)
    async with app.test_app() as test_app:
        client = test_app.test_client()
        statuses = [(await client.get("/healthz")).status_code for _ in range(3)]
        limited = await client.get("/healthz")
        other_ip = await client.get("/healthz", scope_base={"client": ("203.0.113.9", 4000)})

    assert statuses == [200, 200, 200]
    assert limited.status_code == 429
    body = await limited.get_json()
    assert body["error"] == "rate_limited" and body["retryAfter"] >= 1
    assert int(limited.headers["Retry-After"]) == body["retryAfter"]
    assert other_ip.status_code == 200


async def test_answers_say_what_is_left_of_the_limit_in_its_headers(database_url, tmp_path, clock, redis_url):
    """With Redis as without: the headers come from the step that admitted the request."""
    from adnet.app import create_app

    for extra in ({}, {"ADNET_REDIS_URL": redis_url}):
        app = create_app(make_settings(database_url, tmp_path, ADNET_RATE_LIMIT_PUBLIC="3/60", **extra), clock=clock)
        async with app.test_app() as test_app:
            client = test_app.test_client()
            address = {"client": (f"198.51.100.{len(extra) + 1}", 4000)}
            answers = [await client.get("/healthz", scope_base=address) for _ in range(4)]

        assert [answer.status_code for answer in answers] == [200, 200, 200, 429]
        assert [answer.headers["RateLimit-Limit"] for answer in answers] == ["3"] * 4
        assert [answer.headers["RateLimit-Remaining"] for answer in answers] == ["2", "1", "0", "0"]
        assert [int(answer.headers["RateLimit-Reset"]) for answer in answers] == [20, 40, 60, 60]


async def test_a_route_with_its_own_public_limit_counts_each_request_once(database_url, tmp_path, clock):
    from adnet.app import create_app

    app = create_app(make_settings(database_url, tmp_path, ADNET_RATE_LIMIT_PUBLIC="3/60"), clock=clock)
    async with app.test_app() as test_app:
        client = test_app.test_client()
        statuses = [(await client.get("/api/serve?siteId=site_unknown")).status_code for _ in range(4)]

    assert statuses == [404, 404, 404, 429]


async def test_the_limiter_reads_a_settings_limit_as_the_apps_configured_limit_made_once(
        database_url, tmp_path, clock):
    from datetime import timedelta

    from adnet.app import create_app
    from web.limits import ConfiguredRateLimit, OwnLimitsFirst

    app = create_app(make_settings(database_url, tmp_path, ADNET_RATE_LIMIT_PUBLIC="7/30"), clock=clock)
    [limiter] = [hook.__self__ for hook in app.before_request_funcs[None]
                 if isinstance(getattr(hook, "__self__", None), OwnLimitsFirst)]
    view, blueprint = app.view_functions["api_public.api_track.track"], app.blueprints["api_public.api_track"]
    async with app.app_context():
        first = limiter._get_limits_for_view_function(view, blueprint)
        again = limiter._get_limits_for_view_function(view, blueprint)

    assert [type(limit) for limit in first] == [ConfiguredRateLimit]
    assert (first[0].count, first[0].period, first[0].setting) == (7, timedelta(seconds=30), "rate_limit_public")
    assert again[0] is first[0]
