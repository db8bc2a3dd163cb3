"""What every portal page shares: its blueprint (``portal_blueprint``, whose refusals are HTML pages), full page or
fragment, the 303 after a POST, the sign-in gate, and the template filters and layout values.

A page template includes its fragments; a handler renders the fragment alone when htmx asks for one (an
``HX-Request`` that is not a boosted navigation), the whole page otherwise, so every URL works without JavaScript.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable, Mapping
from datetime import UTC, datetime
from decimal import Decimal
from functools import wraps
from typing import Any, TypeVar, cast
from urllib.parse import quote

from quart import Blueprint, Response, g, redirect, render_template, request, url_for
from quart_rate_limiter import rate_limit
from quart_schema import hide

from adnet.campaigns.banners import banner_address
from adnet.campaigns.models import Category
from adnet.core.amounts import to_decimal_string
from adnet.core.errors import DomainError
from adnet.core.wallets import checksummed
from adnet.tasks.models import TaskKind
from portal.csrf import csrf_token, require_csrf
from web.context import app_settings
from web.errors import status_of
from web.idempotency import checked_idempotency_key
from web.labels import label
from web.limits import ACCOUNT_LIMIT
from web.sessions import request_session

F = TypeVar("F", bound=Callable[..., Awaitable[Any]])


def portal_blueprint(name: str) -> Blueprint:
    """The blueprint of one part of the portal, whose refusals are HTML pages (``error_page``)."""
    part = Blueprint(f"portal_{name}", __name__)
    part.register_error_handler(DomainError, error_page)
    return part


def wants_fragment() -> bool:
    """Whether htmx asked for a fragment (not a boosted page load, which swaps the whole body, nor the restore of a
    page in the history that htmx no longer holds, which wants the whole page too)."""
    headers = request.headers
    return (headers.get("HX-Request") == "true" and headers.get("HX-Boosted") != "true"
            and headers.get("HX-History-Restore-Request") != "true")


async def page(full: str, fragment: str, status: int = 200, **context: Any) -> tuple[str, int]:
    """Render ``fragment`` for htmx, ``full`` (which includes it) otherwise."""
    return await render_template(fragment if wants_fragment() else full, **context), status


async def part_of_page(fragment: str, full: str, full_context: Callable[[], Awaitable[dict[str, Any]]],
                       status: int = 200, **context: Any) -> tuple[str, int]:
    """A part of a page that htmx reloads on its own (a balance, a status): ``fragment`` for htmx; opened directly,
    the whole page ``full`` it belongs to (``full_context``, with ``context`` over it), so that every portal URL
    answers a document with its title and language."""
    if wants_fragment():
        return await render_template(fragment, **context), status
    return await render_template(full, **{**(await full_context()), **context}), status


async def form_error(fragment: str, target: str, error: DomainError, full: str,
                     full_context: Callable[[], Awaitable[dict[str, Any]]], **context: Any) -> Response:
    """A refused form shown again with its error beside the field, with the error's status: for htmx,
    ``fragment`` replaces the form (``target``; ``static/portal.js`` has htmx swap refusals); without JavaScript,
    the whole page ``full``."""
    if wants_fragment():
        response = Response(await render_template(fragment, error=error, **context), status_of(error))
        response.headers["HX-Retarget"] = target
        response.headers["HX-Reswap"] = "outerHTML"
        return response
    body = await render_template(full, **{**(await full_context()), **context, "error": error})
    return Response(body, status_of(error))


def see_other(location: str) -> Response:
    """The 303 that ends a form POST: the browser then GETs ``location``."""
    return cast(Response, redirect(location, 303))


def safe_next(target: Any) -> str:
    """A post-sign-in destination: a path inside the portal, never another site (``//host`` or a scheme)."""
    if isinstance(target, str) and target.startswith("/portal") and "//" not in target and "\\" not in target:
        return target
    return url_for("portal_dashboard.dashboard")


def require_portal_session(handler: F) -> F:
    """Route decorator for portal pages: without a valid session, send the browser to sign in (an htmx request
    gets ``HX-Redirect``, so the whole page goes); with one, leave it in ``g.session``."""

    @wraps(handler)
    async def guarded(*args: Any, **kwargs: Any) -> Any:
        session = await request_session()
        if session is None:
            destination = f"{url_for('portal_auth.signin_page')}?next={quote(request.full_path.rstrip('?'), safe='/')}"
            if request.headers.get("HX-Request") == "true":
                return Response("", 204, headers={"HX-Redirect": destination})
            return see_other(destination)
        g.session = session
        return await handler(*args, **kwargs)

    return cast(F, guarded)


def account_page(handler: F) -> F:
    """Route decorator for a signed-in page: the account rate limit, a session (``require_portal_session``), and
    out of the OpenAPI document, which describes the JSON API only."""
    return cast(F, rate_limit(limits=ACCOUNT_LIMIT)(hide(require_portal_session(handler))))


def account_form(handler: F) -> F:
    """Route decorator for a signed-in form POST: ``account_page`` and the CSRF token of the browser that loaded
    the form (``require_csrf``)."""
    return account_page(require_csrf(handler))


async def error_page(error: DomainError) -> tuple[str, int]:
    """A refusal on a portal URL as an HTML page (a fragment for htmx) naming what went wrong."""
    status = status_of(error)
    return await page("portal/error.html", "portal/_error.html", status, error=error, http_status=status)


async def http_error_page(status: int, code: str, message: str) -> Response | None:
    """An error raised around the portal's handlers (an unknown portal URL, a method a page lacks, a rate limit,
    a fault) as the same HTML page, for a path under /portal; None elsewhere, where errors are JSON
    (``api.errors.register``)."""
    if request.path != "/portal" and not request.path.startswith("/portal/"):
        return None
    body, _ = await page("portal/error.html", "portal/_error.html", status, error=DomainError(code, message),
                         http_status=status)
    return Response(body, status, mimetype="text/html")


# The filters and layout values every page's templates use.
blueprint = portal_blueprint("pages")


@blueprint.app_template_filter("money")
def money_filter(amount: int) -> str:
    """An integer amount in the smallest unit as an exact decimal string."""
    return to_decimal_string(int(amount))


@blueprint.app_template_filter("address")
def address_filter(address: str) -> str:
    """An address, held lower-case, in its EIP-55 form: how every page and answer writes it."""
    return checksummed(address)


@blueprint.app_template_filter("percent")
def percent_filter(ratio: float | None, digits: int = 2) -> str:
    """A ratio as a percentage, or an en dash when there is none."""
    return "\u2013" if ratio is None else f"{ratio * 100:.{digits}f} %"


@blueprint.app_template_filter("ratio_percent")
def ratio_percent_filter(ratio: str | None) -> str:
    """A ratio of ``adnet.reporting.outcomes`` (a decimal string; None over nothing) as a percentage, or an en dash."""
    return "\u2013" if ratio is None else f"{Decimal(ratio) * 100:.2f} %"


@blueprint.app_template_filter("times")
def times_filter(ratio: str | None) -> str:
    """A ratio of ``adnet.reporting.outcomes`` as a multiple (a ROAS of 2.5: ``2.50`` and a multiplication sign), or
    an en dash."""
    return "\u2013" if ratio is None else f"{Decimal(ratio):.2f}\u00d7"


@blueprint.app_template_filter("banner_address")
def banner_address_filter(stored: str) -> str:
    """A creative's banner as an absolute address (``adnet.campaigns.banners.banner_address``), for a form's URL
    field; an image on a page may use the stored address as it is."""
    return banner_address(stored, app_settings().public_url)


@blueprint.app_template_filter("label")
def label_filter(value: object) -> str:
    """A category, task kind, media or proof method as people read it (``web.labels``)."""
    return label(value)


@blueprint.app_template_filter("utc")
def utc_filter(moment: datetime | int) -> str:
    """An instant (or Unix seconds) as ``YYYY-MM-DD HH:MM UTC``."""
    if isinstance(moment, int):
        moment = datetime.fromtimestamp(moment, UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


@blueprint.app_context_processor
def layout_context() -> dict[str, Any]:
    """What every page's layout uses: the CSRF token of its forms, a new idempotency key for a form that makes a
    withdrawal, whether to link the operators' page, and the fixed lists of campaign categories and task kinds (the
    campaign form, the review queue and a site's controls offer them)."""
    return {"csrf_token": csrf_token, "new_idempotency_key": new_idempotency_key, "is_operator": is_operator,
            "categories": tuple(Category), "task_kinds": tuple(TaskKind)}


# The hidden field of a withdrawal form: a key drawn each time the form is rendered, so a double submit or a retry
# of one rendering makes one withdrawal (``adnet.money.withdrawals``, as the API's ``Idempotency-Key``).
IDEMPOTENCY_FIELD = "idempotency_key"


def new_idempotency_key() -> str:
    return str(uuid.uuid4())


def form_idempotency_key(form: Mapping[str, str]) -> str | None:
    """The form's idempotency key (None for a form without one); Invalid ``invalid_idempotency_key`` when it is
    malformed."""
    return checked_idempotency_key(form.get(IDEMPOTENCY_FIELD) or None, field=IDEMPOTENCY_FIELD)


def is_operator() -> bool:
    """Whether the page's signed-in wallet is an operator (the layout's link to the operators' page)."""
    session = g.get("session")
    return session is not None and session.wallet in app_settings().operators
