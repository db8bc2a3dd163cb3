"""The front page, what this adnet instance is and where to go next, and ``/docs``, the API reference: Swagger UI
(vendored in ``static/``, its version in its file names) reading ``/openapi.json``, under the same CSP as every
other page."""

from quart import render_template
from quart_schema import hide

from adnet.delivery import sdk as embed
from portal.pages import portal_blueprint
from web.context import app_settings

blueprint = portal_blueprint("home")


@blueprint.get("/")
@hide
async def home() -> str:
    """What adnet is, and the three ways in: publishers and advertisers to the portal, developers to the API
    reference, the demo page (outside production) and the embed script."""
    return await render_template("home.html", demo=not app_settings().production, sdk_version=embed.sdk_version())


@blueprint.get("/docs")
@hide
async def api_reference() -> str:
    """Every operation of the JSON API, rendered from the OpenAPI document in the browser."""
    return await render_template("docs.html")
