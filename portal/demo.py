"""The embed SDK on adnet's own origin: its versioned URL, cached for a year because a new version gets a new URL,
and ``/demo``, a publisher's page with one slot of every kind filled from the demo data (not in production).

The SDK is open to every origin (``Access-Control-Allow-Origin: *``, and ``Cross-Origin-Resource-Policy:
cross-origin``), its redirect included: a publisher's page that loads it with Subresource Integrity
(``integrity`` and ``crossorigin="anonymous"``, docs/sdk.md) fetches it in CORS mode, which the browser refuses
without that header, leaving every slot empty. It carries no credentials and nothing private."""

from __future__ import annotations

from quart import Response, redirect, render_template, send_file, url_for
from quart_rate_limiter import rate_limit
from quart_schema import hide
from werkzeug.wrappers.response import Response as WerkzeugResponse

from adnet import demo as demo_data
from adnet.core.errors import NotFound
from adnet.delivery import sdk as embed
from portal.pages import portal_blueprint
from web.context import app_settings
from web.limits import settings_limit

blueprint = portal_blueprint("demo")

SDK_CACHE_CONTROL = "public, max-age=31536000, immutable"
OPEN_TO_EVERY_PAGE = {"Access-Control-Allow-Origin": "*", "Cross-Origin-Resource-Policy": "cross-origin"}


@blueprint.get("/sdk/<version>/sdk.js")
@rate_limit(limits=settings_limit("rate_limit_public"))
@hide
async def sdk(version: str) -> Response | WerkzeugResponse:
    """The SDK at its versioned URL; an older version's URL redirects to the current one (briefly cached). Both
    are open to every page, so a script tag with Subresource Integrity loads it."""
    current = embed.sdk_version()
    if version != current:
        moved = redirect(url_for("portal_demo.sdk", version=current), 302)
        moved.headers.update({"Cache-Control": "public, max-age=300", **OPEN_TO_EVERY_PAGE})
        return moved
    response = await send_file(embed.sdk_path(), mimetype="text/javascript")
    response.headers.update({"Cache-Control": SDK_CACHE_CONTROL, **OPEN_TO_EVERY_PAGE})
    return response


@blueprint.get("/demo")
@rate_limit(limits=settings_limit("rate_limit_public"))
@hide
async def demo() -> str:
    """A publisher's page with a slot of every kind, embedding the SDK as any site would (development only)."""
    if app_settings().production:
        raise NotFound.of("page")
    return await render_template("demo.html", demo=await demo_data.demo_summary(), sdk_version=embed.sdk_version())
