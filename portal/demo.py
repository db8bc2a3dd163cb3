"""The embed SDK on adnet's own origin: its versioned URL, cached for a year because a new version gets a new URL,
and ``/demo``, a publisher's page with one slot of every kind filled from the demo data (not in production)."""

from __future__ import annotations

from quart import Response, redirect, render_template, send_file, url_for
from quart_rate_limiter import rate_limit
from quart_schema import hide
from werkzeug.wrappers.response import Response as WerkzeugResponse

from adnet import demo as demo_data
from adnet.core.errors import NotFound
from adnet.delivery import sdk as embed
from api.http import app_settings
from api.ratelimit import settings_limit
from portal.pages import portal_blueprint

blueprint = portal_blueprint("demo")

SDK_CACHE_CONTROL = "public, max-age=31536000, immutable"


@blueprint.get("/sdk/<version>/sdk.js")
@rate_limit(limits=settings_limit("rate_limit_public"))
@hide
async def sdk(version: str) -> Response | WerkzeugResponse:
    """The SDK at its versioned URL; an older version's URL redirects to the current one (briefly cached)."""
    current = embed.sdk_version()
    if version != current:
        moved = redirect(url_for("portal_demo.sdk", version=current), 302)
        moved.headers["Cache-Control"] = "public, max-age=300"
        return moved
    response = await send_file(embed.sdk_path(), mimetype="text/javascript")
    response.headers["Cache-Control"] = SDK_CACHE_CONTROL
    return response


@blueprint.get("/demo")
@rate_limit(limits=settings_limit("rate_limit_public"))
@hide
async def demo() -> str:
    """A publisher's page with a slot of every kind, embedding the SDK as any site would (development only)."""
    if app_settings().production:
        raise NotFound.of("page")
    return await render_template("demo.html", demo=await demo_data.demo_summary(), sdk_version=embed.sdk_version())
