"""The portal: server-rendered pages under /portal for publishers, advertisers and operators, and the site's front
page."""

from quart import Blueprint

blueprint = Blueprint("portal", __name__)

from portal import home  # noqa: E402,F401

# isort: split
from portal import demo  # noqa: E402,F401

# isort: split
from portal import auth, balance, csrf, dashboard, pages, sites  # noqa: E402,F401

# isort: split
from portal import advertisers, operators  # noqa: E402,F401
