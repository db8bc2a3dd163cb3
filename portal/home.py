"""The front page: what this adnet instance is and where to go next."""

from quart import render_template
from quart_schema import hide

from portal.pages import portal_blueprint

blueprint = portal_blueprint("home")



@blueprint.get("/")
@hide
async def home() -> str:
    """The landing page with links to the portal, the API documentation and the health report."""
    return await render_template("home.html")
