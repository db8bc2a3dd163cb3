"""``/rewards``: adnet's own page where a viewer's wallet lists and redeems its rewards, for a viewer whose
publisher's page offers no "My rewards" panel. It is the embed's panel (``static/sdk.js``, docs/rewards.md) on
adnet's origin: the wallet signs in for rewards there, and nothing of the page needs a portal session."""

from __future__ import annotations

from quart import render_template
from quart_rate_limiter import rate_limit
from quart_schema import hide

from adnet.delivery import sdk as embed
from portal.pages import portal_blueprint
from web.limits import settings_limit

blueprint = portal_blueprint("rewards")


@blueprint.get("/rewards")
@rate_limit(limits=settings_limit("rate_limit_public"))
@hide
async def rewards_page() -> str:
    """The rewards panel of the embed, with what points are and how redeeming works."""
    return await render_template("rewards.html", sdk_version=embed.sdk_version())
