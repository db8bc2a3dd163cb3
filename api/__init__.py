"""The public JSON API under /api, and the operational /healthz.

Each module registers its routes on ``blueprint``; handlers validate, call one domain coroutine, and map its result.
"""

from quart import Blueprint

blueprint = Blueprint("api", __name__, url_prefix="/api")
ops_blueprint = Blueprint("ops", __name__)

from api import health  # noqa: E402,F401

# isort: split
from api import auth, publishers  # noqa: E402,F401

# isort: split
from api import serve, track  # noqa: E402,F401

# isort: split
from api import tasks  # noqa: E402,F401

# isort: split
from api import interactions  # noqa: E402,F401

# isort: split
from api import advertisers, operators  # noqa: E402,F401
