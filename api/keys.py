"""API keys under /api/keys: issue one (its token shown once), list them, revoke one (rules in
adnet.accounts.api_keys).

These routes need the wallet's own session: an API key neither issues nor revokes keys (403 ``session_required``),
so a leaked key cannot make itself a wider or longer-lived one.
"""

from __future__ import annotations

from datetime import datetime

from quart import Blueprint, Response
from quart_rate_limiter import rate_limit
from quart_schema import document_response

from adnet.accounts import api_keys
from adnet.accounts.commands import ApiKeyScope, NewApiKey
from adnet.accounts.models import ApiKey
from adnet.services import Services
from api.http import answer, with_body
from api.schemas import Schema, Time, refusals
from api.sessions import require_session
from web.context import injected
from web.limits import ACCOUNT_LIMIT
from web.sessions import current_wallet

blueprint = Blueprint("api_keys", __name__, url_prefix="/api")


class ApiKeyOut(Schema):
    """A key as its wallet sees it: never its token. ``active`` is false once revoked."""

    key_id: str
    name: str
    scopes: list[ApiKeyScope]
    active: bool
    created_at: Time
    last_used_at: Time | None
    revoked_at: Time | None


class IssuedKeyOut(ApiKeyOut):
    """A key just issued and its ``token``, shown this once: send it as ``Authorization: Bearer <token>``."""

    token: str


class ApiKeysOut(Schema):
    keys: list[ApiKeyOut]


def api_key_out(key: ApiKey) -> ApiKeyOut:
    return ApiKeyOut(key_id=key.id, name=key.name, scopes=api_keys.scopes_of(key), active=key.revoked_at is None,
                     created_at=key.created_at, last_used_at=key.last_used_at, revoked_at=key.revoked_at)


@blueprint.post("/keys")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_session
@with_body(NewApiKey)
@document_response(IssuedKeyOut, 201)
@refusals(400)
async def issue_key(data: NewApiKey, run: Services, now: datetime) -> Response:
    """Issue an API key for the signed-in wallet with ``scopes`` (``reports:read``, ``sites:manage``,
    ``campaigns:manage``). The answer holds its token, which adnet keeps only as a hash and never shows again."""
    issued = await api_keys.issue_key(current_wallet(), data, now, run.random)
    body = IssuedKeyOut(**api_key_out(issued.key).model_dump(), token=issued.token)
    return answer(body, 201)


@blueprint.get("/keys")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_session
@document_response(ApiKeysOut)
async def list_keys() -> Response:
    """The signed-in wallet's API keys, revoked ones included, newest first."""
    return answer(ApiKeysOut(keys=[api_key_out(key) for key in await api_keys.wallet_keys(current_wallet())]))


@blueprint.post("/keys/<key_id>/revoke")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_session
@document_response(ApiKeyOut)
@refusals(404)
@injected
async def revoke_key(key_id: str, now: datetime) -> Response:
    """Revoke one of the signed-in wallet's keys: its next request is refused (401). Revoking it again answers it
    as it is."""
    return answer(api_key_out(await api_keys.revoke_key(current_wallet(), key_id, now)))
